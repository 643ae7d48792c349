"""`paperdex migrate --to milvus://…`: a store copied with its vectors, resumably."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from paperdex.backends import parse_uri
from paperdex.backends.migrate import checkpoint_key, migrate_store
from paperdex.backends.milvus import MilvusBackend
from paperdex.cli import cli
from paperdex.store import Store, StoreError


def test_uris():
    assert parse_uri("milvus:///tmp/x.db") == ("milvus", "/tmp/x.db", {})
    assert parse_uri("milvus://http://db:19530?collection=arxiv") == (
        "milvus",
        "http://db:19530",
        {"collection": "arxiv"},
    )
    assert parse_uri("http://db:19530")[0] == "milvus"
    # host:port is a server (it used to name a Lite file "127.0.0.1:19530" in the working directory)
    assert parse_uri("milvus://127.0.0.1:19530?collection=a") == (
        "milvus",
        "http://127.0.0.1:19530",
        {"collection": "a"},
    )
    assert parse_uri("milvus://milvus.internal:19530")[1] == "http://milvus.internal:19530"
    assert parse_uri("milvus://[::1]:19530")[1] == "http://[::1]:19530"
    assert parse_uri("milvus://papers.db") == ("milvus", "papers.db", {})
    assert parse_uri("/data/papers") == ("embedded", "/data/papers", {})


def test_migrate_to_milvus_resumes_and_keeps_vectors(built_store_dir, tmp_path):
    d = tmp_path / "store"
    shutil.copytree(built_store_dir, d)
    db = tmp_path / "m.db"
    with Store(d) as s:
        n, nv = s.count(), s.vector_count()
        # an interrupted copy: the first 100 papers, checkpointed in the target
        with MilvusBackend(db) as mv:
            got = migrate_store(s, mv, batch_size=40, limit=100)
            assert got.copied == 100 and mv.count() == 100
            assert int(mv.get_state(checkpoint_key(s))) == got.last_rowid
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{db}", "--batch-size", "50"])
    assert r.exit_code == 0, r.output
    assert f"copied {n - 100} papers" in r.output and "100 were there from an earlier run" in r.output
    with Store(d) as s, MilvusBackend(db) as mv:
        assert mv.count() == n and mv.vector_count() == nv and mv.model == s.model
        p = s.get("2505.13738")
        assert mv.get("2505.13738") == p
        assert mv.pk("2505.13738") == s.rowid("2505.13738")  # rowids kept: ties break alike
    # nothing new: a second run copies nothing
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{db}"])
    assert r.exit_code == 0 and "copied 0 papers" in r.output


def test_migrate_to_refuses_other_targets(built_store_dir, tmp_path):
    d = tmp_path / "store"
    shutil.copytree(built_store_dir, d)
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", str(tmp_path / "other")])
    assert r.exit_code == 1 and "milvus://" in r.output


def _legacy_collection(db, papers) -> None:
    """A collection as paperdex made it before the lexical snapshot: with a `lex` field (and
    its BM25 text) that this version neither writes nor reads."""
    from pymilvus import DataType, MilvusClient

    from paperdex.backends.milvus import _row

    c = MilvusClient(str(db))
    s = c.create_schema()
    s.add_field("pk", DataType.INT64, is_primary=True)
    for name in ("id", "doi", "doc", "lex", "venue_lc", "area_lc", "content_hash", "text_hash", "updated"):
        s.add_field(name, DataType.VARCHAR, max_length=65535)
    s.add_field("dense", DataType.FLOAT_VECTOR, dim=384)
    s.add_field("has_vec", DataType.BOOL)
    s.add_field("date", DataType.INT64)
    ip = c.prepare_index_params()
    ip.add_index("dense", index_type="FLAT", metric_type="IP")
    c.create_collection("papers", schema=s, index_params=ip, consistency_level="Strong")
    c.insert("papers", [{**_row(pk, p, None, 384), "lex": " old "} for pk, p in papers])
    c.close()


def test_a_collection_of_an_older_version_is_refused_and_remade_by_restart(built_store_dir, tmp_path):
    d = tmp_path / "store"
    shutil.copytree(built_store_dir, d)
    db = tmp_path / "old.db"
    with Store(d) as s:
        n = s.count()
        _legacy_collection(db, [(r, p) for r, p, _ in s.papers_after(0, 20)])
    with pytest.raises(StoreError, match="made by an older paperdex; `paperdex migrate --to URI --restart`"):
        MilvusBackend(db)
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{db}"])
    assert r.exit_code == 1 and "--restart" in r.output
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{db}", "--restart"])
    assert r.exit_code == 0, r.output
    with MilvusBackend(db) as mv:
        assert mv.count() == n and mv.search("diffusion", mode="lexical").total > 0


def test_a_later_migrate_publishes_edits_deletions_and_new_vectors(built_store_dir, tmp_path):
    """The cron job's one command after a sync: papers changed in the store since they were
    copied (a new abstract, a vector added by `embed`) are written again, papers the store
    deleted are deleted, and what did not change is left alone."""
    from dataclasses import replace

    d = tmp_path / "store"
    shutil.copytree(built_store_dir, d)
    db = tmp_path / "m.db"
    uri = f"milvus://{db}"
    assert CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", uri]).exit_code == 0
    with Store(d) as s:
        n = s.count()
        edited = replace(s.get("2505.13738"), abstract="A rewritten abstract about zebrafish swimming.")
        s.upsert([edited])  # its text changed: its old vector no longer counts
        gone = next(p.id for p in s.iter_papers() if p.id != edited.id)
        assert s.delete(gone)
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", uri])
    assert r.exit_code == 0, r.output
    assert "copied 0 papers" in r.output and "1 of them written again" in r.output and "1 deleted" in r.output
    with Store(d) as s, MilvusBackend(db) as mv:
        assert mv.count() == n - 1 and mv.get(gone) is None
        assert mv.get("2505.13738") == s.get("2505.13738")
        assert mv.vector_count() == s.vector_count()  # the edited paper lost its vector on both sides
        assert mv.search("zebrafish swimming", mode="lexical").hits[0].paper.id == "2505.13738"
    # nothing changed since: nothing is written again
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", uri])
    assert r.exit_code == 0 and "0 of them written again" in r.output and "0 deleted" in r.output


def test_the_default_pairs_768_dimensions_reach_milvus_and_rank_alike(tmp_path):
    """A store embedded with the default model (two models side by side, 768 dimensions)
    copies into a new collection of its size, and its dense and hybrid answers are the
    embedded store's; a collection of another size refuses the vectors and says why."""
    import json

    from paperdex.index.embed import DEFAULT_MODEL, embed_store
    from paperdex.ingest import ingest_file
    from tests.conftest import PAPERS

    d = tmp_path / "store"
    lines = PAPERS.read_text().splitlines()[:40]
    (tmp_path / "some.jsonl").write_text("\n".join(lines) + "\n")
    with Store(d) as s:
        ingest_file(s, tmp_path / "some.jsonl")
        assert embed_store(s) == 40 and s.model == DEFAULT_MODEL and s.vector_dim() == 768
    db = tmp_path / "m.db"
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{db}"])
    assert r.exit_code == 0, r.output
    with MilvusBackend(db) as mv:
        assert mv.dim == 768 and mv.vector_count() == 40 and mv.model == DEFAULT_MODEL
    for mode in ("dense", "hybrid"):
        args = ["search", "--json", "--mode", mode, "-n", "10", "how do robots learn to grasp objects"]
        here = CliRunner().invoke(cli, ["--data-dir", str(d), *args])
        there = CliRunner().invoke(cli, ["--data-dir", str(d), "--backend", f"milvus://{db}", *args])
        assert here.exit_code == 0 == there.exit_code, here.output + there.output
        ids = [[h["id"] for h in json.loads(r.output)["hits"]] for r in (here, there)]
        assert ids[0] == ids[1], mode
    small = tmp_path / "small.db"
    MilvusBackend(small, dim=384).close()  # a collection made for 384-dimension vectors
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{small}"])
    assert r.exit_code == 1 and "768 dimensions for a collection of 384" in r.output
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{small}", "--restart"])
    assert r.exit_code == 0, r.output
    with MilvusBackend(small) as mv:
        assert mv.dim == 768 and mv.vector_count() == 40


def test_a_collection_made_before_the_first_embed_takes_the_default_models_vectors(tmp_path):
    """`migrate --to` before any vector is made: the collection is made for the vectors
    `embed` will make (the default pair's 768 dimensions), so the cron's `sync && embed &&
    migrate` keeps working after the first embed."""
    from paperdex.index.embed import DEFAULT_MODEL
    from paperdex.ingest import import_vectors, ingest_file
    from tests.conftest import DATA, PAPERS

    d, db = tmp_path / "store", tmp_path / "m.db"
    with Store(d) as s:
        ingest_file(s, PAPERS)
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{db}"])
    assert r.exit_code == 0 and "0 with vectors" in r.output, r.output
    with MilvusBackend(db) as mv:
        assert mv.dim == 768
    import numpy as np

    m = np.load(DATA / "papers.minilm.f16.npy").astype(np.float32)
    vecs = np.hstack([m, m])  # the pair's size; the values do not matter here
    with Store(d) as s:
        import_vectors(s, vecs, DATA / "papers.ids.txt", DEFAULT_MODEL)
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate", "--to", f"milvus://{db}"])
    assert r.exit_code == 0, r.output
    with Store(d) as s, MilvusBackend(db) as mv:
        assert mv.vector_count() == s.vector_count() > 0


def test_a_merge_ingested_into_the_store_reaches_the_copy_with_its_old_ids(tmp_path):
    """`paperdex ingest` of two records that merge (an OpenReview record and a `doi:` record of
    one paper, then its arXiv preprint), then `migrate --to`: `search id:OLD` and the pasted DOI
    that only the `doi:` record carried found nothing with --backend, on the embedded store the
    paper; the copy now holds the store's aliases, and both answer alike."""
    import json

    from fastapi.testclient import TestClient

    from paperdex.settings import Settings
    from paperdex.web.app import create_app
    from tests.sources.test_merge import arxiv_rec, venue_rec

    old, doi, new = "openreview:Xy12", "doi:10.1000/abc999", "2501.00001"
    first, second = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    doi_rec = venue_rec(id=doi, sources=["file"], extra={}, venue=None, venue_area=None)
    first.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in (venue_rec(), doi_rec)))
    second.write_text(json.dumps(arxiv_rec().to_dict()) + "\n")
    d, uri = tmp_path / "data", f"milvus://{tmp_path / 'm.db'}"

    def run(*args: str) -> str:
        r = CliRunner().invoke(cli, ["--data-dir", str(d), *args], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return r.stdout

    run("ingest", "-q", str(first))
    run("migrate", "--to", uri)
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "--backend", uri, "ingest", "-q", str(second)])
    assert r.exit_code == 0 and "merged 1" in r.stdout  # written to the store; the copy says it lags:
    assert f"find these after `paperdex migrate --to {uri}`" in r.stderr
    # served from the copy before it is refreshed: the paper's page, from the store (was a 404)
    app = create_app(d, pool_size=1, settings=Settings.from_env(data_dir=d, backend=uri))
    page = TestClient(app, base_url="http://localhost").get(f"/paper/{old}")
    assert page.status_code == 200 and "Scaling Laws for" in page.text
    del app, page
    assert "aliases (ids that merges moved) brought up to date: 2" in run("migrate", "--to", uri)
    for q in (f"id:{old}", f"id:{doi}", doi, "10.1000/ABC999", "sparse attention"):
        hits = [
            json.loads(run(*b, "search", "--json", "--mode", "lexical", q))["hits"] for b in ([], ["--backend", uri])
        ]
        assert [h["id"] for h in hits[0]] == [h["id"] for h in hits[1]] == [new], q
    with MilvusBackend(tmp_path / "m.db") as mv, Store(d) as s:
        assert mv.aliases() == s.aliases() == {old: new, doi: new}


def test_a_later_migrate_brings_a_copy_made_before_every_doi_counted_up_to_it(tmp_path):
    """A collection copied before 4a0baca held a paper's `doi` field only (a BibTeX entry's DOI,
    extra.bibtex.doi, not at all): the pasted DOI found nothing with --backend, and `migrate
    --to` wrote only changed papers again, so only `--restart` mended it. Now a paper whose DOIs
    differ from the store's is written again by the next copy."""
    import json

    from paperdex.backends.milvus import _row

    rec = {"id": "bib:cvpr", "title": "Okapi study", "abstract": "Okapis.", "published": "2025-01-01"}
    rec["extra"] = {"bibtex": {"key": "cvpr", "doi": "10.1109/CVPR.2026.00001"}}
    (tmp_path / "a.jsonl").write_text(json.dumps(rec) + "\n")
    d, db = tmp_path / "data", tmp_path / "m.db"

    def run(*args: str) -> str:
        r = CliRunner().invoke(cli, ["--data-dir", str(d), *args], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return r.stdout

    run("ingest", "-q", str(tmp_path / "a.jsonl"))
    run("migrate", "--to", f"milvus://{db}")
    with MilvusBackend(db) as mv:  # the row as the older paperdex wrote it: no doi field, no DOI
        mv.client.upsert(mv.col, [_row(mv.pk("bib:cvpr"), mv.get("bib:cvpr"), None, mv.dim) | {"doi": ""}])
        mv.publish()
    search = ["search", "--json", "10.1109/cvpr.2026.00001"]
    assert json.loads(run("--backend", f"milvus://{db}", *search))["hits"] == []
    assert "1 of them written again" in run("migrate", "--to", f"milvus://{db}")
    assert [h["id"] for h in json.loads(run("--backend", f"milvus://{db}", *search))["hits"]] == ["bib:cvpr"]
    assert "0 of them written again" in run("migrate", "--to", f"milvus://{db}")

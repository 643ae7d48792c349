import json
import sqlite3

import numpy as np
import pytest

from paperdex.index.publish import publish
from paperdex.index.vectors import unit
from paperdex.ingest import import_vectors, ingest_file
from paperdex.paper import Paper, index_text
from paperdex.search import Searcher
from paperdex.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError, quantize
from tests.conftest import DATA, PAPERS


def test_reingest_changes_nothing(store):
    before = store.count()
    s = ingest_file(store, PAPERS)
    assert (s.added, s.updated, s.unchanged, s.rejected) == (0, 0, before, 0)
    assert store.count() == before


def test_upsert_replaces_changed_record_and_reindexes(store):
    p = store.get("2506.14562")
    p.title = "A completely different title about quokkas"
    s = store.upsert([p])
    publish(store)
    assert (s.added, s.updated) == (0, 1)
    assert store.get("2506.14562").title.endswith("quokkas")
    sr = Searcher(store)
    assert [h.paper.id for h in sr.search("quokkas", mode="lexical").hits] == ["2506.14562"]
    # the old title is no longer indexed
    assert "2506.14562" not in [h.paper.id for h in sr.search('ti:"AlphaDecay"', mode="lexical").hits]


def test_text_change_drops_stale_vector_but_metadata_change_keeps_it(store):
    rowid = store.rowid("2505.13738")
    p = store.get("2505.13738")
    p.comment = "Accepted at NeurIPS 2025"
    store.upsert([p])
    assert store.conn.execute("SELECT count(*) FROM vectors WHERE paper = ?", (rowid,)).fetchone()[0] == 1
    p.abstract += " New sentence."
    store.upsert([p])
    assert store.conn.execute("SELECT count(*) FROM vectors WHERE paper = ?", (rowid,)).fetchone()[0] == 0


def test_older_record_does_not_overwrite_newer(empty_store):
    new = Paper(id="2501.00001", title="v2 title", updated="2025-03-01")
    old = Paper(id="2501.00001", title="v1 title", updated="2025-01-01")
    empty_store.upsert([new])
    s = empty_store.upsert([old])
    assert s.unchanged == 1
    assert empty_store.get("2501.00001").title == "v2 title"


def test_malformed_lines_are_reported_and_skipped(empty_store, tmp_path):
    good = json.loads(PAPERS.read_text().splitlines()[0])
    f = tmp_path / "mixed.jsonl"
    f.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps({"id": "2501.99999"}),  # no title
                json.dumps({**good, "id": "2501.88888", "authors": "x", "listed": "June"}),
                json.dumps([1, 2]),
                json.dumps({**good, "id": "2501.77777"}),
            ]
        )
        + "\n"
    )
    s = ingest_file(empty_store, f)
    assert (s.added, s.rejected) == (2, 4)
    assert s.errors[0].startswith(f"{f}:2: invalid JSON")
    assert s.errors[1] == f"{f}:3: missing or empty 'title'"
    assert s.errors[2] == f"{f}:4: 'listed' must be a date YYYY-MM-DD, got 'June'"
    assert s.errors[3] == f"{f}:5: expected a JSON object, got a list"
    assert empty_store.count() == 2


def test_json_array_and_gzip(empty_store, tmp_path):
    import gzip

    recs = [json.loads(line) for line in PAPERS.read_text().splitlines()[:5]]
    (tmp_path / "a.json").write_text(json.dumps(recs))
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        f.write("\n".join(json.dumps(r) for r in recs[3:]))
    assert ingest_file(empty_store, tmp_path / "a.json").added == 5
    s = ingest_file(empty_store, tmp_path / "b.jsonl.gz")
    assert (s.added, s.unchanged) == (0, 2)


def test_text_kept_as_given_and_normalised_only_for_index(empty_store):
    p = Paper(id="x1", title=r"$\beta$-VAE with \textbf{bold} ideas", abstract="We use **markdown**.")
    empty_store.upsert([p])
    assert empty_store.get("x1").title == r"$\beta$-VAE with \textbf{bold} ideas"
    assert index_text(p.title) == "beta -VAE with bold ideas"
    hits = Searcher(empty_store).search("beta bold markdown", mode="lexical").hits
    assert [h.paper.id for h in hits] == ["x1"]


def test_vector_import_is_aligned_by_id(empty_store, tmp_path):
    ingest_file(empty_store, PAPERS)
    ids = (DATA / "papers.ids.txt").read_text().split()
    vecs = np.load(DATA / "papers.minilm.f16.npy")
    # shuffle rows and ids together, add an id the store does not have
    order = np.random.default_rng(0).permutation(len(ids))
    (tmp_path / "ids.txt").write_text("\n".join([ids[i] for i in order] + ["9999.99999"]) + "\n")
    np.save(tmp_path / "v.npy", np.concatenate([vecs[order], vecs[:1]]))
    n = import_vectors(empty_store, tmp_path / "v.npy", tmp_path / "ids.txt", "all-MiniLM-L6-v2")
    assert n == len(ids)
    rowid = empty_store.rowid(ids[5])
    blob = empty_store.conn.execute("SELECT vec FROM vectors WHERE paper = ?", (rowid,)).fetchone()[0]
    got = unit(empty_store.vectors_from_blobs([blob])[0])
    want = vecs[5].astype(np.float32)
    assert float(got @ want / np.linalg.norm(want)) > 0.999


def test_vector_import_refuses_misaligned_files(empty_store, tmp_path):
    ingest_file(empty_store, PAPERS)
    np.save(tmp_path / "v.npy", np.zeros((3, 384), dtype=np.float16) + 1)
    (tmp_path / "ids.txt").write_text("a\nb\n")
    with pytest.raises(StoreError, match="aligned"):
        import_vectors(empty_store, tmp_path / "v.npy", tmp_path / "ids.txt", "all-MiniLM-L6-v2")


def test_refuses_to_mix_models(store):
    with pytest.raises(StoreError, match="refusing to mix"):
        store.add_vectors("multilingual-e5-small", [(1, "h", np.ones(384, dtype=np.float32))])


def test_migrates_from_version_1(tmp_path):
    """A store written by the first schema (no exact-phrase index) opens, migrates, and
    answers exact phrase queries."""
    path = tmp_path / "old"
    path.mkdir()
    conn = sqlite3.connect(path / "paperdex.db")
    from paperdex.store import _split_sql

    for stmt in _split_sql(MIGRATIONS[0]):
        conn.execute(stmt)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    # a paper as the version-1 code wrote it: its row, no exact-phrase index
    p = Paper(id="a1", title="Decaying weights", abstract="weight decay is studied here")
    conn = sqlite3.connect(path / "paperdex.db")
    conn.execute(
        "INSERT INTO papers (id, title, authors, abstract, categories, sources, extra, content_hash, text_hash) "
        "VALUES (?, ?, '[]', ?, '[]', '[]', '{}', ?, ?)",
        (p.id, p.title, p.abstract, p.content_hash(), p.text_hash()),
    )
    conn.commit()
    conn.close()

    with Store(path) as migrated:
        assert migrated.schema_version() == SCHEMA_VERSION
        hits = Searcher(migrated).search('"weight decay"', mode="lexical").hits
        assert [h.paper.id for h in hits] == ["a1"]
        # exact means unstemmed: "weights decayed" is not the phrase "weight decay"
        assert Searcher(migrated).search('"decaying weight"', mode="lexical").hits == []


def test_refuses_newer_schema(tmp_path):
    Store(tmp_path / "s").close()
    conn = sqlite3.connect(tmp_path / "s" / "paperdex.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="Upgrade paperdex"):
        Store(tmp_path / "s")


def test_readers_see_whole_batches_only(store):
    """A reader on another connection sees the store before or after a batch, never half."""
    reader = sqlite3.connect(store.path)
    n0 = reader.execute("SELECT count(*) FROM papers").fetchone()[0]
    batch = [Paper(id=f"new{i}", title=f"paper {i}") for i in range(50)]

    seen = []

    def spy(it):
        for i, p in enumerate(it):
            if i == 25:
                seen.append(reader.execute("SELECT count(*) FROM papers").fetchone()[0])
            yield p

    store.upsert(spy(batch))
    assert seen == [n0]
    assert reader.execute("SELECT count(*) FROM papers").fetchone()[0] == n0 + 50


def test_duplicate_ids_in_one_file_count_once(empty_store, tmp_path):
    line = PAPERS.read_text().splitlines()[0]
    rec = json.loads(line)
    f = tmp_path / "dup.jsonl"
    f.write_text(line + "\n" + line + "\n" + json.dumps({**rec, "title": "Retitled"}) + "\n")
    s = ingest_file(empty_store, f)
    assert (s.added, s.updated, s.unchanged) == (1, 1, 1)
    assert empty_store.get(rec["id"]).title == "Retitled"


def test_float16_vectors_of_version_4_are_refused_by_a_reader_and_migrated_to_int8(built_store_dir, tmp_path):
    """A store whose vectors were written as float16 (schema 4) is refused by a reader, which
    names the command, and keeps every vector's direction through `migrate` (int8, half the bytes)."""
    import shutil

    d = tmp_path / "v4"
    shutil.copytree(built_store_dir, d)
    with Store(d) as s:
        keys, now = s.load_vectors()
    f16 = unit(now).astype(np.float16)  # what version 4 stored for these papers
    conn = sqlite3.connect(d / "paperdex.db")
    rows = [(v.tobytes(), int(k)) for k, v in zip(keys, f16, strict=True)]
    conn.executemany("UPDATE vectors SET vec = ? WHERE paper = ?", rows)
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.execute("VACUUM")
    pages = "SELECT sum(pgsize) FROM dbstat WHERE name = 'vectors'"
    f16_bytes = conn.execute(pages).fetchone()[0]
    conn.close()
    with pytest.raises(StoreError, match="schema version 4, older than this paperdex reads; run `paperdex migrate`"):
        Store(d, readonly=True)
    with Store(d) as w:  # a writer migrates
        assert w.schema_version() == SCHEMA_VERSION
        k5, v5 = w.load_vectors()
        blob = w.conn.execute("SELECT vec FROM vectors LIMIT 1").fetchone()[0]
        int8_bytes = w.conn.execute(pages).fetchone()[0]
    assert len(blob) == now.shape[1]  # one byte a dimension
    assert int8_bytes < 0.6 * f16_bytes  # and the file gives the rest back
    assert np.array_equal(k5, keys) and np.array_equal(v5, quantize(f16))
    cos = np.sum(unit(v5) * unit(f16), axis=1)
    assert cos.min() > 0.999

"""A merge that moves a paper to another id (an OpenReview, bib: or doi: record joined by its
arXiv record) keeps the old id working: the library follows the paper, and every look-up of
the old id (show, /paper/ID, the API, `id:`, a tag import) finds it (Store.resolve)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from fastapi.testclient import TestClient

from paperdex.cli import cli
from paperdex.discover import library as L
from paperdex.search import Searcher
from paperdex.sources.merge import ingest_with_merge
from paperdex.web.app import create_app
from tests.sources.test_merge import arxiv_rec, venue_rec

OLD, NEW = "openreview:Xy12", "2501.00001"


def _moved(store):
    """The venue record, saved and dismissed by the user, then joined by its arXiv preprint."""
    ingest_with_merge(store, [venue_rec()])
    L.add_to_tag(store, "attention", [OLD])
    L.dismiss(store, [OLD])
    store.put_summary(OLD, "en", "m", "h", {"tldr": "x"})
    s = ingest_with_merge(store, [arxiv_rec()])
    assert (s.added, s.updated, s.merged) == (0, 1, 1) and store.count() == 1


def test_the_library_follows_a_paper_to_its_new_id(store):
    _moved(store)
    assert L.tag_papers(store, "attention") == [NEW]  # was [OLD]: "(not in this store)"
    assert L.tags_of(store, NEW) == ["attention"]
    assert L.dismissed(store) == [NEW]
    assert L.export_json(store)["tags"][0]["papers"] == [NEW]
    assert store.conn.execute("SELECT paper FROM summaries").fetchall()[0][0] == NEW
    assert L.undismiss(store, [OLD]) == 1  # the old id names it to take a mark back too
    assert L.add_to_tag(store, "attention", [OLD]) == 0  # the same paper: already in it
    assert L.remove_from_tag(store, "attention", [OLD]) == 1


def test_the_old_id_is_found_wherever_an_id_is_looked_up(store):
    _moved(store)
    assert store.get(OLD).id == NEW and store.rowid(OLD) == store.rowid(NEW)
    assert [h.paper.id for h in Searcher(store).search(f"id:{OLD}", mode="lexical").hits] == [NEW]
    store.close()
    r = CliRunner().invoke(cli, ["--data-dir", str(store.data_dir), "show", "--json", OLD])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["id"] == NEW
    client = TestClient(create_app(store.data_dir, pool_size=1), base_url="http://localhost")
    assert client.get(f"/api/papers/{OLD}").json()["id"] == NEW
    page = client.get(f"/paper/{OLD}")
    assert page.status_code == 200 and "Scaling Laws for" in page.text


def test_the_old_record_coming_again_rejoins_its_paper(store):
    _moved(store)
    s = ingest_with_merge(store, [venue_rec()])  # the next OpenReview sync
    assert (s.added, s.updated, s.unchanged, s.merged) == (0, 0, 1, 0)
    assert store.count() == 1 and store.get(NEW).sources == ["openreview", "arxiv"]


def test_a_merge_within_one_run_leaves_an_alias_and_an_imported_tag_finds_it(store):
    """A bib: entry and its arXiv record in one file: the bib: id was never stored, yet a tag of
    an exported library that holds it finds the paper."""
    bib = venue_rec(id="bib:lovelace2025", sources=["bibtex"], extra={"bibtex": {"key": "lovelace2025"}})
    ingest_with_merge(store, [bib, arxiv_rec()])
    assert store.resolve("bib:lovelace2025") == NEW
    data = {"format": L.FORMAT, "version": 1, "tags": [{"name": "mine", "papers": ["bib:lovelace2025"]}]}
    L.import_json(store, data)
    assert L.tag_papers(store, "mine") == [NEW]


def test_the_id_of_a_record_that_joined_a_paper_names_it(store):
    """A DOI record folded into the arXiv paper: `show doi:…` found no paper; now it finds the
    paper the record joined. The same rule records, at the next sync, an id lost before schema 9."""
    ingest_with_merge(store, [arxiv_rec()])
    doi = venue_rec(id="doi:10.1000/abc999", sources=["file"], extra={"doi": "10.1000/abc999"})
    ingest_with_merge(store, [doi])
    assert store.count() == 1 and store.get("doi:10.1000/abc999").id == NEW


def test_a_tag_left_with_an_id_lost_before_schema_9_is_mended_when_the_record_comes_again(store):
    """A store that merged before the alias table: the tag holds a dead id; the next sync of the
    OpenReview record joins the paper and the tag holds the paper's id."""
    ingest_with_merge(store, [arxiv_rec()])
    data = {"format": L.FORMAT, "version": 1, "tags": [{"name": "attention", "papers": [OLD]}]}
    L.import_json(store, data)  # an id this store lacks is kept, as the old merge left it
    assert L.tag_papers(store, "attention") == [OLD]
    ingest_with_merge(store, [venue_rec()])
    assert L.tag_papers(store, "attention") == [NEW] and store.count() == 1

"""A paper found by its DOI wherever its source kept it (a BibTeX entry's doi, a `doi:` id, a
record's doi field, arXiv's journal DOI), in any case and as `doi:` or a doi.org URL, by every
door: the search box, `paperdex show`, /paper/, /api/papers/ and MCP's get_paper. A store made
by `paperdex ingest` from files, as a user makes one (the walk's F2 and F10)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp import Client

from paperdex.cli import cli
from paperdex.mcp_server import build_server
from paperdex.service import SearcherPool
from paperdex.web.app import create_app
from tests.conftest import run_async

BIB = """@inproceedings{smith_cvpr_2026,
  title = {Dense Correspondence at Scale},
  author = {Smith, Alice and Jones, Bob},
  booktitle = {CVPR}, year = {2026},
  doi = {10.1109/CVPR.2026.00001}
}
"""
RECORDS = [
    {"id": "doi:10.1000/xyz123", "title": "A paper known by its DOI id", "authors": ["Carol King"]},
    {"id": "2601.00002", "title": "Journal version noted by arXiv", "extra": {"arxiv": {"doi": "10.1234/J.5"}}},
]
# a DOI as a user pastes or types it -> the id of the paper it names
FOUND = {
    "10.1109/CVPR.2026.00001": "bib:smith_cvpr_2026",
    "10.1109/cvpr.2026.00001": "bib:smith_cvpr_2026",
    "https://doi.org/10.1109/CVPR.2026.00001": "bib:smith_cvpr_2026",
    "doi:10.1109/CVPR.2026.00001": "bib:smith_cvpr_2026",
    "10.1000/xyz123": "doi:10.1000/xyz123",
    "https://dx.doi.org/10.1000/XYZ123": "doi:10.1000/xyz123",
    "10.1234/j.5": "2601.00002",
}


def run(*args):
    return CliRunner().invoke(cli, [*map(str, args)], catch_exceptions=False)


@pytest.fixture(scope="module")
def doi_store(tmp_path_factory):
    d = tmp_path_factory.mktemp("doi")
    (d / "cvpr.bib").write_text(BIB)
    (d / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    r = run("--data-dir", d / "store", "ingest", "-q", d / "cvpr.bib", d / "mine.jsonl")
    assert r.exit_code == 0 and "added 3" in r.output and "rejected 0" in r.output, r.output
    return d / "store"


@pytest.mark.parametrize("typed", sorted(FOUND))
def test_the_search_box_finds_a_paper_by_any_doi_it_carries(doi_store, typed):
    """Pasting 10.1109/CVPR.2026.00001 said "not in this store" for the BibTeX paper that has it."""
    r = run("--data-dir", doi_store, "search", typed, "--json")
    got = json.loads(r.output)
    assert [h["id"] for h in got["hits"]] == [FOUND[typed]] and got["notices"] == [], r.output


def test_a_doi_no_paper_has_is_not_in_the_store(doi_store):
    got = json.loads(run("--data-dir", doi_store, "search", "10.9999/none", "--json").output)
    assert got["hits"] == [] and got["notices"] == ["10.9999/none is not in this store"]


@pytest.mark.parametrize("typed", sorted(FOUND))
def test_show_finds_what_the_search_box_finds(doi_store, typed):
    """`paperdex show 10.1109/CVPR.2026.00001` said "no paper with id"."""
    r = run("--data-dir", doi_store, "show", "--json", typed)
    assert r.exit_code == 0 and json.loads(r.output)["id"] == FOUND[typed], r.output


def test_the_paper_page_the_api_and_mcp_find_a_paper_by_its_doi(doi_store):
    client = TestClient(create_app(doi_store, pool_size=1), base_url="http://localhost")
    for typed, pid in FOUND.items():
        r = client.get(f"/api/papers/{typed}")
        assert r.status_code == 200 and r.json()["id"] == pid, (typed, r.text)
        page = client.get(f"/paper/{typed}")
        assert page.status_code == 200 and pid in page.text, typed
    assert client.get("/api/papers/10.9999/none").status_code == 404

    async def go():
        async with Client(build_server(doi_store, SearcherPool(doi_store, size=1))) as c:
            r = await c.call_tool("get_paper", {"id": "https://doi.org/10.1109/CVPR.2026.00001"})
            assert not r.is_error and r.structured_content["id"] == "bib:smith_cvpr_2026"
            r = await c.call_tool("get_paper", {"id": "10.9999/none"})
            assert r.is_error and "no paper" in r.content[0].text

    run_async(go())


def test_an_id_written_as_a_url(tmp_path):
    """A doi.org URL as an id is read as doi:DOI (it had been refused as "not usable in a link:
    an empty, '.' or '..' part"); any other URL is refused, saying what an id is."""
    f = tmp_path / "urls.jsonl"
    f.write_text(
        '{"id": "https://doi.org/10.1000/QQQ", "title": "An id written as a DOI URL"}\n'
        '{"id": "https://example.com/papers/1", "title": "A blog post"}\n'
    )
    r = run("--data-dir", tmp_path / "s", "ingest", f)
    assert "added 1" in r.output and "rejected 1" in r.output, r.output
    assert "'id' is a URL ('https://example.com/papers/1')" in r.output and "empty, '.' or '..'" not in r.output
    for typed in ("doi:10.1000/qqq", "https://doi.org/10.1000/QQQ"):
        assert json.loads(run("--data-dir", tmp_path / "s", "show", "--json", typed).output)["id"] == "doi:10.1000/qqq"

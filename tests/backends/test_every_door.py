"""`--backend milvus://…` (and $PAPERDEX_BACKEND) reaches every door that searches: the CLI's
`search`, the web page and its JSON twin, the JSON API and the MCP tools read the collection,
through the same engine, and give the embedded store's answers."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from paperdex.cli import cli
from paperdex.settings import Settings
from paperdex.store import Store
from paperdex.web.app import create_app

QUERIES = ["diffusion", "robot grasping", "大语言模型 推理", "graph neural networks cat:cs.LG", "how do agents plan"]


@pytest.fixture(scope="module")
def copied(built_store_dir, tmp_path_factory):
    """A private copy of the fixture store and its Milvus Lite copy, plus one paper only the
    collection holds (so a search that finds it read Milvus, not the store)."""
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend

    tmp = tmp_path_factory.mktemp("doors")
    d = tmp / "store"
    shutil.copytree(built_store_dir, d)
    uri = f"milvus://{tmp / 'papers.db'}"
    b = MilvusBackend(tmp / "papers.db")
    with Store(d) as s:
        migrate_store(s, b)
    p = b.search("", per_page=1).hits[0].paper
    b.upsert([replace(p, id="2699.09999", title="Quokka foraging under canopy gaps")])
    yield d, uri
    b.close()


def _cli(*args: str) -> list[dict]:
    """The hits of `search --json`."""
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["hits"]


def test_cli_search_reads_the_backend(copied):
    d, uri = copied
    for q in QUERIES:
        here = _cli("--data-dir", str(d), "search", "--json", "--mode", "lexical", q)
        there = _cli("--data-dir", str(d), "--backend", uri, "search", "--json", "--mode", "lexical", q)
        assert [h["id"] for h in here] == [h["id"] for h in there], q
    assert _cli("--data-dir", str(d), "search", "--json", "--mode", "lexical", "quokka") == []
    got = _cli("--data-dir", str(d), "--backend", uri, "search", "--json", "--mode", "lexical", "quokka")
    assert [h["id"] for h in got] == ["2699.09999"]


def test_web_and_api_read_the_backend(copied):
    d, uri = copied
    local = TestClient(create_app(d, pool_size=1), base_url="http://localhost")
    remote = TestClient(
        create_app(d, pool_size=1, settings=Settings.from_env(data_dir=d, backend=uri)), base_url="http://localhost"
    )
    for q in QUERIES:
        a = local.get("/api/search", params={"q": q, "mode": "lexical"}).json()
        b = remote.get("/api/search", params={"q": q, "mode": "lexical"}).json()
        assert (a["total"], a["facets"], a["notices"]) == (b["total"], b["facets"], b["notices"]), q
        assert [h["id"] for h in a["hits"]] == [h["id"] for h in b["hits"]], q
    assert local.get("/api/search", params={"q": "quokka", "mode": "lexical"}).json()["total"] == 0
    assert remote.get("/api/search", params={"q": "quokka", "mode": "lexical"}).json()["total"] == 1
    page = remote.get("/", params={"q": "quokka canopy"})
    assert page.status_code == 200 and "2699.09999" in page.text and "foraging under" in page.text


def test_saved_searches_run_on_the_backend(copied):
    """A saved search's new matches are the store's new papers that the backend's search finds:
    a new paper counts once `paperdex migrate --to` has copied it to the collection."""
    from paperdex.backends import open_backend
    from paperdex.backends.migrate import migrate_store
    from paperdex.paper import Paper

    d, uri = copied
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "saved", "add", "wallabies", "wallaby"])
    assert r.exit_code == 0, r.output
    with Store(d) as s:
        s.upsert([Paper(id="2699.09997", title="Wallaby gait on sand", abstract="How wallabies hop.")])

    def new() -> list[str]:
        got = _cli_obj("--data-dir", str(d), "--backend", uri, "saved", "new", "wallabies", "--json")
        return [p["id"] for p in got["papers"]]

    assert new() == []  # not in the collection yet
    b = open_backend(uri)
    with Store(d, readonly=True) as s:
        migrate_store(s, b)
    b.close()
    assert new() == ["2699.09997"]


def _cli_obj(*args: str) -> dict:
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)

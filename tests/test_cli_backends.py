"""The CLI against both backends, as tests/web runs the pages, the API and MCP: every test here
runs on the embedded store and with `--backend milvus://…` (a Milvus Lite copy made by
`paperdex migrate --to`), and a command gives the same answer on both."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.discover import library
from paperdex.store import Store

TAG = ["2503.13576", "2503.13836", "2503.13859"]  # three of the fixture's diffusion papers (a tag to learn from)


@pytest.fixture(scope="module")
def library_dir(built_store_dir, tmp_path_factory):
    """A copy of the fixture store with a tag and saved searches whose last visit was before
    the newest 150 papers, and its Milvus Lite copy."""
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend

    tmp = tmp_path_factory.mktemp("cli-backends")
    d = tmp / "store"
    shutil.copytree(built_store_dir, d)
    assert _run(d, "tag", "add", "mine", *TAG).exit_code == 0
    for name, q in (("agents", "language model agents"), ("diffusion", "diffusion cat:cs.CV")):
        assert _run(d, "saved", "add", name, q).exit_code == 0
    with Store(d) as s:
        for name in ("agents", "diffusion"):
            library.mark_seen(s, name, rowid=s.max_rowid() - 150)
        with MilvusBackend(tmp / "papers.db") as b:
            migrate_store(s, b)
    return d, f"milvus://{tmp / 'papers.db'}"


@pytest.fixture(scope="module", params=["embedded", "milvus"])
def paperdex(request, library_dir):
    """`paperdex --data-dir D [--backend milvus://…] ARGS`: the CLI on one backend."""
    d, uri = library_dir
    backend = ["--backend", uri] if request.param == "milvus" else []
    return lambda *args: _run(d, *backend, *args)


@pytest.fixture(scope="module")
def embedded(library_dir):
    """The same command on the embedded store: what the other backend must answer."""
    return lambda *args: _run(library_dir[0], *args)


def _run(d, *args):
    return CliRunner().invoke(cli, ["--data-dir", str(d), *map(str, args)], catch_exceptions=False)


def _json(r):
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("q", ["diffusion", "graph neural networks cat:cs.LG", "大语言模型 推理"])
def test_search_lists_the_same_papers(paperdex, embedded, q):
    got = _json(paperdex("search", "--json", "--mode", "lexical", q))["hits"]
    assert got and [h["id"] for h in got] == [
        h["id"] for h in _json(embedded("search", "--json", "--mode", "lexical", q))["hits"]
    ]


def test_search_limits_and_errors_are_the_services(paperdex):
    """The CLI says what the web and MCP say about a request out of bounds, in one line."""
    for args, said in (
        (["-n", "101"], "per_page must be between 1 and 100"),
        (["--page", "10001"], "page must be between 1 and 10000"),
        (["--from", "2025-02-30"], "2025-02-30"),
        (['"unclosed'], "quote"),
    ):
        r = paperdex("search", "diffusion", *args)
        assert r.exit_code == 1 and said in r.output and "Traceback" not in r.output, (args, r.output)


def test_saved_searches_count_the_same_new_papers(paperdex, embedded):
    listed = _json(paperdex("saved", "list", "--json"))
    assert {s["name"]: s["new"] for s in listed} == {
        s["name"]: s["new"] for s in _json(embedded("saved", "list", "--json"))
    }
    assert all(s["new"] > 0 and s["error"] is None for s in listed), listed
    new = _json(paperdex("saved", "new", "agents", "-n", "5", "--json"))
    assert [p["id"] for p in new["papers"]] == [
        p["id"] for p in _json(embedded("saved", "new", "agents", "-n", "5", "--json"))["papers"]
    ]
    assert len(new["papers"]) == 5
    r = paperdex("saved", "new", "agents", "-n", "201")
    assert r.exit_code == 1 and "limit must be between 0 and 200" in r.output


def test_tag_recommend_gives_the_same_recommendations(paperdex, embedded):
    got = _json(paperdex("tag", "recommend", "mine", "-n", "8", "--json"))
    want = _json(embedded("tag", "recommend", "mine", "-n", "8", "--json"))
    ids = [r["paper"]["id"] for r in got["recommendations"]]
    assert len(ids) == 8 and not set(ids) & set(TAG)
    assert ids == [r["paper"]["id"] for r in want["recommendations"]]
    assert [r["why"]["nearest_saved"][0]["id"] for r in got["recommendations"]] == [
        r["why"]["nearest_saved"][0]["id"] for r in want["recommendations"]
    ]
    text = paperdex("tag", "recommend", "mine", "-n", "3")
    assert text.exit_code == 0 and text.stdout.startswith(" 1. ") and "like: " in text.stdout
    r = paperdex("tag", "recommend", "nosuchtag")
    assert r.exit_code == 1 and "nosuchtag" in r.output and "Traceback" not in r.output


def test_digest_is_the_same(paperdex, embedded):
    r = paperdex("digest", "-n", "3")
    assert r.exit_code == 0, r.output
    assert "New for the saved search “agents” (15)" in r.stdout
    assert r.stdout == embedded("digest", "-n", "3").stdout


def test_related_finds_the_same_papers(paperdex, embedded):
    text = "Latent diffusion models generate human motion from text, conditioned on skeleton keyframes."
    got = _json(paperdex("related", "--json", "-n", "5", text))
    assert got["hits"] and [h["id"] for h in got["hits"]] == [
        h["id"] for h in _json(embedded("related", "--json", "-n", "5", text))["hits"]
    ]
    r = paperdex("related", "-n", "101", text)
    assert r.exit_code == 2 and "-n/--limit: an integer from 1 to 100" in r.output  # names the option, not `k`

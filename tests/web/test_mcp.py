"""The MCP tool server, driven by the official SDK's client (in-process and over stdio)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from mcp import Client, StdioServerParameters
from webstore import HOSTILE_ID

from paperdex.mcp_server import build_server
from paperdex.service import SearcherPool
from tests.conftest import run_async


@pytest.fixture(params=["embedded", "milvus"])
def backend(request) -> str | None:
    """None: the store itself; else the URI of its Milvus copy (`--backend`)."""
    return request.getfixturevalue("web_milvus") if request.param == "milvus" else None


def test_tools_in_process(web_dir, backend):
    async def go():
        async with Client(build_server(web_dir, SearcherPool(web_dir, size=1, backend=backend))) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"search", "get_paper", "similar_papers"} <= names  # and the library's (test_discover.py)
            r = await c.call_tool("search", {"query": "zebrafinch", "limit": 5})
            assert not r.is_error
            hits = r.structured_content["hits"]
            assert hits[0]["id"] in (HOSTILE_ID, "2599.00002") and hits[0]["snippet"]
            r = await c.call_tool("search", {"query": 'zebrafinch au:"Number12 Author"'})  # the twelfth of 12
            authors = r.structured_content["hits"][0]["authors"]
            assert authors[9:] == ["Author Number10", "…", "Author Number12", "et al."]  # not hidden by the cut
            r = await c.call_tool("get_paper", {"id": HOSTILE_ID})
            d = r.structured_content
            assert "β-VAE" in d["title"] and "<script>alert(1)</script>" in d["abstract"]  # plain text for agents
            assert "code" not in d["links"] and d["bibtex"].startswith("@article{")
            r = await c.call_tool("similar_papers", {"id": HOSTILE_ID, "k": 3})
            assert [s["id"] for s in r.structured_content["similar"]][0] == "2599.00002"
            r = await c.call_tool("get_paper", {"id": "0000.00000"})
            assert r.is_error and "no paper" in r.content[0].text
            r = await c.call_tool("search", {"query": 'ti:"open'})
            assert r.is_error and "unbalanced quote" in r.content[0].text

    run_async(go())


def test_stdio_server_answers(web_dir):
    """Over the embedded store only: Milvus Lite serves a file to one process, and this test's
    process holds the web store's copy (a Milvus server takes clients from any process)."""
    env = {**os.environ, "PAPERDEX_BACKEND": ""}
    args = ["-m", "paperdex", "--data-dir", str(web_dir), "mcp"]  # `paperdex mcp`, as an agent is set up to run it
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def go():
        async with Client(params) as c:
            r = await c.call_tool("search", {"query": "zebrafinch", "limit": 2, "mode": "lexical"})
            assert not r.is_error
            assert {h["id"] for h in json.loads(r.content[0].text)["hits"]} == {HOSTILE_ID, "2599.00002"}

    run_async(go())


def test_tool_schemas_state_the_choices_and_bounds_an_agent_needs(web_dir):
    """Every parameter was a bare type: an agent learnt sort's values, limit's bounds and the
    date format only by failing."""
    from paperdex import service

    async def go():
        async with Client(build_server(web_dir, SearcherPool(web_dir, size=1))) as c:
            tools = {t.name: t.input_schema["properties"] for t in (await c.list_tools()).tools}
            s = tools["search"]
            assert s["sort"]["enum"] == ["relevance", "newest"] and s["mode"]["enum"] == ["hybrid", "lexical", "dense"]
            assert (s["limit"]["minimum"], s["limit"]["maximum"]) == (1, service.MAX_PER_PAGE)
            assert s["page"]["maximum"] == service.MAX_PAGE and "YYYY-MM" in s["date_to"]["description"]
            assert tools["similar_papers"]["k"]["maximum"] == service.MAX_SIMILAR
            assert tools["related_work"]["k"]["maximum"] == service.MAX_RELATED
            assert all(p.get("description") for ps in tools.values() for p in ps.values()), tools
            r = await c.call_tool("search", {"query": "zebrafinch", "limit": service.MAX_PER_PAGE + 1})
            assert r.is_error and "limit" in r.content[0].text

    run_async(go())

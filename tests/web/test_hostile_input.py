"""Issue 37: every URL a source gave is http(s) in every output (the JSON API's `extra`
included)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from paperdex.ingest import ingest_file
from paperdex.mcp_server import build_server
from paperdex.service import SearcherPool
from paperdex.sources import hf
from paperdex.web.app import create_app
from tests.conftest import run_async

HOSTILE_HF = {
    "id": "2597.00001",
    "title": "Links from a source that must not be followed",
    "authors": ["Ada Lovelace"],
    "abstract": "A zanzibarine paper whose source gave script URLs in every link field.",
    "categories": ["cs.LG"],
    "listed": "2025-03-19",
    "hf": {
        "upvotes": 5,
        "url": "javascript:alert(1)",
        "project_page": "JavaScript:alert(2)",
        "github_repo": " javascript:alert(3)",
        "thumbnail": "data:text/html,<script>alert(4)</script>",
        "organization": "Example",
    },
    "homepage": "vbscript:msgbox(5)",
    "nested": {"links": [{"url": "java\tscript:alert(6)"}, {"url": "https://example.org/ok"}]},
}


@pytest.fixture
def hostile_site(store, tmp_path):
    f = tmp_path / "hf.jsonl"
    f.write_text(json.dumps(HOSTILE_HF) + "\n")
    assert ingest_file(store, f).added == 1
    app = create_app(store.data_dir, pool_size=1)
    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False), store.data_dir


def _no_script_url(text: str) -> None:
    low = text.lower().replace("\\t", "").replace("\t", "")
    for bad in ("javascript:", "vbscript:", "data:text/html"):
        assert bad not in low, (bad, text[:500])


def test_no_script_url_leaves_in_any_output(hostile_site):
    c, data_dir = hostile_site
    pid = HOSTILE_HF["id"]
    d = c.get(f"/api/papers/{pid}").json()
    _no_script_url(json.dumps(d))
    assert d["extra"]["hf"]["upvotes"] == 5 and d["extra"]["hf"]["organization"] == "Example"  # the rest kept
    assert d["extra"]["nested"]["links"][1]["url"] == "https://example.org/ok"
    for path, params in (
        ("/api/search", {"q": "zanzibarine"}),
        ("/search.json", {"q": "zanzibarine"}),
        ("/api/daily", {"day": "2025-03-19", "per_page": 100}),
        ("/daily.json", {"day": "2025-03-19"}),
        (f"/api/papers/{pid}/similar", {}),
        (f"/paper/{pid}", {}),
        ("/", {"q": "zanzibarine"}),
        ("/daily", {"day": "2025-03-19"}),
        ("/feeds/category/cs.LG.rss", {}),
        ("/feeds/daily.atom", {}),
    ):
        r = c.get(path, params=params)
        assert r.status_code == 200, (path, r.status_code)
        _no_script_url(r.text)

    async def mcp() -> list[str]:
        async with Client(build_server(data_dir, SearcherPool(data_dir, size=1))) as m:
            calls = (("get_paper", {"id": pid}), ("search", {"query": "zanzibarine"}))
            return [json.dumps((await m.call_tool(tool, args)).structured_content) for tool, args in calls]

    for out in run_async(mcp()):
        assert pid in out
        _no_script_url(out)


def test_hugging_face_urls_are_filtered_at_ingest():
    item = {
        "paper": {
            "id": "2501.00001",
            "title": "A paper",
            "summary": "Text.",
            "projectPage": "javascript:alert(1)",
            "githubRepo": "javascript:alert(2)",
            "githubStars": 10,
        },
        "thumbnail": "javascript:alert(3)",
    }
    (p,), errors = hf.parse_daily_papers(json.dumps([item]))
    assert not errors
    assert p.code_url is None and "code_stars" not in p.extra
    assert not {"project_page", "github_repo", "thumbnail"} & set(p.extra["hf"])
    assert p.extra["hf"]["url"] == "https://huggingface.co/papers/2501.00001"
    item["paper"].update(projectPage="https://example.org/p", githubRepo="https://github.com/a/b")
    (p,), _ = hf.parse_daily_papers(json.dumps([item]))
    assert p.code_url == "https://github.com/a/b" and p.extra["hf"]["project_page"] == "https://example.org/p"
    assert p.extra["code_stars"] == 10

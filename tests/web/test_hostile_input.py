"""Issue 37: no input gets a 500. Ids in the path are checked at the edge (a saved search's id
past SQLite's 64-bit integers is a 404, not an OverflowError), JSON bodies are bounded in depth
before they are parsed (not a RecursionError), every URL a source gave is http(s) in every
output (the JSON API's `extra` included), and the Host header is a host name and a port,
nothing else."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from paperdex.discover import library as L
from paperdex.ingest import ingest_file
from paperdex.mcp_server import build_server
from paperdex.service import SearcherPool
from paperdex.sources import hf
from paperdex.web.app import create_app
from paperdex.web.limits import MAX_PATH_PARAM
from tests.conftest import run_async

BIG = "9223372036854775808"  # 2**63: one past SQLite's largest integer


@pytest.fixture
def site(store):
    tok = L.create_token(store, "test")
    L.save_search(store, "robots", "robot", {})
    app = create_app(store.data_dir, pool_size=1)
    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False), tok


def _error(r, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text[:300])
    body = r.json()
    assert body["error"]["status"] == status and body["error"]["message"]
    return body["error"]["message"]


@pytest.mark.parametrize("key", [BIG, "9" * 40, "18446744073709551616", "²", "١٢", "-1"])
def test_a_saved_search_id_out_of_range_is_a_404(site, key):
    c, tok = site
    auth = {"Authorization": f"Bearer {tok}"}
    assert "no saved search" in _error(c.get(f"/api/saved/{key}/new"), 404)
    assert "no saved search" in _error(c.post(f"/api/saved/{key}/seen", headers=auth), 404)
    page = c.get(f"/saved/{key}")
    assert page.status_code == 404 and "no saved search" in page.text and "Traceback" not in page.text
    assert c.get(f"/feeds/saved/{key}.rss").status_code == 404
    assert c.get(f"/feeds/saved/{key}.atom").status_code == 404
    # the ones that exist still answer, by id and by name
    ss = c.get("/api/saved").json()["saved_searches"][0]
    assert c.get(f"/api/saved/{ss['id']}/new").status_code == 200
    assert c.get("/api/saved/robots/new").status_code == 200
    assert c.get(f"/feeds/saved/{ss['id']}.rss").status_code == 200


def test_every_path_parameter_is_bounded(site):
    c, tok = site
    auth = {"Authorization": f"Bearer {tok}"}
    long = "x" * 5000
    for path in (
        f"/api/papers/{long}",
        f"/api/papers/{long}/similar",
        f"/api/tags/{long}",
        f"/api/tags/{long}/recommendations",
        f"/api/saved/{long}/new",
    ):
        assert "at most" in _error(c.get(path), 400), path
    assert "at most" in _error(c.delete(f"/api/tags/robots/papers/{long}", headers=auth), 400)
    assert "at most" in _error(c.post(f"/api/papers/{long}/summary", headers=auth), 400)
    for path in (f"/paper/{long}", f"/save/{long}", f"/tag/{long}", f"/saved/{long}", f"/feeds/tag/{long}.rss"):
        r = c.get(path)  # pages and feeds: the error page
        assert r.status_code == 400 and "at most" in r.text and "Traceback" not in r.text, (path, r.status_code)
    # up to the bound, the endpoint decides: no paper, no tag
    assert _error(c.get(f"/api/papers/{'x' * MAX_PATH_PARAM}"), 404)


def _post(c, path, body: bytes, tok: str | None = None):
    headers = {"content-type": "application/json"}
    if tok:
        headers["Authorization"] = f"Bearer {tok}"
    return c.post(path, content=body, headers=headers)


def test_a_deeply_nested_body_is_a_400_before_it_is_parsed(site, monkeypatch):
    c, tok = site
    deep = b"[" * 400_000
    msg = _error(_post(c, "/api/related", deep), 400)
    assert "nested" in msg and "depth" in msg
    for path in ("/api/tags/robots/papers", "/api/dismissed", "/api/saved", "/api/library/import"):
        assert "nested" in _error(_post(c, path, b'{"ids": ' + b"[" * 5000 + b"]" * 5000 + b"}", tok), 400)
    nested = b'{"text": "robot arm grasping", "k": ' + b'{"a": ' * 200 + b"1" + b"}" * 200 + b"}"
    assert "nested" in _error(_post(c, "/api/related", nested), 400)
    # the check comes first: the parser never sees a body that is too deep
    with monkeypatch.context() as m:
        m.setattr(json, "loads", lambda *a, **k: pytest.fail("parsed"))
        r = _post(c, "/api/related", b'{"text": ' + b"[" * 1000 + b"]" * 1000 + b"}")
    assert "nested" in _error(r, 400)
    # and what is not JSON, or not strict JSON, is a 400 too
    for body in (b'{"text": "robot", "k": NaN}', b'{"k": 1' + b"0" * 5000 + b"}", b"\xff\xfe{}", b'{"a": ]'):
        _error(_post(c, "/api/related", body), 400)


def test_a_body_at_the_depth_bound_and_brackets_in_strings_are_fine(site):
    c, tok = site
    text = "[[[[{{{{ " * 1500 + " robot arm grasping objects with a learned policy"
    r = _post(c, "/api/related", json.dumps({"text": text, "k": 3}).encode())
    assert r.status_code == 200, r.text[:300]
    r = _post(c, "/api/related", json.dumps({"text": "robot arm", "k": 3, "x": [[[[[[1]]]]]]}).encode())
    assert r.status_code == 200, r.text[:300]
    r = _post(c, "/api/related", b'{"text": "robot \\" [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "k": 3}')
    assert r.status_code == 200, r.text[:300]


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


@pytest.mark.parametrize(
    "host",
    [
        "localhost:80@evil.example",
        "localhost@evil.example",
        "localhost:80/evil.example",
        "localhost:evil.example",
        "localhost:80:80",
        "localhost#evil.example",
        "localhost\\evil.example",
        "localhost evil.example",
        "[::1]:80@evil.example",
        "[::1]evil.example",
        "user:pass@localhost",
        "localhost:",
        "localhost:-1",
        "localhost:99999999999999999999",
    ],
)
def test_a_host_header_is_a_name_and_a_port_only(app, host):
    r = TestClient(app).get("/api/days", headers={"host": host})
    assert "Host" in _error(r, 400), host


def test_allowed_host_forms_still_answer(app):
    for host in ("localhost", "LOCALHOST:8000", "127.0.0.1:8000", "[::1]:8000", "[::1]"):
        r = TestClient(app).get("/api/days", headers={"host": host})
        assert r.status_code == 200, host

"""The API as strict as the pages: filtered links, known parameters only, allowed hosts, an
honest OpenAPI spec, HEAD, 405 with Allow, real dates, headers on every answer, a bounded
wait for a searcher."""

from __future__ import annotations

import json
import re
import time

from fastapi.testclient import TestClient
from pydantic import BaseModel
from webstore import HOSTILE_ID

from paperdex import service
from paperdex.paper import Paper
from paperdex.search import MAX_WINDOW
from paperdex.settings import Settings
from paperdex.store import Store
from paperdex.web.app import create_app

SECURITY = ("content-security-policy", "x-content-type-options", "referrer-policy")


def has_security_headers(r) -> bool:
    return all(h in r.headers for h in SECURITY)


def test_api_links_are_filtered_like_the_pages(client):
    d = client.get(f"/api/papers/{HOSTILE_ID}").json()
    assert "code" not in d["links"] and d["code_url"] is None  # the data says javascript:alert(1)
    assert d["links"]["abs"].startswith("https://arxiv.org/abs/")
    hits = client.get("/api/search", params={"q": "zebrafinch"}).json()["hits"]
    hostile = next(h for h in hits if h["id"] == HOSTILE_ID)
    assert "code" not in hostile["links"] and "javascript:" not in json.dumps(hits)
    daily = client.get("/api/daily", params={"day": "2025-03-19", "per_page": 100}).json()
    assert "javascript:" not in json.dumps(daily)
    assert "javascript:" not in client.get(f"/paper/{HOSTILE_ID}").text


def test_only_known_parameters_reach_page_links(client):
    junk = "x" * 60_000
    r = client.get("/", params={"q": "zebrafinch", "junk": junk, "category": "cs.LG"})
    assert r.status_code == 200
    assert "junk" not in r.text and len(r.text) < 200_000
    assert "category=cs.LG" in r.text  # known ones are kept


def test_host_header_must_be_an_allowed_name(app):
    for host in ("localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000"):
        r = TestClient(app).get("/api/days", headers={"host": host})
        assert r.status_code == 200, host
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", ""):
        r = TestClient(app).get("/api/days", headers={"host": host})
        assert r.status_code == 400, host
        assert "Host" in r.json()["error"]["message"] and has_security_headers(r)


def test_allowed_hosts_setting(web_dir, monkeypatch):
    monkeypatch.setenv("PAPERDEX_ALLOWED_HOSTS", "papers.lan, Other.Example")
    app = create_app(web_dir, pool_size=1)
    assert TestClient(app, base_url="http://papers.lan:8000").get("/api/days").status_code == 200
    assert TestClient(app, base_url="http://other.example").get("/api/days").status_code == 200
    assert TestClient(app, base_url="http://evil.example").get("/api/days").status_code == 400
    anyhost = create_app(web_dir, pool_size=1, settings=Settings.from_env(data_dir=web_dir, allowed_hosts=("*",)))
    assert TestClient(anyhost, base_url="http://evil.example").get("/api/days").status_code == 200


def test_openapi_states_bounds_enums_errors_and_schemas(client):
    spec = client.get("/openapi.json").json()
    params = {p["name"]: p["schema"] for p in spec["paths"]["/api/search"]["get"]["parameters"]}
    assert params["page"]["minimum"] == 1 and params["page"]["maximum"] == service.MAX_PAGE
    assert params["per_page"]["maximum"] == service.MAX_PER_PAGE
    assert params["mode"]["enum"] == ["hybrid", "lexical", "dense"]
    assert params["sort"]["enum"] == ["relevance", "newest"]
    assert "pattern" in str(params["from"])
    k = next(p for p in spec["paths"]["/api/papers/{pid}/similar"]["get"]["parameters"] if p["name"] == "k")
    assert (k["schema"]["minimum"], k["schema"]["maximum"]) == (1, service.MAX_SIMILAR)
    for path, item in spec["paths"].items():
        for method, op in item.items():
            codes = set(op["responses"])
            ok = "201" if (path, method) == ("/api/saved", "post") else "200"  # a search saved: 201 Created
            assert "422" not in codes, path
            assert {ok, "400", "503"} <= codes, path
            answer = op["responses"][ok]["content"]  # JSON with its schema; the reference page is HTML
            assert answer["application/json"]["schema"] if path != "/api/docs" else "text/html" in answer, path
            # a write says it needs a token (related work is read through a POST: the text is long)
            assert method == "get" or path == "/api/related" or "401" in codes, path
    assert "404" in spec["paths"]["/api/papers/{pid}"]["get"]["responses"]
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def _api_routes():
    """(path as the spec writes it, method, query parameters) of every route the app serves under /api."""
    from paperdex.web.app import ROUTERS

    for view in ROUTERS:
        for r in view.router.routes:
            if r.path.startswith("/api"):
                query = set().union(*map(_names, r.dependant.query_params))
                for method in sorted(r.methods):
                    yield re.sub(r":\w+}", "}", r.path), method.lower(), query


def _names(param) -> set[str]:
    """A query parameter's names: a model's (/api/search's SearchQuery) are its fields'."""
    model = param.field_info.annotation
    if isinstance(model, type) and issubclass(model, BaseModel):
        return {f.alias or name for name, f in model.model_fields.items()}
    return {param.alias}


def test_every_api_route_is_in_the_openapi_document(client):
    """/openapi.json listed POST /api/saved of the library's routes and none of the others (tags,
    "not interested", a saved search's new papers and its visit, export, import, related work,
    summaries, suggestions): every route the app serves under /api is there with its path and
    query parameters, and every error it answers with when asked without a token or with a
    name that is nowhere (a write's 401, a missing tag's 404) is among its documented ones."""
    spec = client.get("/openapi.json").json()["paths"]
    routes = list(_api_routes())
    assert len(routes) > 20
    for path, method, query in routes:
        op = spec.get(path, {}).get(method)
        assert op is not None, f"{method.upper()} {path} is not in /openapi.json"
        params = {p["name"] for p in op.get("parameters", [])}
        assert set(re.findall(r"{(\w+)}", path)) | query <= params, (path, method)
        url = path.replace("{pid}", "2599.99999").replace("{name}", "nowhere").replace("{key}", "nowhere")
        r = client.request(method.upper(), url, json={})
        assert str(r.status_code) in op["responses"], (method, path, r.status_code, r.text[:200])
        if r.status_code >= 400:
            assert r.json()["error"]["status"] == r.status_code, path


def test_every_page_a_search_reports_can_be_opened(client):
    """`pages` said 1,000 for ten a page (the 10,000-result window) while a page past 500 was a
    400, and the pager linked them; the fixture store is too small to list that many, so the last
    page a full window reports is asked of the service's own check, for every page size."""
    for per_page in range(1, service.MAX_PER_PAGE + 1):
        last = -(-MAX_WINDOW // per_page)
        service.normalise(service.SearchParams(q="x", page=last, per_page=per_page))  # no ServiceError
    first = client.get("/api/search?q=&per_page=1").json()
    last = client.get(f"/api/search?q=&per_page=1&page={first['pages']}")
    assert last.status_code == 200 and len(last.json()["hits"]) == 1


def test_a_page_past_the_window_and_the_last_page_says_it_is_past_the_last(client):
    """Page 501 of a search of 5,435 papers said "results are listed up to number 10,000"; it is
    past the last page, and says so as page 300 does (the window's message stays for a search
    that lists more than the window)."""
    api = client.get("/api/search?q=&per_page=100&page=101")
    assert api.status_code == 200 and api.json()["hits"] == [] and api.json()["pages"] < 101
    page = client.get("/?q=model&per_page=100&page=101")
    assert page.status_code == 200 and 'data-testid="past-last-page"' in page.text


def test_405_says_what_is_allowed_and_head_is_answered(client):
    r = client.post("/api/search")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD" and has_security_headers(r)
    assert r.json()["error"]["status"] == 405
    r = client.delete("/static/style.css")
    assert r.status_code == 405 and "GET" in r.headers["allow"]
    for path in ("/api/search?q=zebrafinch", "/", f"/paper/{HOSTILE_ID}", "/static/style.css", "/openapi.json"):
        get, head = client.get(path), client.head(path)
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers["content-type"] == get.headers["content-type"], path


def test_invalid_dates_are_400_with_a_message(client):
    for params in ({"from": "2025-02-30"}, {"to": "2025-13-45"}, {"from": "2025-13"}, {"from": "0000"}):
        r = client.get("/api/search", params={"q": "model", **params})
        assert r.status_code == 400, params
        assert "date" in r.json()["error"]["message"], params
    r = client.get("/api/daily", params={"day": "2025-13-45"})
    assert r.status_code == 400 and "not a real date" in r.json()["error"]["message"]
    r = client.get("/", params={"q": "model", "from": "2025-02-30"})
    assert r.status_code == 400 and "not a real date" in r.text
    assert client.get("/api/search", params={"q": "model", "from": "2025-02"}).status_code == 200


def test_security_headers_on_a_500(app, client, monkeypatch):
    def boom(*a, **kw):
        raise RuntimeError("a bug")

    monkeypatch.setattr(service, "get_paper", boom)
    r = client.get(f"/api/papers/{HOSTILE_ID}")
    assert r.status_code == 500 and has_security_headers(r)
    assert r.json()["error"]["status"] == 500 and "a bug" not in r.text


def test_a_full_pool_is_a_quick_503_with_retry_after(web_dir):
    app = create_app(web_dir, pool_size=1, settings=Settings.from_env(data_dir=web_dir, pool_wait=0.3))
    c = TestClient(app, base_url="http://localhost", raise_server_exceptions=False)
    with app.state.pool.searcher():  # every searcher busy
        t = time.monotonic()
        r = c.get("/api/search", params={"q": "zebrafinch"})
        took = time.monotonic() - t
    assert r.status_code == 503 and r.headers["retry-after"] == "2" and took < 5
    assert "busy" in r.json()["error"]["message"] and has_security_headers(r)
    assert c.get("/api/search", params={"q": "zebrafinch"}).status_code == 200  # and it recovers


def test_a_stored_nan_does_not_break_the_api(tmp_path):
    """Records are validated at ingest now, but a store written before that may hold one."""
    with Store(tmp_path / "s") as s:
        s.upsert([Paper(id="9901.00033", title="t", extra={"code_stars": float("nan"), "x": [float("inf")]})])
    c = TestClient(create_app(tmp_path / "s", pool_size=1), base_url="http://localhost")
    r = c.get("/api/papers/9901.00033")
    assert r.status_code == 200 and r.json()["extra"] == {"code_stars": None, "x": [None]}
    r = c.get("/api/daily")
    assert r.status_code == 200 and "NaN" not in r.text

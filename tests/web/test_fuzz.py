"""Property: no request to the API, however odd its parameters, path or body, gets a 500 or a
non-JSON body."""

from __future__ import annotations

import json
import re
import string
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperdex.discover import library as L
from paperdex.web.app import create_app

SYNTAX = list('"():-*.') + ["ti:", "au:", "abs:", "cat:", "date:", "id:", "venue:", "area:", " OR ", " AND ", "NOT "]
query_text = st.lists(
    st.one_of(st.sampled_from(SYNTAX), st.text(string.ascii_letters + "中文 ", max_size=6), st.text(max_size=4)),
    max_size=8,
).map("".join)
param = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.integers(-5, 10**6).map(str),
    st.sampled_from(["2025", "2025-03-19", "cs.LG", "cs", ".."]),
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _ok(r) -> None:
    assert r.status_code in (200, 400, 404), (r.status_code, r.text[:300])
    body = r.json()
    if r.status_code != 200:
        assert body["error"]["message"] and body["error"]["status"] == r.status_code


@SETTINGS
@given(q=query_text, mode=param, sort=param, page=param, per_page=param, category=param, frm=param, to=param)
def test_search_never_500(client, q, mode, sort, page, per_page, category, frm, to):
    params = {"q": q, "mode": mode, "sort": sort, "page": page, "per_page": per_page}
    params.update({"category": category, "from": frm, "to": to})
    _ok(client.get("/api/search", params={k: v for k, v in params.items() if v is not None}))


@SETTINGS
@given(pid=st.text(max_size=30), k=param, day=param, category=param)
def test_papers_and_daily_never_500(client, pid, k, day, category):
    pid = quote(pid, safe="") or "x"
    _ok(client.get(f"/api/papers/{pid}"))
    _ok(client.get(f"/api/papers/{pid}/similar", params={"k": k} if k is not None else {}))
    _ok(
        client.get(
            "/api/daily", params={k2: v for k2, v in {"day": day, "category": category}.items() if v is not None}
        )
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=query_text, page=param, category=param, lang=param)
def test_search_page_never_500(client, q, page, category, lang):
    params = {k: v for k, v in {"q": q, "page": page, "category": category, "lang": lang}.items() if v is not None}
    r = client.get("/", params=params)
    assert r.status_code in (200, 400), (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html") and "Traceback" not in r.text


# --- every route's path parameters and every JSON body (issue 37) -----------------------------
# Values that broke an endpoint once, or could: numbers past SQLite's 64-bit integers (an
# OverflowError), digits of other scripts (int("²") is a ValueError), control characters, `%`
# and `/`, over-long ones; and JSON nested deep enough to exhaust Python's recursion.

PATH_VALUE = st.one_of(
    st.text(max_size=20),
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["9223372036854775807", "9223372036854775808", "9" * 400, "²", "١٢", "0", "-1", " 1 "]),
    st.sampled_from(["robots", "rss", "atom", "cs.LG", "2501.00001", "%", "%00", "..", "a/b", "x" * 5000]),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=8).map(lambda s: s * 80),
)
_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


def _routes() -> list[tuple[str, str]]:
    """(method, path template) of every route of the app with a path parameter."""
    from fastapi.routing import APIRoute

    from paperdex.web.views import feeds, library, library_api, summary

    out = []
    for r in (*library.router.routes, *library_api.router.routes, *feeds.router.routes, *summary.router.routes):
        if isinstance(r, APIRoute) and _PARAM.search(r.path):
            out += [(m, r.path) for m in sorted(r.methods)]
    return out


@pytest.fixture
def writable(store):
    """An app over a private store with a token and a saved search: writes fuzzed here change
    nothing another test reads."""
    tok = L.create_token(store, "fuzz")
    L.save_search(store, "robots", "robot", {})
    app = create_app(store.data_dir, pool_size=1)
    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False), tok


NO_MODEL = "this server has no language model configured"  # views/summary.py's 503: by design here


def _answered(r, path: str) -> None:
    """Any status but a server error, and from the API the one error shape."""
    assert r.status_code < 500 or (r.status_code == 503 and NO_MODEL in r.text), (path, r.status_code, r.text[:300])
    if r.status_code >= 400 and path.startswith("/api/"):
        body = r.json()
        assert body["error"]["message"] and body["error"]["status"] == r.status_code, (path, body)


def test_every_route_with_a_path_parameter_is_fuzzed():
    """The list the next tests walk is the app's: a new route is fuzzed without being named."""
    routes = {p for _, p in _routes()} | {
        "/api/papers/{pid:path}",
        "/api/papers/{pid:path}/similar",
        "/paper/{pid:path}",
    }
    assert {"/api/saved/{key}/new", "/saved/{key}", "/feeds/saved/{key}.{fmt}", "/api/tags/{name}"} <= routes
    assert len(routes) >= 19, sorted(routes)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.fixed_dictionaries({"pid": PATH_VALUE, "name": PATH_VALUE, "key": PATH_VALUE, "fmt": PATH_VALUE}))
def test_path_parameters_never_500(writable, values):
    c, tok = writable
    auth = {"Authorization": f"Bearer {tok}"}
    for method, template in [
        *_routes(),
        ("GET", "/api/papers/{pid:path}"),
        ("GET", "/api/papers/{pid:path}/similar"),
        ("GET", "/paper/{pid:path}"),
        ("GET", "/feeds/category/{name}.{fmt}"),
    ]:
        path = _PARAM.sub(lambda m: quote(values.get(m[1], values["name"]), safe="") or "x", template)
        if method == "GET":
            r = c.get(path)
        elif template.startswith("/library/"):  # the browser's forms
            r = c.request(method, path, data={"next": "/library"}, headers=auth, follow_redirects=False)
        else:
            r = c.request(method, path, json={"ids": ["2501.00001"]}, headers=auth)
        _answered(r, path)


def _nested(leaf):
    return st.recursive(
        leaf,
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3),
        max_leaves=40,
    )


JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**80), 2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["robot arm grasping", "2501.00001", "cs.RO", "2025-03-19", "javascript:alert(1)"]),
)
FIELDS = ("text", "k", "category", "from", "to", "ids", "id", "name", "q", "params", "tags", "saved", "version")
BODY = st.one_of(
    st.dictionaries(st.sampled_from(FIELDS), _nested(JSON_LEAF), max_size=6).map(lambda d: json.dumps(d).encode()),
    _nested(JSON_LEAF).map(lambda d: json.dumps(d).encode()),
    st.tuples(st.sampled_from(["[", '{"a":', '[{"k":']), st.integers(1, 200_000)).map(lambda t: (t[0] * t[1]).encode()),
    st.tuples(st.integers(1, 3000)).map(lambda t: b'{"text": "robot", "k": ' + b"[" * t[0] + b"]" * t[0] + b"}"),
    st.binary(max_size=40),
    st.sampled_from([b"NaN", b'{"k": Infinity}', b'{"k": 1' + b"0" * 5000 + b"}", b"\xef\xbb\xbf{}", b"\xff{}"]),
)
JSON_POSTS = ("/api/related", "/api/tags/fuzz/papers", "/api/dismissed", "/api/saved", "/api/library/import")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODY, path=st.sampled_from(JSON_POSTS))
def test_json_bodies_never_500(writable, body, path):
    c, tok = writable
    headers = {"content-type": "application/json", "Authorization": f"Bearer {tok}"}
    _answered(c.post(path, content=body, headers=headers), path)


def test_a_dot_dot_parameter_folded_into_api_answers_in_the_api_shape(writable):
    """`/api/tags/..` reaches the server as `/api` (clients fold dot segments, as browsers do):
    an API client gets the API's JSON error, not the HTML page (hypothesis found it)."""
    c, _ = writable
    for path in ("/api/tags/..", "/api/papers/..", "/api"):
        _answered(c.get(path), "/api/")

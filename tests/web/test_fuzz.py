"""Property: no request to the API, however odd its parameters, gets a 500 or a non-JSON body."""

from __future__ import annotations

import string
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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

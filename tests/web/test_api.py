"""The JSON API through the ASGI test client: shapes, statuses and error bodies."""

from __future__ import annotations

from webstore import DAY_WITH_PAGES, HOSTILE_ID

from paperdex.store import Store


def test_search_returns_ranked_hits_with_why_and_facets(client):
    r = client.get("/api/search", params={"q": "zebrafinch"})
    assert r.status_code == 200
    d = r.json()
    assert d["total"] >= 2
    ids = [h["id"] for h in d["hits"]]
    assert HOSTILE_ID in ids[:2] and "2599.00002" in ids[:2]
    hit = d["hits"][0]
    assert set(hit["why"]) == {"lexical_rank", "lexical_score", "dense_rank", "dense_score"}
    assert "<mark>" in hit["snippet_html"] or "<mark>" in hit["title_html"]
    assert {f["value"] for f in d["facets"]["category"]} >= {"cs.LG", "cs.SD"}
    assert d["pages"] >= 1


def test_search_html_in_json_is_escaped(client):
    hit = next(h for h in client.get("/api/search", params={"q": "zebrafinch"}).json()["hits"] if h["id"] == HOSTILE_ID)
    assert "<script>" not in hit["snippet_html"] and "<script>" not in hit["title_html"]
    assert "&lt;script&gt;" in hit["title_html"]


def test_search_filters_sort_and_paging(client):
    r = client.get("/api/search", params={"q": "", "category": "cs.RO", "sort": "newest", "per_page": 5})
    d = r.json()
    assert r.status_code == 200 and d["total"] >= 5
    assert all("cs.RO" in h["categories"] for h in d["hits"])
    dates = [h["date"] for h in d["hits"]]
    assert dates == sorted(dates, reverse=True)
    p2 = client.get("/api/search", params={"category": "cs.RO", "sort": "newest", "per_page": 5, "page": 2}).json()
    assert not {h["id"] for h in p2["hits"]} & {h["id"] for h in d["hits"]}
    r = client.get("/api/search", params={"q": "model", "from": "2026-01-01", "to": "2026-12-31"})
    assert r.status_code == 200 and all(h["date"] >= "2026-01-01" for h in r.json()["hits"])


def test_bad_query_is_400_json_without_traceback(client):
    for params in (
        {"q": 'ti:"unclosed'},
        {"q": "((("},
        {"mode": "magic"},
        {"page": "abc"},
        {"page": 0},
        {"from": "yesterday"},
    ):
        r = client.get("/api/search", params=params)
        assert r.status_code == 400, params
        body = r.json()
        assert body["error"]["status"] == 400 and body["error"]["message"]
        assert "Traceback" not in r.text and 'File "' not in r.text


def test_paper_and_unknown_id(client):
    r = client.get(f"/api/papers/{HOSTILE_ID}")
    assert r.status_code == 200
    d = r.json()
    assert d["id"] == HOSTILE_ID and len(d["authors"]) == 12
    assert d["bibtex"].startswith("@article{") and f"eprint       = {{{HOSTILE_ID}}}" in d["bibtex"]
    assert client.get(f"/api/papers/arXiv:{HOSTILE_ID}v2").json()["id"] == HOSTILE_ID
    # typed ids are read by the library's rule too (paper.typed_id): the prefix in any case
    assert client.get(f"/api/papers/ARXIV:{HOSTILE_ID}v3").json()["id"] == HOSTILE_ID
    # and an arXiv URL pasted after /paper/ or /api/papers/ is its paper, as in the search box
    assert client.get(f"/api/papers/https://arxiv.org/abs/{HOSTILE_ID}v2").json()["id"] == HOSTILE_ID
    assert client.get(f"/api/papers/https://arxiv.org/pdf/{HOSTILE_ID}/similar").json()["id"] == HOSTILE_ID
    assert client.get(f"/paper/https://arxiv.org/abs/{HOSTILE_ID}").status_code == 200
    r = client.get("/api/papers/0000.00000")
    assert r.status_code == 404 and "no paper" in r.json()["error"]["message"]


def test_similar(client):
    r = client.get(f"/api/papers/{HOSTILE_ID}/similar", params={"k": 5})
    assert r.status_code == 200
    sims = r.json()["similar"]
    assert len(sims) == 5 and HOSTILE_ID not in [s["id"] for s in sims]
    assert sims[0]["id"] == "2599.00002"  # the other zebrafinch paper is nearest
    assert client.get("/api/papers/nope/similar").status_code == 404
    assert client.get(f"/api/papers/{HOSTILE_ID}/similar", params={"k": 0}).status_code == 400


def test_daily_defaults_to_latest_day_and_links_neighbours(client, web_dir):
    with Store(web_dir, readonly=True) as s:
        latest, first = s.conn.execute("SELECT max(date), min(date) FROM papers").fetchone()
        n = s.conn.execute("SELECT count(*) FROM papers WHERE date = ?", [DAY_WITH_PAGES]).fetchone()[0]
    assert n > 30, "the fixture day must fill two pages of the daily view"
    d = client.get("/api/daily").json()
    assert d["day"] == latest and d["next_day"] is None and d["prev_day"] < d["day"]
    d = client.get("/api/daily", params={"day": DAY_WITH_PAGES, "per_page": 30}).json()
    assert d["total"] == n and d["pages"] == 2 and len(d["papers"]) == 30
    assert d["next_day"] == "2025-03-20" and d["prev_day"] is None and first == DAY_WITH_PAGES
    counts = [c["count"] for c in d["categories"]]
    assert counts == sorted(counts, reverse=True) and counts[0] <= n
    for c in d["categories"][:3]:  # a chip's count is what its filter shows
        got = client.get("/api/daily", params={"day": DAY_WITH_PAGES, "category": c["value"], "per_page": 1}).json()
        assert got["total"] == c["count"]
    cat = client.get("/api/daily", params={"day": DAY_WITH_PAGES, "category": "cs.LG"}).json()
    assert HOSTILE_ID in [p["id"] for p in cat["papers"]]
    assert all("cs.LG" in p["categories"] for p in cat["papers"])
    assert client.get("/api/daily", params={"day": "31/12/2025"}).status_code == 400


def test_openapi_lists_the_api(client):
    spec = client.get("/openapi.json").json()
    assert {"/api/search", "/api/papers/{pid}", "/api/papers/{pid}/similar", "/api/daily"} <= set(spec["paths"])
    params = {p["name"] for p in spec["paths"]["/api/search"]["get"]["parameters"]}
    assert {"q", "sort", "page", "category", "from", "to"} <= params


def test_unknown_api_route_is_json_404(client):
    r = client.get("/api/nothing-here")
    assert r.status_code == 404 and r.json()["error"]["status"] == 404


def test_healthz_says_the_store_and_the_backend_answer(client, app):
    r = client.get("/healthz")
    assert r.status_code == 200
    h = r.json()
    assert h["ok"] and h["papers"] == h["indexed"] > 300 and h["vectors"] > 300
    assert h["backend"] == ("embedded" if app.state.pool.backend is None else "milvus")

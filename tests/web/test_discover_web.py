"""The discover routes: reads open, writes only with a token (bearer, or the sign-in cookie with
its CSRF value from this site), feeds valid per feedparser, related work for a pasted text."""

from __future__ import annotations

import re

import feedparser
import pytest
from fastapi.testclient import TestClient

from paperdex import service
from paperdex.discover import library as L
from paperdex.discover import recommend as R
from paperdex.web.app import create_app


@pytest.fixture
def site(store):
    tok = L.create_token(store, "test")
    ids = [
        r[0]
        for r in store.conn.execute(
            "SELECT p.id FROM papers p JOIN paper_categories c ON c.paper = p.rowid WHERE c.category = 'cs.RO' LIMIT 6"
        )
    ]
    app = create_app(store.data_dir, pool_size=1)
    client = TestClient(app, base_url="http://localhost", raise_server_exceptions=False)
    return client, tok, ids


def test_writes_need_a_valid_token(site):
    c, tok, ids = site
    r = c.post("/api/tags/robots/papers", json={"ids": ids[:5]})
    assert r.status_code == 401 and "paperdex token create" in r.json()["error"]["message"]
    assert r.headers["www-authenticate"] == "Bearer"
    r = c.post("/api/tags/robots/papers", json={"ids": ids[:5]}, headers={"Authorization": "Bearer pdx_wrong"})
    assert r.status_code == 401
    auth = {"Authorization": f"Bearer {tok}"}
    r = c.post("/api/tags/robots/papers", json={"ids": ids[:5]}, headers=auth)
    assert r.status_code == 200 and r.json()["added"] == 5
    assert [t["name"] for t in c.get("/api/tags").json()["tags"]] == ["robots"]
    assert c.get("/api/tags/robots").json()["count"] == 5
    r = c.post("/api/tags/robots/papers", json={"ids": ["nope"]}, headers=auth)
    assert r.status_code == 404
    r = c.post("/api/tags/robots/papers", json={"ids": "x"}, headers=auth)
    assert r.status_code == 400
    # reads are open: recommendations with reasons
    r = c.get("/api/tags/robots/recommendations?k=5")
    assert r.status_code == 200
    recs = r.json()["recommendations"]
    assert len(recs) == 5 and recs[0]["why"]["nearest_saved"] and not {x["paper"]["id"] for x in recs} & set(ids[:5])
    # which model ranked, and why (5 papers: too few to compare, the SVM)
    assert r.json()["model"]["model"] == "svm" and recs[0]["why"]["model"].startswith("SVM: the default; 5 saved")
    assert 'data-testid="rec-model">SVM: the default; 5 saved' in c.get("/tag/robots").text
    assert c.delete(f"/api/tags/robots/papers/{ids[0]}").status_code == 401
    assert c.delete(f"/api/tags/robots/papers/{ids[0]}", headers=auth).json() == {"removed": 1}


def test_api_delete_takes_a_versioned_id_and_says_when_the_tag_lacks_it(site):
    """DELETE /api/tags/robots/papers/ID v2 answered {"removed": 0} (a 200) and kept the paper."""
    c, tok, ids = site
    auth = {"Authorization": f"Bearer {tok}"}
    assert c.post("/api/tags/robots/papers", json={"ids": [f"{ids[0]}v2", ids[1]]}, headers=auth).json()["added"] == 2
    r = c.delete(f"/api/tags/robots/papers/{ids[0]}v2", headers=auth)
    assert r.status_code == 200 and r.json() == {"removed": 1}
    r = c.delete(f"/api/tags/robots/papers/{ids[0]}", headers=auth)
    assert r.status_code == 404 and r.json()["error"]["message"] == (
        f"the tag 'robots' does not hold {ids[0]}; nothing was removed"
    )
    assert c.get("/api/tags/robots").json()["papers"] == [ids[1]]


def test_saving_to_a_tag_name_with_a_slash_says_why_it_is_refused(site):
    """The cards' "Save to a tag" sends the typed name in the path (encodeURIComponent: a%2Fb);
    the router read it as a/b and answered "Not Found", which the pop-up showed. Names with "/"
    are refused wherever a tag is made (a tag's page and feed are a path segment): the pop-up
    now shows that reason, and nothing is created."""
    c, tok, ids = site
    auth = {"Authorization": f"Bearer {tok}"}
    for name in ("a%2Fb", "a/b", "x%2F..%2Fy"):
        r = c.post(f"/api/tags/{name}/papers", json={"ids": ids[:1]}, headers=auth)
        assert r.status_code == 400, name
        assert r.json()["error"]["message"] == "a tag name cannot be . or .., nor contain control characters, / or \\"
    assert c.get("/api/tags").json()["tags"] == []
    assert c.post("/api/tags/a%2Fb/papers", json={"ids": ids[:1]}).status_code == 401  # the token first, as before
    assert c.post("/api/tags/ab/papers", json={"ids": ids[:1]}, headers=auth).json()["added"] == 1


def test_browser_sign_in_and_csrf(site):
    c, tok, ids = site
    assert "login-form" in c.get("/library").text
    assert c.post("/library/login", data={"token": "pdx_nope"}).status_code == 401
    r = c.post("/library/login", data={"token": tok}, follow_redirects=False)
    assert r.status_code == 303 and "httponly" in r.headers["set-cookie"].lower()
    assert "samesite=strict" in r.headers["set-cookie"].lower()
    page = c.get(f"/save/{ids[0]}").text
    csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', page).group(1)
    form = {"id": ids[0], "new_tag": "mine"}
    assert c.post("/library/tags/add", data=form, follow_redirects=False).status_code == 403  # no CSRF value
    r = c.post("/library/tags/add", data={**form, "csrf": csrf}, headers={"Origin": "http://evil.test"})
    assert r.status_code == 403  # another site's page
    r = c.post(
        "/library/tags/add", data={**form, "csrf": csrf}, headers={"Origin": "http://localhost"}, follow_redirects=False
    )
    assert r.status_code == 303 and r.headers["location"] == "/tag/mine"
    assert ids[0] in c.get("/tag/mine").text
    # a form's `next` never leaves the site
    r = c.post("/library/dismiss", data={"id": ids[1], "csrf": csrf, "next": "//evil.test/x"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/library"


def test_feeds_validate_and_link_back(site):
    c, tok, ids = site
    auth = {"Authorization": f"Bearer {tok}"}
    c.post("/api/tags/robots/papers", json={"ids": ids[:5]}, headers=auth)
    c.post("/api/saved", json={"name": "diffusion", "q": "diffusion", "params": {"mode": "lexical"}}, headers=auth)
    for url in (
        "/feeds/tag/robots.rss",
        "/feeds/tag/robots.atom",
        "/feeds/saved/diffusion.rss",
        "/feeds/category/cs.RO.atom",
        "/feeds/daily.rss",
        "/feeds/daily.atom",
    ):
        r = c.get(url)
        assert r.status_code == 200, url
        f = feedparser.parse(r.content)
        assert not f.bozo, (url, f.bozo_exception)
        assert f.entries and all(e.link.startswith("http://localhost/paper/") for e in f.entries), url
    assert c.get("/feeds/tag/robots.json").status_code == 404
    assert c.get("/feeds/tag/none.rss").status_code == 404
    r = c.get("/api/saved").json()["saved_searches"]
    assert r[0]["name"] == "diffusion" and r[0]["new"] == 0


def test_related_api_and_page(site):
    c, _, _ = site
    text = "We learn robot grasping policies from demonstrations with diffusion models, in clutter. " * 4
    r = c.post("/api/related", json={"text": text, "k": 5})
    assert r.status_code == 200
    body = r.json()
    assert len(body["hits"]) == 5 and "grasping" in body["key_terms"]
    assert c.post("/api/related", json={"text": ""}).status_code == 400
    assert c.post("/api/related", json={"text": "x", "k": 0}).status_code == 400
    for bad in ({"from": 2024}, {"to": {"y": 1}}, {"category": ["cs.CL"]}):  # found by the fuzz test: a 500
        r = c.post("/api/related", json={"text": "x", **bad})
        assert r.status_code == 400 and "must be text" in r.json()["error"]["message"]
    assert c.post("/api/related", content=b"not json", headers={"content-type": "application/json"}).status_code == 400
    # a no-cors POST from another site's page is text/plain: JSON endpoints refuse it unread
    assert c.post("/api/related", content=b'{"text": "x"}', headers={"content-type": "text/plain"}).status_code == 415
    page = c.post("/related", data={"text": text}).text
    assert 'data-testid="related-results"' in page and page.count('class="card"') >= 5


def test_related_reads_chinese_and_cuts_a_long_paste(site):
    """A Chinese text's key terms are its words' English readings (before: none, and a DNA-storage
    paper first for 推测解码); a paste longer than what is read is cut, saying so (before: a
    400 over 20,000 characters, although only the first 5,000 were ever read)."""
    c, _, _ = site
    body = c.post("/api/related", json={"text": "机器人抓取", "k": 5}).json()
    assert {"robot", "grasp"} <= set(body["key_terms"])
    assert all(h["why"]["lexical_rank"] for h in body["hits"])  # the words side ranks: no longer dense alone
    assert sum("cs.RO" in h["categories"] for h in body["hits"]) >= 3
    long = ("We learn robot grasping policies from demonstrations, in clutter. " * 400).strip()  # 26,399 characters
    r = c.post("/api/related", json={"text": long, "k": 5})
    assert r.status_code == 200 and len(r.json()["hits"]) == 5
    assert "read the first 5,000 of the text's 26,399 characters" in r.json()["notices"][0]
    page = c.post("/related", data={"text": long}, headers={"Accept-Language": "zh"}).text
    assert "只读取了这段文字 26,399 个字符中的前 5,000 个" in page and 'data-testid="related-results"' in page


def test_related_work_for_an_arxiv_id_reads_that_paper(site, store):
    """`paperdex related 2505.13738` (and POST /api/related, the MCP tool) embedded the id's
    digits as text: NTIRE challenges and BCH decoders. An id or arXiv URL alone is the paper:
    its title and abstract are read, saying so, and the paper itself is not listed; an id the
    store lacks is a 404 saying how to get its related work."""
    c, _, ids = site
    p = store.get(ids[0])
    pasted = c.post("/api/related", json={"text": f"{p.title}. {p.abstract}", "k": 6}).json()
    expected = [h["id"] for h in pasted["hits"] if h["id"] != p.id][:5]
    for text in (p.id, f" arXiv:{p.id}v2 ", f"https://arxiv.org/abs/{p.id}"):
        body = c.post("/api/related", json={"text": text, "k": 5}).json()
        assert [h["id"] for h in body["hits"]] == expected
        said = body["notices"][0]
        assert said.startswith(f"related work for {p.id}, \u201c") and "found from its title and abstract" in said
    page = c.post("/related", data={"text": p.id}, headers={"Accept-Language": "zh"}).text
    assert f"{p.id}《" in page and "的相关工作：按其标题和摘要查找" in page
    r = c.post("/api/related", json={"text": "2599.99999"})
    assert r.status_code == 404 and r.json()["error"]["message"].startswith("no paper 2599.99999 in this store")
    # an id inside a sentence is text, as before
    assert c.post("/api/related", json={"text": f"robot grasping as in {p.id}"}).json()["notices"] == []


def test_a_pasted_abstract_in_the_search_box_finds_related_work(site, ro_store):
    """A whole abstract (parentheses, 1,000+ characters) typed into the search box is a passage,
    not a query: related work, its own paper first, instead of a syntax error or a cut."""
    c, _, _ = site
    p = next(p for p in ro_store.iter_papers() if len(p.abstract) > 900 and ")" in p.abstract)
    r = c.get("/", params={"q": p.abstract})
    assert r.status_code == 200 and 'data-testid="related-results"' in r.text
    first = r.text.index('class="card"')
    assert f"/paper/{p.id}" in r.text[first : first + 3000]
    # a short query keeps the query language (and its message for broken syntax)
    assert "unbalanced parenthesis" in c.get("/", params={"q": "diffusion)"}).text


def test_mcp_library_tools(site, store):
    from paperdex.mcp_server import build_server
    from tests.conftest import run_async as _run

    _, _, ids = site

    async def go():
        from mcp import Client

        async with Client(build_server(store.data_dir)) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {
                "list_tags",
                "add_to_tag",
                "recommendations",
                "saved_searches",
                "saved_search_new",
                "related_work",
            } <= names
            r = await c.call_tool("add_to_tag", {"tag": "robots", "ids": ids[:5]})
            assert not r.is_error and r.structured_content["added"] == 5
            r = await c.call_tool("list_tags", {})
            assert r.structured_content["tags"][0]["count"] == 5
            r = await c.call_tool("recommendations", {"tag": "robots", "k": 3})
            recs = r.structured_content["recommendations"]
            assert len(recs) == 3 and recs[0]["why"]["nearest_saved"]
            r = await c.call_tool("recommendations", {"tag": "nope"})
            assert r.is_error and "no tag" in r.content[0].text
            r = await c.call_tool("add_to_tag", {"tag": "robots", "ids": ["0000.00000"]})
            assert r.is_error
            L.save_search(store, "diffusion", "diffusion")
            r = await c.call_tool("saved_searches", {})
            assert r.structured_content["saved_searches"][0]["new"] == 0
            r = await c.call_tool("saved_search_new", {"name": "diffusion"})
            assert r.structured_content["new"] == 0
            r = await c.call_tool("related_work", {"text": "robot grasping with diffusion policies", "k": 3})
            assert len(r.structured_content["hits"]) == 3

    _run(go())


def test_for_you_orders_a_day_by_the_tags(site, store):
    c, tok, ids = site
    day = store.conn.execute("SELECT date FROM papers GROUP BY date ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    assert c.get(f"/api/for-you?day={day}").json()["papers"] == []  # no tags yet
    c.post("/api/tags/robots/papers", json={"ids": ids[:5]}, headers={"Authorization": f"Bearer {tok}"})
    got = c.get(f"/api/for-you?day={day}").json()
    n_day = store.conn.execute("SELECT count(*) FROM papers WHERE date = ?", (day,)).fetchone()[0]
    papers = got["papers"]
    assert got["day"] == day and 0 < len(papers) <= n_day and {p["tag"] for p in papers} == {"robots"}
    assert [p["score"] for p in papers] == sorted((p["score"] for p in papers), reverse=True)
    auth = {"Authorization": f"Bearer {tok}"}
    assert c.post("/api/dismissed", json={"ids": [papers[0]["id"]]}, headers=auth).json() == {"dismissed": 1}
    assert papers[0]["id"] not in {p["id"] for p in c.get(f"/api/for-you?day={day}").json()["papers"]}
    assert c.get("/api/for-you?day=2025-02-30").status_code == 400
    assert 'data-testid="for-you"' in c.get(f"/for-you?day={day}").text


def test_daily_for_you_sort_on_day_week_and_month(site, store):
    """The daily page's "For you" tab, beside upvotes and stars, on the day, week and month
    views: before any tag it says why and keeps the date order; with a tag of robot papers the
    period's papers come in the order of the tag's recommender, "not interested" ones last."""
    c, tok, ids = site
    day = store.conn.execute("SELECT date FROM papers GROUP BY date ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    page = c.get(f"/daily?day={day}&view=week").text
    assert re.search(r'<a href="/daily\?day=[^"]*sort=foryou[^"]*"[^>]*data-sort="foryou">For you</a>', page)
    for view in ("day", "week", "month"):
        plain = c.get(f"/daily.json?day={day}&view={view}&per_page=100").json()
        mine = c.get(f"/daily.json?day={day}&view={view}&sort=foryou").json()
        assert mine["sort"] == "foryou" and mine["total"] == plain["total"]
        assert [p["id"] for p in mine["papers"]] == [p["id"] for p in plain["papers"]][:30]
        assert any("save papers to a tag" in n for n in mine["notices"])
    auth = {"Authorization": f"Bearer {tok}"}
    assert c.post("/api/tags/robots/papers", json={"ids": ids[:5]}, headers=auth).status_code == 200
    for view in ("day", "week", "month"):
        got = c.get(f"/daily.json?day={day}&view={view}&sort=foryou").json()
        assert not got["notices"]
        shown = [p["id"] for p in got["papers"]]
        rowids = [store.rowid(i) for i in shown]
        scores = R.for_you(store, rowids)  # the tag's own papers are no recommendations: unscored, last
        ranked = [r for r in rowids if r in scores]
        assert rowids[: len(ranked)] == ranked and not {store.rowid(i) for i in ids[:5]} & set(ranked), view
        assert [scores[r][0] for r in ranked] == sorted((scores[r][0] for r in ranked), reverse=True), view
        if view == "month":  # robot papers first: more of them on top than in the month as a whole
            cats = {p["id"]: p["categories"] for p in got["papers"]}
            top = sum("cs.RO" in cats[i] for i in shown[:10]) / 10
            share = store.conn.execute(
                "SELECT avg(EXISTS(SELECT 1 FROM paper_categories c WHERE c.paper = p.rowid AND c.category = 'cs.RO')) "
                "FROM papers p WHERE p.date BETWEEN ? AND ?",
                (got["start"], got["end"]),
            ).fetchone()[0]
            assert top > 2 * share, (top, share)
            first = shown[0]
    html = c.get(f"/daily?day={day}&view=month&sort=foryou").text
    assert 'data-sort="foryou">For you</a>' in html and 'class="on" aria-current="true" data-sort="foryou"' in html
    assert html.index(f'data-id="{first}"') < html.index('class="card"', html.index(f'data-id="{first}"'))
    # "not interested" goes last
    assert c.post("/api/dismissed", json={"ids": [first]}, headers=auth).status_code == 200
    got = c.get(f"/daily.json?day={day}&view=month&sort=foryou").json()
    assert got["papers"][0]["id"] != first
    last_page = c.get(f"/daily.json?day={day}&view=month&sort=foryou&page={got['pages']}").json()
    assert last_page["papers"][-1]["id"] == first
    assert c.get(f"/daily?day={day}&sort=nonsense").status_code == 400


def test_save_control_on_cards_and_its_session(site, store):
    """Every card (search results, the daily page, similar papers) and the paper page carry a
    "Save to a tag" link to /save/ID; the script behind it learns from /api/library/session
    whether this browser may write, and its CSRF value, and posts with it."""
    c, tok, ids = site
    day = store.get(ids[0]).date
    for url in ("/?q=robot", f"/daily?day={day}", f"/paper/{ids[0]}"):
        page = c.get(url).text
        links = re.findall(r'<a class="[^"]*save-link" data-testid="save-link" data-id="([^"]+)" href="([^"]+)"', page)
        assert links and all(href == f"/save/{pid}" for pid, href in links), url
    assert ids[0] in {
        pid for pid, _ in re.findall(r'data-id="([^"]+)" href="(/save/[^"]+)"', c.get(f"/paper/{ids[0]}").text)
    }
    # read-only: no sign-in, no CSRF value; the save page says so
    s = c.get("/api/library/session").json()
    assert s == {"signed_in": False, "tags": []}
    assert "Read-only" in c.get(f"/save/{ids[0]}?next=/daily").text
    # signed in: the session hands this site's script the CSRF value; a post needs it
    c.post("/library/login", data={"token": tok}, follow_redirects=False)
    s = c.get("/api/library/session").json()
    assert s["signed_in"] and s["name"] == "test" and re.fullmatch(r"[0-9a-f]{64}", s["csrf"])
    body = {"ids": [ids[0]]}
    assert c.post("/api/tags/mine/papers", json=body).status_code == 403
    r = c.post("/api/tags/mine/papers", json=body, headers={"X-CSRF-Token": s["csrf"], "Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    r = c.post("/api/tags/mine/papers", json=body, headers={"X-CSRF-Token": s["csrf"], "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200 and r.json()["name"] == "mine" and r.json()["count"] == 1
    assert c.get("/api/library/session").json()["tags"] == ["mine"]
    # the no-script save form returns to the page it came from, on this site only
    page = c.get(f"/save/{ids[1]}?next=/daily%3Fday%3D{day}").text
    assert f'name="next" value="/daily?day={day}"' in page
    assert 'value="//evil.test/"' not in c.get(f"/save/{ids[1]}?next=//evil.test/").text


def test_library_forms_delete_a_tag_mark_seen_and_delete_a_saved_search(site, store):
    """The forms a signed-in browser posts from the library page: each needs the CSRF value,
    does what its button says and sends the browser where the page expects."""
    c, tok, ids = site
    c.post("/library/login", data={"token": tok})
    csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', c.get(f"/save/{ids[0]}").text).group(1)
    auth = {"Authorization": f"Bearer {tok}"}
    c.post("/api/tags/robots/papers", json={"ids": ids[:2]}, headers=auth)
    key = c.post("/api/saved", json={"name": "robots", "q": "robot"}, headers=auth).json()["id"]

    with store.conn:  # last visited before any paper was stored
        store.set_saved_search_seen(key, 0, "2000-01-01T00:00:00Z")
    assert c.get(f"/api/saved/{key}/new").json()["new"] > 0
    assert c.post(f"/library/saved/{key}/seen", data={}, follow_redirects=False).status_code == 403
    r = c.post(f"/library/saved/{key}/seen", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/saved/{key}"
    seen = c.get(f"/api/saved/{key}/new").json()
    assert seen["seen_at"] > "2000" and seen["new"] == 0  # the visit is recorded: nothing is newer than it

    r = c.post(f"/library/saved/{key}/delete", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/library"
    assert c.get(f"/saved/{key}").status_code == 404

    assert c.post("/library/tags/delete", data={"tag": "robots"}, follow_redirects=False).status_code == 403
    r = c.post("/library/tags/delete", data={"tag": "robots", "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/library"
    assert c.get("/api/tags").json()["tags"] == [] and c.get("/api/tags/robots").status_code == 404


def test_post_saved_takes_query_as_get_names_it_and_refuses_unknown_fields(site):
    """POST /api/saved read only `q`: {"query": "mixture of experts", "category": "cs.LG"} was a
    201 saving "all of cs.LG" ("query": ""). Now `query` (GET's name) is read, a GET item posts
    back, and a field the endpoint does not know is a 400 naming it."""
    c, tok, _ = site
    auth = {"Authorization": f"Bearer {tok}"}
    body = {"name": "moe", "query": "mixture of experts", "category": "cs.LG"}
    r = c.post("/api/saved", json=body, headers=auth)
    assert r.status_code == 201 and r.json()["query"] == "mixture of experts"
    assert r.json()["params"] == {"category": "cs.LG"}
    item = c.get("/api/saved").json()["saved_searches"][0]
    assert item["query"] == "mixture of experts"
    again = c.post("/api/saved", json=item, headers=auth)  # the same search: kept as it is
    assert again.status_code == 201 and again.json() == {k: item[k] for k in again.json()}
    r = c.post("/api/saved", json={"name": "x", "query": "moe", "categroy": "cs.LG", "sort": "newest"}, headers=auth)
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("POST /api/saved takes no categroy, sort;")
    r = c.post("/api/saved", json={"name": "x", "query": "moe", "params": {"categroy": "cs.LG"}}, headers=auth)
    assert r.status_code == 400 and "no filter categroy" in r.json()["error"]["message"]
    r = c.post("/api/saved", json={"name": " ", "q": "x"}, headers=auth)
    assert r.status_code == 400 and r.json()["error"]["message"] == "a saved search needs a name"
    r = c.post("/api/saved", json={"name": "y", "q": "moe", "query": "moe"}, headers=auth)
    assert r.status_code == 400 and "send one" in r.json()["error"]["message"]
    assert [s["name"] for s in c.get("/api/saved").json()["saved_searches"]] == ["moe"]  # nothing else saved
    spec = c.get("/openapi.json").json()["paths"]["/api/saved"]["post"]
    fields = spec["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert {"name", "query", "params", "category", "replace"} <= set(fields) and {"201", "401", "409"} <= set(
        spec["responses"]
    )


def test_a_taken_name_is_refused_unless_replace_is_asked(site):
    """The API and the web's "Save this search" replaced a saved search of the same name silently
    (the CLI refused): a second tab or script clobbered it. Now a 409 everywhere, unless asked."""
    c, tok, _ = site
    auth = {"Authorization": f"Bearer {tok}"}
    first = c.post("/api/saved", json={"name": "moe", "query": "mixture of experts"}, headers=auth).json()
    r = c.post("/api/saved", json={"name": "moe", "query": "mixture of experts routing"}, headers=auth)
    assert r.status_code == 409
    assert r.json()["error"]["message"] == (
        f"""a saved search named 'moe' exists (#{first["id"]}: 'mixture of experts'); """
        """choose another name, or send "replace": true to replace it"""
    )
    assert c.get("/api/saved").json()["saved_searches"][0]["query"] == "mixture of experts"
    r = c.post("/api/saved", json={"name": "moe", "query": "experts routing", "replace": True}, headers=auth)
    assert r.status_code == 201 and r.json()["id"] == first["id"] and r.json()["query"] == "experts routing"
    # the web: "Save this search" on the filtered search, then on the unfiltered one
    c.post("/library/login", data={"token": tok})
    page = c.get("/", params={"q": "robot", "category": "cs.RO"}).text
    csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', page).group(1)
    assert 'data-testid="save-search-name"' in page
    form = {"csrf": csrf, "q": "robot", "next": "/?q=robot"}
    assert c.post("/library/saved", data={**form, "category": "cs.RO"}, follow_redirects=False).status_code == 303
    r = c.post("/library/saved", data=form, follow_redirects=False)
    assert r.status_code == 409 and "save this one under another name" in r.text
    saved = {s["name"]: s["params"] for s in c.get("/api/saved").json()["saved_searches"]}
    assert saved["robot"] == {"category": "cs.RO", "lang": "en"}  # kept
    r = c.post("/library/saved", data={**form, "name": "robot, all"}, follow_redirects=False)
    assert r.status_code == 303
    assert {s["name"] for s in c.get("/api/saved").json()["saved_searches"]} == {"moe", "robot", "robot, all"}


def test_a_page_past_the_last_says_so_on_every_listing(site):
    """One rule for the daily page and a tag's recommendations, as the search page has: a page
    past the last says so with a link to it (the daily page was empty past its last page and a 400
    from 10,000; the tag page showed page 10 for 100000 and page 1 for 0), page 0 is the service's
    400, and a per_page over the limit is a 400 naming it (/daily.json used 30 silently)."""
    c, tok, ids = site
    day = c.get("/daily.json").json()["start"]
    last = c.get("/daily.json", params={"day": day, "per_page": 5}).json()["pages"]
    for page in (last + 1, 99999):
        r = c.get("/daily", params={"day": day, "page": page})
        assert r.status_code == 200 and f"Page {page} is past the last page, {last}." in r.text
    r = c.get("/daily", params={"day": day, "page": 99999, "per_page": 5})
    assert f'<a href="/daily?day={day}&amp;page={last}&amp;per_page=5">Go to page {last}</a>' in r.text
    assert "page must be between 1 and" in c.get("/daily", params={"page": 0}).text
    r = c.get("/daily.json", params={"per_page": 200})
    assert r.status_code == 400 and r.json()["error"]["message"] == "per_page must be between 1 and 100"
    c.post("/api/tags/robots/papers", json={"ids": ids[:5]}, headers={"Authorization": f"Bearer {tok}"})
    r = c.get("/tag/robots", params={"page": 100000})
    said = re.search(r"Page 100000 is past the last page, (\d+)\.", r.text)
    assert r.status_code == 200 and said and f'<a href="?page={said[1]}">Go to page {said[1]}</a>' in r.text
    recs = r.text[r.text.index('data-testid="recommendations"') :]
    assert 'class="card"' not in recs  # no list under the message
    for bad in (0, -3):
        r = c.get("/tag/robots", params={"page": bad})
        assert r.status_code == 400 and "page must be between 1 and 50" in r.text
    assert '<a rel="prev" class="pg" href="?page=1">' in c.get("/tag/robots", params={"page": 2}).text
    assert "第 99999 页超出了最后一页" in c.get("/daily", params={"day": day, "page": 99999, "lang": "zh"}).text


def test_the_library_pages_keep_the_language_chosen_on_them(site):
    """/library?lang=zh showed Chinese but set no cookie, unlike the search, daily and paper
    pages, so the next click (a tag, signing in) went back to English."""
    client, _, ids = site
    r = client.get("/library?lang=zh")
    assert r.status_code == 200 and r.cookies.get("lang") == "zh"
    assert 'lang="zh' in client.get("/library").text  # the cookie, no ?lang=, Chinese still
    assert client.get("/for-you?lang=en").cookies.get("lang") == "en"


BUSY = "2025-03-19"


@pytest.fixture
def busy(tmp_path):
    """The 314 sample papers all listed on BUSY (a busy arXiv day lists 500+ in cs.CV or cs.LG:
    more than the 200 "for you" scored), a tag of five robot papers, and the site over them."""
    import json

    from paperdex.ingest import import_vectors, ingest_file
    from paperdex.store import Store
    from tests.conftest import DATA, PAPERS

    lines = [{**json.loads(x), "listed": BUSY} for x in PAPERS.read_text().splitlines()]
    (tmp_path / "busy.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    s = Store(tmp_path / "busy")
    ingest_file(s, tmp_path / "busy.jsonl")
    import_vectors(s, DATA / "papers.minilm.f16.npy", DATA / "papers.ids.txt", "all-MiniLM-L6-v2")
    robots = [x["id"] for x in lines if "cs.RO" in x["categories"]][:5]
    L.add_to_tag(s, "robots", robots)
    yield TestClient(create_app(s.data_dir, pool_size=1), base_url="http://localhost"), s, [x["id"] for x in lines]
    s.close()


def test_for_you_api_takes_per_page_as_search_and_daily_do(busy):
    """Before: /api/for-you read only `k` for its page size, where /api/search and /api/daily read
    `per_page` and its own answer reports `per_page`: ?per_page=100 was ignored (50 a page, 7
    pages). Now per_page is read, k still is (its older name), and the two differing is a 400."""
    c, _, _ = busy
    for params in ({"per_page": 100}, {"k": 100}, {"per_page": 100, "k": 100}):
        got = c.get("/api/for-you", params={"day": BUSY, **params}).json()
        assert (got["per_page"], got["pages"], len(got["papers"])) == (100, 4, 100), params
    assert c.get("/api/for-you", params={"day": BUSY}).json()["per_page"] == 50
    both = c.get("/api/for-you", params={"day": BUSY, "per_page": 100, "k": 20})
    assert both.status_code == 400
    assert both.json()["error"]["message"] == "per_page=100 and k=20 (its older name) differ; give one"
    over = c.get("/api/for-you", params={"day": BUSY, "per_page": service.MAX_K + 1})
    assert over.json()["error"]["message"] == f"per_page must be between 1 and {service.MAX_K}"
    spec = {p["name"]: p for p in c.get("/openapi.json").json()["paths"]["/api/for-you"]["get"]["parameters"]}
    assert spec["per_page"]["schema"]["maximum"] == service.MAX_K and spec["k"]["deprecated"] is True


def test_for_you_language_switch_keeps_the_day_as_the_pager_does(busy):
    """Before: /for-you?lang=zh&page=2 (no day) linked its language switch to
    /for-you?lang=en&page=2, with no day, where its pager links name the day shown: after a
    newer day came in, the switch showed another day. Now the switch names the day too."""
    c, _, _ = busy
    html = c.get("/for-you", params={"lang": "zh", "page": 2}).text
    switch = re.search(r'class="lang-switch" href="([^"]+)"', html)
    assert switch, html[:500]
    href = switch[1].replace("&amp;", "&")
    assert f"day={BUSY}" in href and "lang=en" in href and "page=2" in href, href
    pager = [u.replace("&amp;", "&") for u in re.findall(r'href="(/for-you\?[^"]*page=[^"]*)"', html)]
    assert pager and all(f"day={BUSY}" in u for u in pager), pager  # the pager's links, as before


def test_for_you_pages_through_every_paper_of_a_busy_day(busy):
    """A day of 314 papers: /for-you scored the first 200 of the listing and showed no pages, so
    114 were never ranked. Every paper of the day but the tag's own is scored now, the pages
    are slices of one order (page 2 holds none of page 1), `total` and `pages` are true, and the
    first 200 keep their order among themselves."""
    c, s, listing = busy
    first = c.get("/api/for-you", params={"day": BUSY, "k": 100}).json()
    counts = {k: first[k] for k in ("total", "day_total", "page", "pages", "per_page")}
    assert counts == {"total": 309, "day_total": 314, "page": 1, "pages": 4, "per_page": 100}  # 5 in the tag
    pages = [first] + [c.get("/api/for-you", params={"day": BUSY, "k": 100, "page": n}).json() for n in (2, 3, 4)]
    ids = [p["id"] for got in pages for p in got["papers"]]
    assert [len(got["papers"]) for got in pages] == [100, 100, 100, 9]
    assert len(set(ids)) == len(ids) == 309 and not {p["id"] for p in first["papers"]} & set(ids[100:200])
    scores = [p["score"] for got in pages for p in got["papers"]]
    assert scores == sorted(scores, reverse=True)
    assert max(listing.index(i) for i in ids[:100]) >= 200  # a paper past the first 200 made the first page
    rowids = [s.rowid(i) for i in listing[:200]]  # what was scored before: ranked as it was
    scored = R.for_you(s, rowids)
    before = [s.paper_id(r) for r in sorted((r for r in rowids if r in scored), key=lambda r: -scored[r][0])]
    assert [i for i in ids if i in set(listing[:200])] == before
    past = c.get("/api/for-you", params={"day": BUSY, "k": 100, "page": 5})
    assert past.status_code == 200 and past.json()["papers"] == [] and past.json()["pages"] == 4
    assert past.json()["total"] == 309
    for bad in (0, service.MAX_PAGE + 1):
        r = c.get("/api/for-you", params={"day": BUSY, "page": bad})
        assert r.status_code == 400 and "page must be between 1 and" in r.json()["error"]["message"]


def test_the_for_you_page_has_pages_and_says_when_one_is_past_the_last(busy):
    c, s, listing = busy

    def shown(html: str) -> list[str]:
        return re.findall(r'data-id="([^"]+)"', html[html.index('data-testid="for-you"') :])

    one = c.get("/for-you", params={"day": BUSY}).text
    two = c.get("/for-you", params={"day": BUSY, "page": 2}).text
    assert len(set(shown(one))) == len(set(shown(two))) == 50 and not set(shown(one)) & set(shown(two))
    assert f'href="/for-you?day={BUSY}&amp;page=2"' in one and 'aria-current="page">7<' not in one
    assert 'class="pg current" aria-current="page">2</span>' in two
    assert "309 of the day&#39;s 314 papers" in one
    last = c.get("/for-you", params={"day": BUSY, "page": 7}).text
    assert len(set(shown(last))) == 9 and 'data-testid="past-last-page"' not in last
    r = c.get("/for-you", params={"day": BUSY, "page": 8})
    assert r.status_code == 200 and "Page 8 is past the last page, 7." in r.text and not shown(r.text)
    assert f'<a href="/for-you?day={BUSY}&amp;page=7">Go to page 7</a>' in r.text
    zh = c.get("/for-you", params={"day": BUSY, "page": 8, "lang": "zh"}).text
    assert "第 8 页超出了最后一页（第 7 页）。" in zh and "转到第 7 页" in zh
    assert "当日 314 篇中的 309 篇" in c.get("/for-you", params={"day": BUSY, "lang": "zh"}).text
    r = c.get("/for-you", params={"day": BUSY, "page": 0, "lang": "en"})
    assert r.status_code == 400 and "page must be between 1 and" in r.text


def test_library_import_is_all_or_nothing_and_names_a_bad_field(site):
    """POST /api/library/import with a tag repeating an id this store lacks was a 500
    (sqlite3.IntegrityError) that left the tag made and empty; `"papers": "notalist"` a 500 too."""
    c, tok, ids = site
    auth = {"Authorization": f"Bearer {tok}"}
    body = {"format": "paperdex-library", "version": 1, "tags": [{"name": "dup2", "papers": ["nope-1", "nope-1"]}]}
    r = c.post("/api/library/import", json=body, headers=auth)
    assert r.status_code == 200 and r.json() == {"tags": 1, "papers": 1, "dismissed": 0, "saved_searches": 0}
    assert c.get("/api/tags/dup2").json()["papers"] == ["nope-1"]
    bad = {**body, "tags": [{"name": "dup3", "papers": [ids[0]]}, {"name": "dup4", "papers": "notalist"}]}
    r = c.post("/api/library/import", json=bad, headers=auth)
    assert r.status_code == 400, r.text
    said = r.json()["error"]["message"]
    assert said == 'the library file\'s tags[1].papers: must be a list, got "notalist"; nothing was imported'
    assert [t["name"] for t in c.get("/api/tags").json()["tags"]] == ["dup2"]
    r = c.post("/api/library/import", json={**body, "version": "1"}, headers=auth)
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("the library file's version: must be")


def test_a_tag_of_papers_not_in_the_store_yet_says_so(site):
    """/tag/x whose papers are all not in this store said "3 papers" and listed none."""
    c, tok, ids = site
    auth = {"Authorization": f"Bearer {tok}"}
    body = {"format": "paperdex-library", "tags": [{"name": "later", "papers": ["gone-1", "gone-2", ids[0]]}]}
    assert c.post("/api/library/import", json=body, headers=auth).status_code == 200
    page = c.get("/tag/later?lang=en").text
    assert "2 of these papers are not in this store yet" in page and "gone-1" in page and "gone-2" in page
    assert "这些论文中有 2 篇尚不在本库中" in c.get("/tag/later?lang=zh").text


def test_a_bibtex_export_of_a_missing_tag_is_a_404_naming_it(site, store):
    """GET /api/library/export?format=bibtex&tag=nonexist was an empty 200 (an empty .bib), and
    `tag export --format bibtex --tag nonexist` an empty file with exit 0."""
    from click.testing import CliRunner

    from paperdex.cli import cli

    c, _, _ = site
    r = c.get("/api/library/export?format=bibtex&tag=nonexist")
    assert r.status_code == 404 and r.json()["error"]["message"] == "no tag named 'nonexist'"
    args = ["--data-dir", str(store.data_dir), "tag", "export", "--format", "bibtex", "--tag", "nonexist"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 1 and "no tag named 'nonexist'" in r.output and "Traceback" not in r.output

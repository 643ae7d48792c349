"""Server-rendered pages: what a reader sees, in both languages, with hostile paper text inert."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from webstore import DAY_WITH_PAGES, HOSTILE_ID

from paperdex.web.app import create_app


def _cards(html: str) -> list[str]:
    return re.findall(r'<article class="card" data-id="([^"]+)"', html)


def test_search_page_shows_cards_in_the_api_order(client):
    html = client.get("/", params={"q": "zebrafinch attention"}).text
    api = client.get("/api/search", params={"q": "zebrafinch attention"}).json()
    assert _cards(html) == [h["id"] for h in api["hits"]]  # one code path for both
    assert f'href="/paper/{HOSTILE_ID}?q=zebrafinch+attention"' in html
    assert "Why this matched" in html and "Keyword rank" in html
    assert 'class="facets"' in html and "cs.LG" in html


def test_hostile_text_is_escaped_everywhere(client):
    for html in (
        client.get("/", params={"q": "zebrafinch"}).text,
        client.get(f"/paper/{HOSTILE_ID}").text,
        client.get("/daily", params={"day": DAY_WITH_PAGES, "category": "cs.LG"}).text,
    ):
        assert "<script>alert" not in html and "<script>window" not in html
        assert "<img src=x" not in html and "<b>bold tag</b>" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or "&lt;script&gt;alert(&#39;title&#39;)" in html
        assert "javascript:" not in html  # the code link in the data is dropped, not linked
    paper = client.get(f"/paper/{HOSTILE_ID}").text
    assert "&lt;img src=x onerror=&#34;window.__pwned=1&#34;&gt;" in paper or "&lt;img src=x onerror=" in paper
    assert "&lt;i&gt;hostile&lt;/i&gt; comment" in paper


def test_security_headers(client):
    r = client.get("/")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_latex_is_legible(client):
    html = client.get(f"/paper/{HOSTILE_ID}").text
    html = re.sub(r"<pre id=\"bibtex-text\".*?</pre>", "", html, flags=re.S)  # BibTeX keeps TeX
    assert '<span class="math">β</span>-VAE' in html  # its text says it all: no KaTeX needed
    assert "O(n²)" in html and "ℝ" in html and "<strong>much faster</strong>" in html
    assert "<strong>robust</strong>" in html and "95%" in html
    assert "\\textbf" not in html and "**robust**" not in html and "$\\beta$" not in html


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_authors_cut_after_ten(client):
    en = _text(client.get("/", params={"q": "zebrafinch"}).text)
    assert "Author Number9, Author Number10 et al." in en and "Author Number11" not in en
    zh = _text(client.get("/", params={"q": "zebrafinch", "lang": "zh"}).text)
    assert "Author Number9, Author Number10 等" in zh  # the Chinese venue search's style
    paper = client.get(f"/paper/{HOSTILE_ID}").text  # the paper page lists everyone
    assert "Author Number12" in paper


def test_the_author_searched_for_shows_past_the_tenth_and_marked(client):
    html = client.get("/", params={"q": 'zebrafinch au:"Number12 Author"'}).text  # family name first
    assert _cards(html) == [HOSTILE_ID]
    assert "<mark>Author Number12</mark>" in html and "<mark>Author Number1</mark>" not in html
    assert "Author Number9, Author Number10, … Author Number12 et al." in _text(html)  # Number11 stays cut
    assert "Author Number11" not in _text(html)


def test_language_by_accept_language_cookie_and_switch(client):
    assert '<html lang="zh-CN">' in client.get("/", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}).text
    assert '<html lang="en">' in client.get("/", headers={"Accept-Language": "en-US,en;q=0.9,zh;q=0.5"}).text
    r = client.get("/daily", params={"lang": "zh"})
    assert "每日论文" in r.text and r.cookies.get("lang") == "zh"
    client.cookies.set("lang", "zh")
    try:
        html = client.get("/", params={"q": "zebrafinch"}, headers={"Accept-Language": "en"}).text
        assert "篇论文匹配" in html
        assert 'href="/?q=zebrafinch&amp;lang=en"' in html  # the switch keeps the query
    finally:
        client.cookies.clear()


def test_chinese_query_in_the_same_box(client):
    r = client.get("/", params={"q": "斑胸草雀 注意力 模型"})
    assert r.status_code == 200 and _cards(r.text)


def test_bad_query_shows_message_not_trace(client):
    r = client.get("/", params={"q": 'ti:"open'})
    assert r.status_code == 400
    assert "unbalanced quote" in r.text and "Traceback" not in r.text
    assert 'value="ti:&#34;open"' in r.text  # the query stays in the box to be fixed


def test_paper_page(client):
    r = client.get(f"/paper/{HOSTILE_ID}")
    assert r.status_code == 200
    assert "Similar papers" in r.text and 'data-id="2599.00002"' in r.text
    assert "@article{" in r.text and "arXiv preprint arXiv:2599.00001" in r.text
    assert 'href="https://arxiv.org/pdf/2599.00001"' in r.text
    chorus = client.get("/paper/2599.00002").text
    assert 'href="https://github.com/example/zebrafinch"' in chorus and "★ 1.2k" in chorus
    r = client.get("/paper/0000.00000")
    assert r.status_code == 404 and "Not found" in r.text


def test_daily_page_pages_and_neighbours(client):
    r = client.get("/daily", params={"day": DAY_WITH_PAGES})
    assert r.status_code == 200
    assert len(_cards(r.text)) == 30 and 'rel="next"' in r.text
    assert 'href="/daily?day=2025-03-20"' in r.text
    p2 = client.get("/daily", params={"day": DAY_WITH_PAGES, "page": 2}).text
    assert not set(_cards(p2)) & set(_cards(r.text))
    latest = client.get("/daily").text
    assert "Daily Papers" in latest and 'data-testid="next-day"' not in latest
    assert client.get("/daily", params={"day": "not-a-day"}).status_code == 400


def test_static_assets_are_local(client):
    html = client.get("/").text
    assert not re.search(r'(src|href)="(https?:)?//', html.split("<main")[0])
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/static/app.js").status_code == 200


def test_api_reference_page_is_local(client):
    html = client.get("/api/docs").text
    assert "/api/search" in html and "/api/papers/{pid}/similar" in html and "Search papers" in html
    assert "cdn" not in html.lower()


def test_links_stay_on_this_site(client):
    r = client.get("//evil.example/x")
    assert r.status_code == 404
    assert 'href="//' not in r.text


def test_counts_read_naturally():
    from paperdex.web.i18n import t

    assert t("en", "tier_match", n=1) == "1 paper matches" and t("en", "tier_match", n=3) == "3 papers match"
    assert t("zh", "papers_in", n=1, span="2025-03-19") == "2025-03-19 共 1 篇论文"


def test_core_notices_are_translated(tmp_path):
    """A store without vectors searches by words and says so, in the reader's language."""
    from paperdex.paper import Paper
    from paperdex.store import Store

    with Store(tmp_path / "novec") as s:
        s.upsert([Paper(id="2501.00001", title="Diffusion for proteins", abstract="We study diffusion.")])
    c = TestClient(
        create_app(tmp_path / "novec", pool_size=1), base_url="http://localhost", raise_server_exceptions=False
    )
    en = c.get("/", params={"q": "diffusion", "lang": "en"}).text
    zh = c.get("/", params={"q": "diffusion", "lang": "zh"}).text
    assert "semantic search is off" in en
    assert "语义检索尚未启用" in zh and "semantic search is off" not in zh


def test_a_page_past_the_last_says_so_not_that_nothing_matches(client):
    last = client.get("/api/search", params={"q": "zebrafinch"}).json()["pages"]
    html = client.get("/", params={"q": "zebrafinch", "page": last + 4}).text
    assert 'data-testid="past-last-page"' in html and "No papers match" not in html
    assert f"Page {last + 4} is past the last page of this search, page {last}." in " ".join(_text(html).split())
    assert f"page={last}" in html


def test_a_chinese_name_typed_as_a_word_links_the_author_search(client):
    html = client.get("/", params={"q": "刘子玮"}).text  # Ziwei Liu, in the fixture's papers
    assert 'data-testid="as-author"' in html and 'href="/?q=au%3A%E5%88%98%E5%AD%90%E7%8E%AE"' in html


def test_the_last_page_the_window_reaches_says_why_no_page_follows(client, monkeypatch):
    """/?q=model&page=500 showed "51,809 papers match" and a pager ending at 500 without a word
    why; the last page the 10,000-result window reaches says it, in the page's language."""
    from paperdex.search import engine, planning

    for module in (engine, planning):  # a window the web store's listing exceeds
        monkeypatch.setattr(module, "MAX_WINDOW", 40)
    first = client.get("/api/search?q=learning&per_page=20").json()
    assert first["listed"] > 40 and first["pages"] == 2
    en = client.get("/?q=learning&per_page=20&page=2")
    assert en.status_code == 200 and len(_cards(en.text)) == 20
    assert "results are listed up to number 40; narrow the query or sort differently" in en.text
    zh = client.get("/?q=learning&per_page=20&page=2&lang=zh")
    assert "结果最多列出到第 40 条；请缩小查询范围或换一种排序" in zh.text
    assert "listed up to number" not in client.get("/?q=learning&per_page=20").text


def _error(html: str) -> str:
    m = re.search(r'data-testid="error">([^<]*)<', html)
    assert m, html[:300]
    return m.group(1).replace("&#39;", "'")


def test_a_page_number_that_is_no_number_is_said_in_the_pages_language(client):
    """Before: /for-you?page=abc&lang=zh (and /, /daily, /tag/NAME) said pydantic's English, "page:
    Input should be a valid integer, unable to parse string as an integer", where page=0 is said in
    Chinese. Now the page's language, and the API the same rule in English."""
    for path in ("/for-you", "/", "/daily", "/tag/reading"):
        zh = client.get(path, params={"page": "abc", "lang": "zh"})
        assert zh.status_code == 400 and _error(zh.text) == "页码 应为整数，收到 'abc'", path
        en = client.get(path, params={"page": "abc", "lang": "en"})
        assert en.status_code == 400 and _error(en.text) == "page must be a whole number, got 'abc'", path
    both = client.get("/", params={"page": "abc", "per_page": "1.5", "lang": "zh"})
    assert _error(both.text) == "页码 应为整数，收到 'abc'；每页数量 应为整数，收到 '1.5'"
    api = client.get("/api/for-you", params={"page": "abc"})
    assert api.status_code == 400
    assert api.json()["error"]["message"] == "page must be a whole number, got 'abc'"
    zero = client.get("/api/search", params={"q": "x", "page": 0}).json()
    assert zero["error"]["message"] == "page must be at least 1"

"""Issue 34, the pages a researcher reads every morning, without a browser: math written \\(…\\)
and \\[…\\] typeset like $…$ (and still escaped), static files a browser may keep, a paper page
without noise (sources only when they say something, the OpenReview forum, similar papers above
the BibTeX), recommendations whose "Why" is closed and says the model once, a compact day on one
page, the day's completeness, and a "Top" and "Trending" that say what they rank by."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient
from webstore import (
    COMFORT_DAY,
    COMFORT_MATH_ID,
    COMFORT_MERGED_ID,
    COMFORT_MISSING_ID,
    COMFORT_STARS_ID,
    DAY_WITH_PAGES,
    build_comfort,
)

from paperdex.discover import library as L
from paperdex.web.app import create_app


@pytest.fixture(scope="module")
def comfort_app(web_dir, tmp_path_factory):
    return create_app(build_comfort(web_dir, tmp_path_factory.getbasetemp()), pool_size=1)


@pytest.fixture
def cc(comfort_app) -> TestClient:
    """A fresh client per test: no language cookie carried over."""
    return TestClient(comfort_app, base_url="http://localhost", raise_server_exceptions=False)


def _card(page: str, pid: str) -> str:
    return page[page.index(f'data-id="{pid}"') :].split("</article>")[0]


def _text(s: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", s)))


def test_math_in_backslash_parens_and_brackets_is_typeset_and_escaped(cc):
    page = cc.get(f"/paper/{COMFORT_MATH_ID}").text
    title = page[page.index('class="paper-title"') :].split("</h1>")[0]
    # the title's \(…\) is a math span KaTeX typesets, its text form readable without script
    assert 'data-tex="\\frac{\\eta_E}{\\eta_W} \\propto \\sqrt{d}"' in title
    assert "\\(" not in title and "frac" not in _text(title)
    assert "η_E/η_W ∝" in _text(title)  # the text form, for a reader without script
    abstract = page[page.index('data-testid="abstract"') :].split("</p>")[0]
    assert 'data-tex="\\frac{\\eta_E}{\\eta_W} \\propto d^{1/2}"' in abstract
    assert 'data-tex="\\sum_{i=1}^{n} \\hat{x}_i^{2} \\le \\frac{1}{\\epsilon}"' in abstract
    assert "\\[" not in abstract and "\\(" not in abstract
    # markup inside the math delimiters is text, never a tag
    assert "<img" not in page and "<script>alert" not in page and "&lt;img src=x onerror=alert(1)&gt;" in abstract
    # the page loads KaTeX for it
    assert "/static/katex/katex.min.js" in page


def test_static_files_are_versioned_and_kept(cc):
    page = cc.get("/").text
    css = re.search(r'href="(/static/style\.css\?v=[0-9a-f]{8,})"', page)
    js = re.search(r'src="(/static/app\.js\?v=[0-9a-f]{8,})"', page)
    assert css and js, "static URLs carry their content's version"
    r = cc.get(css.group(1))
    assert r.status_code == 200 and r.headers["etag"]
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    # without the version (or with an old one) the browser revalidates: a 304 costs no body
    for url in ("/static/style.css", "/static/style.css?v=0000000000"):
        r = cc.get(url)
        assert r.headers["cache-control"] == "no-cache", url
        assert cc.get(url, headers={"If-None-Match": r.headers["etag"]}).status_code == 304
    assert "immutable" in cc.get(js.group(1)).headers["cache-control"]


def test_paper_page_sources_forum_and_similar_before_bibtex(cc):
    plain = cc.get(f"/paper/{COMFORT_STARS_ID}").text
    assert ">Sources<" not in plain and ">file<" not in plain  # "Sources: file" tells nobody anything
    merged = cc.get(f"/paper/{COMFORT_MERGED_ID}").text
    assert re.search(r"<dt>Sources</dt><dd[^>]*>arXiv, OpenReview</dd>", merged)
    assert 'data-testid="openreview" href="https://openreview.net/forum?id=Zq9Fk2abcD"' in merged
    assert merged.index('class="similar"') < merged.index('class="bibtex')
    zh = cc.get(f"/paper/{COMFORT_MERGED_ID}", params={"lang": "zh"}).text
    assert "<dt>来源</dt>" in zh and "相似论文" in zh


def test_save_popover_has_a_visible_label():
    from pathlib import Path

    js = (Path(__file__).parents[2] / "paperdex/web/static/app.js").read_text()
    # the in-place form's tag box is named by a <label> the reader sees, not only aria-label
    assert 'createElement("label")' in js and "save-pop-label" in js


@pytest.fixture
def tagged(store):
    tok = L.create_token(store, "test")
    ids = [
        r[0]
        for r in store.conn.execute(
            "SELECT p.id FROM papers p JOIN paper_categories c ON c.paper = p.rowid WHERE c.category = 'cs.RO' LIMIT 5"
        )
    ]
    c = TestClient(create_app(store.data_dir, pool_size=1), base_url="http://localhost", raise_server_exceptions=False)
    assert (
        c.post("/api/tags/robots/papers", json={"ids": ids}, headers={"Authorization": f"Bearer {tok}"}).status_code
        == 200
    )
    return c


def test_recommendations_why_is_closed_and_says_the_model_once(tagged):
    page = tagged.get("/tag/robots").text
    recs = page[page.index('data-testid="recommendations"') :]
    assert recs.count("<article") >= 10
    assert not re.search(r'<details class="why rec-why"[^>]*\bopen\b', recs), "every Why box was open"
    assert recs.count("SVM: the default") == 0  # said once, above the list
    head = page[page.index('id="recommendations"') : page.index('data-testid="recommendations"')]
    assert head.count("SVM: the default; 5 saved") == 1 and 'data-testid="rec-model"' in head
    assert "recommendations" in tagged.get("/tag/robots", params={"lang": "zh"}).text


def test_compact_day_shows_the_whole_day_on_one_page(cc):
    d = cc.get("/daily.json", params={"day": DAY_WITH_PAGES}).json()
    assert d["total"] > 30
    page = cc.get("/daily", params={"day": DAY_WITH_PAGES, "layout": "compact"}).text
    assert page.count('<details class="row"') == d["total"]
    assert 'class="pager"' not in page
    cards = cc.get("/daily", params={"day": DAY_WITH_PAGES, "layout": "cards"}).text
    assert cards.count('<article class="card"') == 30 and 'class="pager"' in cards  # cards still page


def test_daily_says_whether_the_day_is_complete(cc):
    j = cc.get("/daily.json", params={"day": COMFORT_DAY}).json()
    assert j["completeness"] == {
        "state": "missing",
        "listed": 5,
        "held": 4,
        "missing": [COMFORT_MISSING_ID],
        "listings": ["cs.LG"],
        "next_retry": True,
    }
    page = cc.get("/daily", params={"day": COMFORT_DAY}).text
    line = _text(page[page.index('data-testid="completeness"') :].split("</p>")[0])
    assert "1 paper missing from arXiv's cs.LG listing" in line and "next sync" in line
    zh = cc.get("/daily", params={"day": COMFORT_DAY, "lang": "zh"}).text
    assert "arXiv 的 cs.LG 列表中有 1 篇论文尚未收录" in _text(zh)
    prev = j["prev"]
    jp = cc.get("/daily.json", params={"day": prev}).json()
    assert jp["completeness"]["state"] == "complete" and jp["completeness"]["missing"] == []
    assert "Complete: all" in _text(cc.get("/daily", params={"day": prev, "lang": "en"}).text)
    # a day no listing was read for says nothing it does not know
    assert cc.get("/daily.json", params={"day": DAY_WITH_PAGES}).json()["completeness"] is None


def test_top_without_upvotes_does_not_rank_by_stars(cc):
    page = cc.get("/daily", params={"day": COMFORT_DAY}).text
    ids = re.findall(r'<article class="card" data-id="([^"]+)"', page)
    assert ids[0] != COMFORT_STARS_ID and ids == sorted(ids), ids  # the listing's order
    said = _text(page[page.index('data-testid="ranked-by"') :].split("</p>")[0])
    assert "No Hugging Face upvotes" in said and "listing order" in said
    j = cc.get("/daily.json", params={"day": COMFORT_DAY}).json()
    assert "stars" not in j["ranked_by"] and j["papers"][0]["id"] != COMFORT_STARS_ID
    # the Stars sort is still there for who wants it
    stars = cc.get("/daily.json", params={"day": COMFORT_DAY, "sort": "stars"}).json()
    assert stars["papers"][0]["id"] == COMFORT_STARS_ID


def test_trending_without_upvotes_says_why(cc):
    page = cc.get("/daily", params={"view": "trending"}).text
    said = _text(page[page.index('data-testid="daily-count"') :].split("</p>")[0])
    assert "0 papers" not in said
    assert "Hugging Face upvotes" in said and "none" in said.lower()
    zh = _text(cc.get("/daily", params={"view": "trending", "lang": "zh"}).text)
    assert "Hugging Face 点赞" in zh

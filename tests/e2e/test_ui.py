"""What a researcher clicks through, in English and Chinese, in a real Chromium: an author
link, a category chip, a venue area, back to search with its state, the week view sorted by
upvotes, the filter drawer on a phone, and math typeset by the KaTeX the package serves.
Also writes the screenshots of home, search (en, zh), a paper and the week view at 1280 and
390 px into screenshots/."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect
from watched import watched_page
from webstore import SIGNALS_ID, SIGNALS_WEEK

LANGS = {"en": "en-US", "zh": "zh-CN"}
WORDS = {  # one interface word per language, to see the page is in it
    "en": {"filters": "Filters", "week": "Week", "upvotes": "Upvotes", "back": "Back to search", "et_al": "et al."},
    "zh": {"filters": "筛选", "week": "周", "upvotes": "点赞最多", "back": "返回检索", "et_al": "等"},
}


@pytest.fixture(params=["en", "zh"])
def lp(request, browser):
    """A page in one interface language (from the browser's Accept-Language), failing the test
    on any script error, console error (a CSP violation, a missing asset) or dialog."""
    lang = request.param
    ctx, p = watched_page(browser, viewport={"width": 1280, "height": 900}, locale=LANGS[lang])
    p.lang = lang
    yield p
    ctx.close()
    assert not p.events, p.events


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def _search(p, server: str, q: str) -> None:
    p.goto(server + "/")
    expect(p.locator("html")).to_have_attribute("lang", "zh-CN" if p.lang == "zh" else "en")
    box = p.get_by_role("searchbox")
    box.fill(q)
    box.press("Enter")
    expect(p.locator("article.card").first).to_be_visible()


def test_author_link(lp, server):
    _search(lp, server, "optimistic exploration linear MDP")
    card = lp.locator(f'article.card[data-id="{SIGNALS_ID}"]')
    card.locator("a.author", has_text="Bo Lindqvist").click()
    assert _query(lp.url)["q"] == 'au:"Bo Lindqvist"'
    expect(lp.get_by_role("searchbox")).to_have_value('au:"Bo Lindqvist"')
    expect(lp.locator("article.card")).to_have_count(1)
    expect(lp.locator(f'article.card[data-id="{SIGNALS_ID}"]')).to_be_visible()


def test_category_chip_matched_first(lp, server):
    _search(lp, server, "cat:cs.LG mixture-of-experts syntax")
    card = lp.locator('article.card[data-id="2599.00103"]')
    # its primary category is cs.CL; found by cat:cs.LG, the card shows cs.LG first
    expect(card.locator(".cats .chip").first).to_have_text("cs.LG")
    card.locator(".cats a.chip", has_text="cs.CL").click()
    assert _query(lp.url)["q"] == "cat:cs.CL"
    cards = lp.locator("article.card")
    expect(cards.first).to_be_visible()
    for chips in cards.locator(".cats").all_inner_texts():  # each hit is in cs.CL, shown first
        assert chips.split()[0] == "cs.CL", chips


def test_venue_area_link(lp, server):
    _search(lp, server, "mixture-of-experts syntax")
    lp.locator('article.card[data-id="2599.00103"] a.chip.area').click()
    assert _query(lp.url)["q"] == 'area:"Deep Learning · Large Language Models"'
    expect(lp.locator('article.card[data-id="2599.00103"]')).to_be_visible()
    expect(lp.locator("article.card")).to_have_count(1)


def test_back_to_search_keeps_state(lp, server):
    lp.goto(server + "/?q=learning&category=cs.CV&sort=newest&page=2")
    expect(lp.locator(".pager .current")).to_have_text("2")
    lp.locator("article.card h2 a").first.click()
    expect(lp.locator("h1.paper-title")).to_be_visible()
    back = lp.get_by_test_id("back")
    expect(back).to_contain_text(WORDS[lp.lang]["back"])
    back.click()
    assert _query(lp.url) == {"q": "learning", "category": "cs.CV", "sort": "newest", "page": "2"}
    expect(lp.get_by_role("searchbox")).to_have_value("learning")
    expect(lp.locator(".pager .current")).to_have_text("2")
    expect(lp.locator(".sortlinks a.on")).to_have_attribute("href", re.compile("sort=newest"))
    expect(lp.locator('input[name="category"]')).to_have_value("cs.CV")


def test_week_view_sorted_by_upvotes(lp, server):
    lp.goto(server + f"/daily?day={SIGNALS_WEEK}")
    lp.get_by_test_id("views").get_by_role("link", name=WORDS[lp.lang]["week"], exact=True).click()
    expect(lp.get_by_test_id("daily-count")).to_contain_text("2025-03-24 – 2025-03-30")
    lp.get_by_test_id("sorts").get_by_role("link", name=WORDS[lp.lang]["upvotes"]).click()
    assert _query(lp.url) == {"day": SIGNALS_WEEK, "view": "week", "sort": "upvotes"}
    ids = [c.get_attribute("data-id") for c in lp.locator("article.card").all()[:3]]
    assert ids == ["2599.00102", SIGNALS_ID, "2599.00103"]  # 120, 42, 7 upvotes
    expect(lp.locator("article.card").first.get_by_test_id("hf")).to_contain_text("120")
    # the count follows the category filter
    lp.locator(".catbar a", has_text="cs.CV").click()
    n = lp.locator("article.card").count()
    expect(lp.get_by_test_id("daily-count")).to_contain_text(str(n))
    assert "view=week" in lp.url and "sort=upvotes" in lp.url


def test_one_filter_control_on_mobile(lp, server):
    """On a phone there is one "Filters" control (the facets move into it), reachable by
    keyboard; its category links filter the results."""
    lp.set_viewport_size({"width": 390, "height": 844})
    _search(lp, server, "learning")
    expect(lp.locator("aside.facets")).to_be_hidden()  # no second control, no off-screen drawer
    summary = lp.locator("details.filters > summary")
    expect(summary).to_have_text(WORDS[lp.lang]["filters"])
    assert summary.bounding_box()["y"] < 300  # at the top, under the search box
    visible = [e for e in lp.locator("summary, label[role=button], [data-testid=open-filters]").all() if e.is_visible()]
    assert [e.inner_text() for e in visible if e.inner_text() in ("Filters", "Refine", "筛选", "筛选结果")] == [
        WORDS[lp.lang]["filters"]
    ]
    summary.focus()
    lp.keyboard.press("Enter")  # opened by keyboard
    facets = lp.get_by_test_id("facets-inline")
    expect(facets).to_be_visible()
    facets.locator("a", has_text="cs.CV").first.click()
    assert _query(lp.url)["category"] == "cs.CV"


def test_math_is_typeset_by_katex(lp, server):
    lp.goto(server + f"/paper/{SIGNALS_ID}")
    span = lp.locator('[data-testid="abstract"] .math[data-tex="\\\\tilde O(\\\\sqrt{T})"]')
    expect(span.locator(".katex")).to_be_visible()  # typeset in the browser, from /static/katex
    assert "\\tilde" not in lp.get_by_test_id("abstract").inner_text()
    expect(lp.locator("h1.paper-title .katex")).to_be_visible()


def test_bibtex_copy_button_beside_its_heading(lp, server):
    """The Copy button stood 12 px lower than "BibTeX", on the code block's top edge (issue 34's
    screenshots): now on the heading's line, above the block."""
    lp.goto(server + f"/paper/{SIGNALS_ID}")
    button, heading = lp.locator(".bibtex-head button.copy"), lp.locator(".bibtex-head h2")
    expect(button).to_be_visible()  # the clipboard API exists in Chromium
    b, h, pre = button.bounding_box(), heading.bounding_box(), lp.locator("#bibtex-text").bounding_box()
    assert abs((b["y"] + b["height"] / 2) - (h["y"] + h["height"] / 2)) <= 2, (b, h)
    assert b["y"] + b["height"] <= pre["y"] - 4, (b, pre)


def test_math_text_without_javascript(nojs_page, server):
    nojs_page.goto(server + f"/paper/{SIGNALS_ID}")
    abstract = nojs_page.get_by_test_id("abstract")
    expect(abstract).to_contain_text("Õ(√T)")  # readable text, no TeX commands
    assert "\\tilde" not in abstract.inner_text() and "citep" not in abstract.inner_text()
    expect(abstract.locator("a.extlink")).to_have_attribute("rel", "noopener nofollow")


def test_signals_on_card_and_paper(lp, server):
    _search(lp, server, "optimistic exploration linear MDP")
    card = lp.locator(f'article.card[data-id="{SIGNALS_ID}"]')
    expect(card.get_by_test_id("hf")).to_contain_text("42")
    expect(card.get_by_test_id("hf")).to_have_attribute("href", "https://huggingface.co/papers/2599.00101")
    expect(card.get_by_test_id("code")).to_contain_text("2.1k")
    expect(card.get_by_test_id("project")).to_have_attribute("href", "https://example.org/optimistic")
    expect(card.locator("a.chip.venue")).to_have_text("ICML 2025")
    expect(card.get_by_test_id("comment")).to_contain_text("Accepted at ICML 2025")
    for a in card.locator('a[href^="http"]').all():
        assert a.get_attribute("rel") == "noopener nofollow"
    card.locator("h2 a").click()
    expect(lp.get_by_test_id("decision-text")).to_have_text("Accepted" if lp.lang == "en" else "已接收")
    expect(lp.locator(".meta .cats .chip")).to_have_count(3)  # all categories, 68T05 as text


def _shot(p, shots, name: str, shows) -> None:
    """Screenshots at 1280 px (the whole page) and 390 px of a page showing `shows` (a locator)
    at both widths, and fitting each without a sideways scroll."""
    for width, height in ((1280, 900), (390, 844)):
        p.set_viewport_size({"width": width, "height": height})
        expect(shows).to_be_visible()
        p.wait_for_timeout(150)  # fonts and KaTeX settle
        assert p.evaluate("document.documentElement.scrollWidth") <= width, f"{name} is wider than {width} px"
        p.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=width == 1280)
    p.set_viewport_size({"width": 1280, "height": 900})


def test_screenshots(browser, server, shots):
    """Each page shows what its screenshot is of: the store's size on home, marked words in
    the results, typeset math on a paper, the week ranked by upvotes, Chinese results."""
    for lang in ("en", "zh"):
        ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale=LANGS[lang])
        p = ctx.new_page()
        if lang == "en":
            p.goto(server + "/")
            expect(p.get_by_test_id("store-stats")).to_contain_text("papers")
            _shot(p, shots, "home", p.get_by_test_id("store-stats"))
            p.goto(server + "/?q=optimistic+exploration+regret")
            _shot(p, shots, "search", p.locator("article.card mark").first)
            p.goto(server + f"/paper/{SIGNALS_ID}")
            _shot(p, shots, "paper", p.locator(".katex").first)
            p.goto(server + f"/daily?day={SIGNALS_WEEK}&view=week&sort=upvotes")
            expect(p.locator('[data-view="week"][aria-current]')).to_be_visible()
            votes = [int(v.strip("▲ ")) for v in p.locator("article.card .upvotes").all_inner_texts()]
            assert len(votes) > 1 and votes == sorted(votes, reverse=True), votes
            _shot(p, shots, "daily-week", p.locator("article.card").first)
        else:
            p.goto(server + "/?q=扩散模型+图像编辑")
            _shot(p, shots, "search-zh", p.locator("article.card").first)
            p.goto(server + "/")
            expect(p.get_by_test_id("store-stats")).to_contain_text("篇")
            _shot(p, shots, "home-zh", p.get_by_test_id("store-stats"))
        ctx.close()

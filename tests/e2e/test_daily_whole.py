"""A morning scan in one sitting (issue 34), in a real Chromium on the bundled sample (the
3,077 papers of `paperdex demo`): the compact view brings the rest of a 172-paper day in as the
reader scrolls (a plain "more" link without script), the j/k/x keys cross from one part to the
next, the first paper starts in the first screen of a desktop (1280×800) and a phone (390×844)
on / and /daily, and the day says whether it is complete and what ranked it. Writes the
screenshots of the compact day (1280 and 390 px, English and Chinese) into screenshots/."""

from __future__ import annotations

import re

import httpx
import pytest
from live_server import in_thread
from playwright.sync_api import expect
from watched import watched_page

from paperdex.discover import feed
from paperdex.ingest import load_sample
from paperdex.sources import completeness
from paperdex.store import Store
from paperdex.web.views import daily as daily_view

LANGS = {"en": "en-US", "zh": "zh-CN"}
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
BIG_DAY = "2025-05-20"  # the sample's largest day: 172 papers, more than one part of the compact view
MISSING = "2505.99999"  # named by the day's recorded arXiv listing, not in the store
QUIET_DAY = "2025-03-25"  # 137 papers, none with upvotes or stars


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A server over the bundled sample, with the arXiv listing a sync would have recorded for
    BIG_DAY (every paper of the day and one more); (base URL, the day's paper count)."""
    from paperdex.web.app import create_app

    d = tmp_path_factory.mktemp("sample") / "store"
    with Store(d) as st:
        load_sample(st)
        ids = [p.id for p in feed.listing(st, "day", BIG_DAY, sort="newest", per_page=200).papers]
        completeness.record(st, "cs.LG", BIG_DAY, [*ids, MISSING], [])
    with in_thread(create_app(d, pool_size=1)) as base:
        yield base, len(ids)


def _open(browser, viewport, lang="en", **kw):
    """A page that fails the test on a script error, a console error or a dialog."""
    return watched_page(browser, viewport=viewport, locale=LANGS[lang], **kw)


def _day_ids(base: str) -> list[str]:
    """The day's papers in the page's order ("Top"), page after page of /daily.json."""
    out: list[str] = []
    page, pages = 1, 1
    while page <= pages:
        j = httpx.get(f"{base}/daily.json", params={"day": BIG_DAY, "page": page}).json()
        out += [p["id"] for p in j["papers"]]
        page, pages = page + 1, j["pages"]
    return out


def _scroll_to_end(p, rows, n: int) -> None:
    """Scroll to the bottom until the list holds `n` lines (or 20 tries)."""
    for _ in range(20):
        if rows.count() >= n:
            return
        p.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        p.wait_for_timeout(250)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_compact_view_brings_the_whole_day_as_the_reader_scrolls(browser, sample, lang):
    base, n = sample
    ctx, p = _open(browser, DESKTOP, lang)
    p.goto(f"{base}/daily?day={BIG_DAY}&layout=compact")
    rows = p.locator("#results > details.row")
    first = rows.count()
    assert 0 < first < n, first  # a part of the day, not the whole of it at once
    expect(p.locator(".pager")).to_have_count(0)  # no page numbers
    _scroll_to_end(p, rows, n)
    expect(rows).to_have_count(n)
    ids = rows.evaluate_all("rs => rs.map(r => r.dataset.id)")
    assert ids == _day_ids(base)  # every paper once, in the page's order
    assert rows.locator(".rank").all_inner_texts() == [str(i) for i in range(1, n + 1)]
    expect(p.get_by_test_id("more-rows")).to_have_count(0)
    # the keys cross from the first part into the one loaded after it
    rows.nth(first - 1).locator(":scope > summary").focus()
    p.keyboard.press("j")
    expect(rows.nth(first)).to_have_class(re.compile(r"\bcurrent\b"))
    expect(rows.nth(first).locator(":scope > summary")).to_be_focused()
    p.keyboard.press("x")
    expect(rows.nth(first).locator("article.card .authors")).to_be_visible()
    p.keyboard.press("k")
    expect(rows.nth(first - 1)).to_have_class(re.compile(r"\bcurrent\b"))
    ctx.close()
    assert not p.events, p.events


def test_more_link_without_script_reaches_the_whole_day(browser, sample):
    base, n = sample
    ctx = browser.new_context(viewport=PHONE, java_script_enabled=False, locale="zh-CN")
    p = ctx.new_page()
    p.goto(f"{base}/daily?day={BIG_DAY}&layout=compact")
    seen: list[str] = []
    for _ in range(10):
        seen += p.locator("#results > details.row").evaluate_all("rs => rs.map(r => r.dataset.id)")
        more = p.get_by_test_id("more-rows").locator("a[rel=next]")
        if not more.count():
            break
        more.click()
    assert seen == _day_ids(base)
    assert p.locator("#results > details.row .rank").first.inner_text() != "1"  # numbered on from the part before
    ctx.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_first_paper_in_the_first_screen(browser, sample, lang):
    base, _ = sample
    found = {}
    for name, viewport in (("1280x800", DESKTOP), ("390x844", PHONE)):
        ctx, p = _open(browser, viewport, lang)
        for path in ("/", "/daily", f"/daily?day={BIG_DAY}", f"/daily?day={BIG_DAY}&layout=compact"):
            p.goto(base + path)
            first = p.locator("main article.card, main details.row").first
            found[(name, path)] = first.evaluate("e => e.getBoundingClientRect().top + window.scrollY")
        ctx.close()
        assert not p.events, p.events
    print(lang, {k: round(v) for k, v in found.items()})
    for (name, path), y in found.items():
        # under half a desktop screen, 60% of a phone's (before issue 34's work on the daily
        # page: 529 and 767 px on BIG_DAY; docs/web.md has the table)
        fold = DESKTOP["height"] * 0.5 if name.startswith("1280") else PHONE["height"] * 0.6
        assert y < fold, (name, path, round(y))


def test_the_day_says_what_it_holds_and_what_ranked_it(browser, sample):
    base, n = sample
    j = httpx.get(f"{base}/daily.json", params={"day": BIG_DAY}).json()
    assert j["total"] == n
    assert j["completeness"] == {
        "state": "missing",
        "listed": n + 1,
        "held": n,
        "missing": [MISSING],
        "listings": ["cs.LG"],
        "next_retry": True,
    }
    assert j["ranked_by"] == ["upvotes", "listing"]  # 8 of the day's papers have upvotes, none has stars
    for viewport in (DESKTOP, PHONE):
        ctx, p = _open(browser, viewport)
        p.goto(f"{base}/daily?day={BIG_DAY}&layout=compact")
        line = p.get_by_test_id("completeness")
        expect(line).to_contain_text("1 paper missing from arXiv's cs.LG listing")
        expect(line).to_be_in_viewport()  # where the reader starts, not under the list
        expect(p.get_by_test_id("ranked-by")).to_have_text("Ranked by Hugging Face upvotes, then listing order")
        expect(p.locator("#results > details.row").first.locator(":scope > summary .upvotes")).to_be_visible()
        # a day without any signal says that its Top is the listing's order, and why
        p.goto(f"{base}/daily?day={QUIET_DAY}")
        expect(p.get_by_test_id("ranked-by")).to_contain_text("In listing order: no upvotes, stars or tags")
        expect(p.get_by_test_id("completeness")).to_have_count(0)  # no listing recorded: nothing claimed
        ctx.close()
        assert not p.events, p.events


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_compact_day_screenshots(browser, sample, shots, lang):
    base, _ = sample
    said = {"en": "1 paper missing", "zh": "1 篇论文尚未收录"}[lang]
    for name, viewport in (("1280", DESKTOP), ("390", PHONE)):
        ctx, p = _open(browser, viewport, lang)
        p.goto(f"{base}/daily?day={BIG_DAY}&layout=compact")
        expect(p.get_by_test_id("completeness")).to_contain_text(said)
        p.wait_for_timeout(150)
        assert p.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        if name == "390":  # a title in two lines: in one it held some 20 characters
            title = p.locator("#results > details.row .row-title").first
            line = float(title.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
            assert 1.5 * line < title.bounding_box()["height"] < 2.5 * line
        p.screenshot(path=str(shots / f"daily-whole-{lang}-{name}.png"))
        ctx.close()
        assert not p.events, p.events


def test_back_from_a_paper_lands_where_the_reader_was(browser, sample, monkeypatch):
    """Deep in a later part of the compact day, open a line, open its paper, press Back: the
    parts read so far are there again, the same line at the same height, open and current (j
    goes on from it). Parts of 25 lines make the sample's 172-paper day seven parts, as a
    530-paper day is six of 100: with two, the browser's own scroll restoration (to the bottom
    of the first part) happened to bring the second in. Playwright's Chromium has no
    back/forward cache, so this is the path of a browser that does not keep the page (a reload,
    a page evicted from the cache)."""
    monkeypatch.setattr(daily_view, "COMPACT_PER_PAGE", 25)
    base, n = sample
    ctx, p = _open(browser, DESKTOP)
    p.goto(f"{base}/daily?day={BIG_DAY}&layout=compact")
    rows = p.locator("#results > details.row")
    # parts of 25 (the next part's first line is 25k + 1; the page may have read a part or two
    # ahead by the time this looks, as it did in a clean clone's run)
    expect(p.get_by_test_id("more-rows")).to_contain_text(re.compile(r"\b(26|51|76|101|126|151)–"))
    _scroll_to_end(p, rows, n)
    expect(rows).to_have_count(n)
    row = rows.nth(130)  # in the sixth part
    pid = row.get_attribute("data-id")
    row.evaluate("r => window.scrollTo(0, r.getBoundingClientRect().top + window.scrollY - 200)")
    row.locator(":scope > summary").click()
    expect(row.locator("article.card .authors")).to_be_visible()
    top = row.evaluate("r => r.getBoundingClientRect().top")
    row.locator("article.card .card-title a").click()
    p.wait_for_url(re.compile(r"/paper/"))
    p.go_back()
    rows = p.locator("#results > details.row")
    expect(rows).to_have_count(n)  # the parts already loaded are there again
    row = p.locator(f'#results > details.row[data-id="{pid}"]')
    expect(row).to_have_js_property("open", True)
    expect(row).to_have_class(re.compile(r"\bcurrent\b"))
    expect(row).to_be_in_viewport()
    assert abs(row.evaluate("r => r.getBoundingClientRect().top") - top) <= 2
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.id)") == _day_ids(base)  # once each, in order
    p.keyboard.press("j")
    expect(rows.nth(131)).to_have_class(re.compile(r"\bcurrent\b"))
    # a new visit (from another page, not Back) starts afresh: at the top, nothing open, not
    # every part (the same URL asked for again is a reload to Chromium, which keeps the place)
    p.goto(f"{base}/")
    p.goto(f"{base}/daily?day={BIG_DAY}&layout=compact")
    expect(rows.first).to_be_in_viewport()
    p.wait_for_timeout(500)
    assert p.evaluate("window.scrollY") == 0
    assert rows.count() < n
    expect(p.locator("#results > details.row[open], #results > details.row.current")).to_have_count(0)
    ctx.close()
    assert not p.events, p.events

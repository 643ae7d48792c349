"""A person's path through the UI in a real browser: search, open a paper, switch language,
page through days, and a hostile abstract that stays inert. Writes screenshots of the search
page and a paper page at 1280 px and 390 px into screenshots/."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from webstore import DAY_WITH_PAGES, HOSTILE_ID


def _search(page, server: str, q: str) -> None:
    page.goto(server + "/")
    box = page.get_by_role("searchbox")
    box.fill(q)
    box.press("Enter")
    page.wait_for_load_state("domcontentloaded")


def test_search_then_open_a_paper(page, server, shots):
    _search(page, server, "diffusion model")
    cards = page.locator("article.card")
    expect(cards.first).to_be_visible()
    assert cards.count() == 20
    expect(page.get_by_test_id("total")).to_contain_text("papers match")
    assert page.url.endswith("/?q=diffusion+model")  # empty filters are left out of the URL
    page.screenshot(path=str(shots / "search-1280.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(shots / "search-390.png"))
    page.set_viewport_size({"width": 1280, "height": 900})
    # the snippet expands to the whole abstract
    details = cards.first.locator("details.abstract")
    if details.count():
        details.locator("summary").click()
        expect(details.locator(".full")).to_be_visible()
    # why this matched: plain words first, the raw ranks and scores behind "Scores"
    why = cards.first.get_by_test_id("why")
    why.locator("summary").first.click()
    plain = re.compile(r"matched \d of \d words in the|close in meaning")
    expect(why.get_by_test_id("why-words")).to_contain_text(plain)
    expect(why.locator("dl")).to_be_hidden()
    why.locator("details.why-raw summary").click()
    expect(why.locator("dl")).to_contain_text("Keyword rank")
    page.screenshot(path=str(shots / "search-expanded-1280.png"))
    title = cards.first.locator("h2 a")
    name = title.inner_text()
    title.click()
    expect(page.locator("h1.paper-title")).to_have_text(name)
    expect(page.locator(".similar article.card").first).to_be_visible()
    expect(page.locator("#bibtex-text")).to_contain_text("@article{")
    page.screenshot(path=str(shots / "paper-1280.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(shots / "paper-390.png"), full_page=False)


def test_filters_and_pagination(page, server):
    _search(page, server, "learning")
    page.locator("details.filters summary").click()
    page.locator('select[name="sort"]').select_option("newest")
    page.locator('input[name="category"]').fill("cs.CV")
    page.locator(".filter-actions button").click()
    expect(page.locator("article.card").first).to_be_visible()
    assert "sort=newest" in page.url and "category=cs.CV" in page.url
    dates = page.locator("article.card time").all_inner_texts()
    assert dates == sorted(dates, reverse=True)
    page.locator('.pager a[rel="next"]').click()
    expect(page.locator(".pager .current")).to_have_text("2")


def test_switch_language(page, server, shots):
    _search(page, server, "zebrafinch")
    hostile = page.locator(f'article.card[data-id="{HOSTILE_ID}"] .authors')
    expect(hostile).to_contain_text("Author Number10 et al.")
    page.get_by_test_id("lang-switch").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.get_by_role("searchbox")).to_have_value("zebrafinch")  # same query, now in Chinese
    expect(page.get_by_test_id("total")).to_contain_text("篇论文匹配")
    expect(hostile).to_contain_text("Author Number10 等")  # the Chinese venue search writes "A, B, … J 等"
    # the choice sticks (cookie) on the next page, and a Chinese query works in the same box
    _search(page, server, "斑胸草雀 注意力")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.locator("article.card").first).to_be_visible()
    page.screenshot(path=str(shots / "search-zh-1280.png"))


def test_page_through_a_day(page, server, shots):
    page.goto(server + "/daily")
    expect(page.locator("h1")).to_have_text("Daily Papers")
    latest = page.get_by_test_id("daily-count").inner_text()
    page.get_by_test_id("prev-day").click()
    expect(page.get_by_test_id("daily-count")).not_to_have_text(latest)
    page.goto(server + f"/daily?day={DAY_WITH_PAGES}")
    assert page.locator("article.card").count() == 30
    page.screenshot(path=str(shots / "daily-1280.png"))
    first_page = page.locator("article.card").first.get_attribute("data-id")
    page.locator('.pager a[rel="next"]').click()
    expect(page.locator(".pager .current")).to_have_text("2")
    assert page.locator("article.card").first.get_attribute("data-id") != first_page
    page.get_by_test_id("next-day").click()
    expect(page.get_by_test_id("daily-count")).to_contain_text("2025-03-20")
    page.locator(".catbar a", has_text="cs.SD").click()
    expect(page.locator("article.card")).to_have_count(1)
    expect(page.locator("article.card h2")).to_contain_text("Zebrafinch Chorus")


def test_hostile_abstract_stays_inert(page, server):
    _search(page, server, "zebrafinch")
    card = page.locator(f'article.card[data-id="{HOSTILE_ID}"]')
    expect(card).to_be_visible()
    card.locator("details.abstract summary").click()
    full = card.locator(".full")
    expect(full).to_contain_text("<script>alert(1)</script>")
    expect(full).to_contain_text('<img src=x onerror="window.__pwned=1">')
    expect(card.locator("h2")).to_contain_text("<script>alert('title')</script>")
    assert card.locator("img, script, b").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert not card.locator('a[href^="javascript"]').count()
    card.locator("h2 a").click()
    expect(page.get_by_test_id("abstract")).to_contain_text("<b>bold tag</b>")
    expect(page.locator(".paper-title")).to_contain_text("β-VAE")
    assert page.evaluate("window.__pwned") is None
    assert re.search(r"Author Number12", page.locator(".full-authors").inner_text())


def test_works_without_javascript(nojs_page, server):
    page = nojs_page
    page.goto(server + "/")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")  # from Accept-Language
    page.get_by_role("searchbox").fill("zebrafinch")
    page.get_by_role("button", name="检索", exact=True).click()
    card = page.locator(f'article.card[data-id="{HOSTILE_ID}"]')
    expect(card).to_be_visible()
    card.locator("details.abstract summary").click()
    expect(card.locator(".full")).to_contain_text("<script>alert(1)</script>")
    expect(page.locator("button.copy")).to_have_count(0)  # no copy button on this page
    card.locator("h2 a").click()
    expect(page.locator("#bibtex-text")).to_contain_text("@article{")
    expect(page.locator("button.copy")).to_be_hidden()  # shown only when JS can copy

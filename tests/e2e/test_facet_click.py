"""A facet's count is what clicking it returns, in the browser (docs/search.md: a filter only
narrows the matched set, and the facets count it)."""

from __future__ import annotations

import re
from urllib.parse import quote

from playwright.sync_api import expect


def _count(text: str) -> int:
    return int(re.sub(r"[^\d]", "", text))


def test_clicking_a_category_facet_lists_as_many_papers_as_it_counted(page, server):
    page.goto(server + "/?q=" + quote("diffusion image generation"))  # keywords: two tiers, the first M
    facets = page.locator("aside.facets")
    link = facets.locator("a").filter(has_text=re.compile(r"^cs\.CV")).first
    counted = _count(link.locator(".count").inner_text())
    whole = _count(page.get_by_test_id("total").inner_text())
    assert 0 < counted < whole
    link.click()
    expect(page).to_have_url(re.compile(r"category=cs\.CV"))
    assert _count(page.get_by_test_id("total").inner_text()) == counted
    # and sorted newest, the pages list exactly those papers, every one in cs.CV
    page.goto(page.url + "&sort=newest&per_page=100")
    cards = page.locator("article.card")
    assert cards.count() == min(counted, 100)

"""The tiers of a results page in the browser, one test per rule (docs/search.md, "Tiers"):
the header's counts equal the cards of each tier over the pages (page 1 and the last one
included), with and without a facet; the divider is visible where the tiers meet, and only
there; a question is one ranked list that says so; Newest lists the matched set alone."""

from __future__ import annotations

import re
from urllib.parse import urlencode

from playwright.sync_api import expect


def _count(text: str) -> int:
    return int(re.sub(r"[^\d]", "", text.split(":")[-1]))


def _pages(page, server, **params) -> tuple[dict[str, int], list[list[str]]]:
    """Open every page of a search: the header's counts, and each page's card tiers in order."""
    page.goto(server + "/?" + urlencode(params))
    header = {"match": _count(page.get_by_test_id("total").inner_text())}
    if page.get_by_test_id("tier-ranked").count():  # a question's list, longer than the papers holding its words
        header["ranked"] = _count(page.get_by_test_id("tier-ranked").inner_text())
    elif "ranked by" in page.get_by_test_id("total").inner_text():  # as long: one number
        header["ranked"] = header["match"]
    if page.get_by_test_id("tier-related").count():
        header["related"] = _count(page.get_by_test_id("tier-related").inner_text())
    last = max([int(x) for x in page.locator("nav.pager .pg").all_inner_texts() if x.strip().isdigit()] or [1])
    tiers = []
    for n in range(1, last + 1):
        if n > 1:
            page.goto(server + "/?" + urlencode({**params, "page": n}))
        tiers.append(page.locator("article.card").evaluate_all("cs => cs.map(c => c.dataset.tier)"))
    return header, tiers


def _divider_sits_between_the_tiers(page) -> None:
    divider = page.get_by_test_id("tier-divider")
    expect(divider).to_be_visible()
    before = divider.evaluate("d => d.previousElementSibling.previousElementSibling?.dataset.tier")  # <hr> between
    after = divider.evaluate("d => d.nextElementSibling.dataset.tier")
    assert (before, after) in (("match", "related"), (None, "related"))
    box, first_related = divider.bounding_box(), page.locator('article.card[data-tier="related"]').first.bounding_box()
    assert box and first_related and box["y"] + box["height"] <= first_related["y"]


def test_keywords_list_their_matches_then_the_related_papers(page, server):
    for params in ({"q": "diffusion model"}, {"q": "diffusion model", "category": "cs.CV"}):
        header, tiers = _pages(page, server, **params)
        assert len(tiers) > 2 and 0 < header["match"] and 0 < header["related"]
        flat = [t for p in tiers for t in p]
        assert flat == ["match"] * header["match"] + ["related"] * header["related"], params
        assert tiers[0][0] == "match" and set(tiers[-1]) == {"related"}  # page 1 and the last page
        meets = header["match"] // 20 + 1  # the page where the first related paper is
        for n in range(1, len(tiers) + 1):
            page.goto(server + "/?" + urlencode({**params, "page": n}))
            assert page.get_by_test_id("tier-divider").count() == (n == meets), (params, n)
            if n == meets:
                _divider_sits_between_the_tiers(page)
    page.goto(server + "/?" + urlencode({"q": "diffusion model"}))
    meets = _count(page.get_by_test_id("total").inner_text()) // 20 + 1
    page.get_by_test_id("tier-related").click()  # the related count leads to where they start
    expect(page).to_have_url(re.compile(rf"page={meets}#related$"))
    expect(page.get_by_test_id("tier-divider")).to_be_in_viewport()
    page.goto(server + "/?" + urlencode({"q": "diffusion model"}))  # the facet's count is the first tier
    link = page.locator("aside.facets a").filter(has_text=re.compile(r"^cs\.CV")).first
    counted = _count(link.locator(".count").inner_text())
    link.click()
    expect(page.get_by_test_id("total")).to_have_text(f"{counted} papers match")


def test_a_question_is_one_ranked_list_that_says_how_it_was_read(page, server):
    q = "how can large language models use less memory during inference"
    header, tiers = _pages(page, server, q=q)
    page.goto(server + "/?" + urlencode({"q": q}))
    expect(page.locator(".summary").first).to_contain_text("ranked by meaning and words")
    if header["match"] < header["ranked"]:
        expect(page.get_by_test_id("total")).to_contain_text("hold its words")
    expect(page.get_by_test_id("notice").filter(has_text="read as a question")).to_be_visible()
    assert page.get_by_test_id("tier-related").count() == 0 and page.get_by_test_id("tier-divider").count() == 0
    flat = [t for p in tiers for t in p]
    assert flat == ["ranked"] * header["ranked"] and header["match"] <= header["ranked"]
    marked = {m.lower() for m in page.locator("article.card mark").all_inner_texts()}
    assert marked and {"less", "during"}.isdisjoint(marked), marked


def test_newest_lists_the_matched_set_alone(page, server):
    header, tiers = _pages(page, server, q="diffusion model", sort="newest")
    assert set(header) == {"match"} and [t for p in tiers for t in p] == ["match"] * header["match"]
    assert page.get_by_test_id("tier-divider").count() == 0


def test_the_tiers_in_chinese(page, server):
    page.goto(server + "/?" + urlencode({"q": "扩散模型 图像编辑"}))
    page.get_by_test_id("lang-switch").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.get_by_test_id("total")).to_contain_text("篇论文匹配")
    expect(page.get_by_test_id("tier-related")).to_contain_text("另有")

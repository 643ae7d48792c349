"""Two tiers wherever a result list is shown (docs/search.md, "Tiers"), in the engine and the
CLI, on the fixture store: the matched set M first, then the related papers, each tier in the
fused order; a question one ranked list that says so; the words highlighted carry the query."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.search import engine
from paperdex.search.highlight import distinguishing, stems_of

QUESTION = "how can large language models use less memory during inference"


def listing(searcher, q, **kw):
    """Every hit of every page, and the first page's result."""
    first = searcher.search(q, facets=False, **kw)
    hits = list(first.hits)
    for n in range(2, first.pages + 1):
        hits += searcher.search(q, page=n, facets=False, **kw).hits
    return first, hits


KEYWORDS = ["diffusion model", "weight decay cat:cs.LG", "graph neural network", "扩散模型 图像编辑"]


@pytest.mark.parametrize("q", KEYWORDS)
def test_the_matched_set_first_then_the_related_papers_each_in_the_fused_order(searcher, q, monkeypatch):
    res, hits = listing(searcher, q, per_page=20)
    newest = {h.paper.id for h in listing(searcher, q, per_page=20, sort="newest")[1]}  # Newest lists M
    assert res.read_as == "keywords" and not res.one_list
    assert res.tiers == [("match", res.total), ("related", res.listed - res.total)] and 0 < res.total < res.listed
    assert [h.tier for h in hits] == ["match"] * res.total + ["related"] * (res.listed - res.total)
    assert {h.paper.id for h in hits[: res.total]} == newest
    # within each tier, the order the fused ranking gives (matched_first does not re-rank)
    monkeypatch.setattr(engine, "matched_first", lambda fused, order, info, *a: (order, info))
    fused = [h.paper.id for h in searcher.search(q, per_page=200, facets=False).hits]
    got = [h.paper.id for h in hits]
    assert got[: res.total] == [i for i in fused if i in newest]
    assert got[res.total :] == [i for i in fused if i not in newest][: res.listed - res.total]


def test_a_filter_narrows_both_tiers_and_newest_lists_the_matched_set_alone(searcher):
    whole = searcher.search("diffusion model")
    cv = dict(whole.facets["category"])["cs.CV"]
    res, hits = listing(searcher, "diffusion model", category="cs.CV", per_page=20)
    assert res.total == cv and sum(h.tier == "match" for h in hits) == cv
    assert all("cs.CV" in h.paper.categories for h in hits)
    res, hits = listing(searcher, "diffusion model", sort="newest", per_page=20)
    assert res.tiers == [("match", res.total)] and len(hits) == res.total and {h.tier for h in hits} == {"match"}


def test_a_question_is_one_ranked_list_that_says_what_it_was_read_as(searcher):
    res, hits = listing(searcher, QUESTION, per_page=50)
    assert res.read_as == "question" and res.one_list
    assert res.tiers == [("ranked", res.listed)] and len(hits) == res.listed
    assert {h.tier for h in hits} == {"ranked"}
    assert any(str(n).startswith("read as a question") for n in res.notices)
    assert res.to_dict()["tiers"] == [{"tier": "ranked", "count": res.listed}]


def test_everyday_words_of_a_question_are_not_highlighted(searcher):
    res = searcher.search(QUESTION)
    assert {"less", "dure"}.isdisjoint(res.highlight) and "memori" in res.highlight
    for h in res.hits:
        marked = {w.lower() for w, on in h.snippet + h.title_marked if on}
        assert {"less", "during"}.isdisjoint(marked), marked
    assert distinguishing(stems_of(["less", "more"])) == stems_of(["less", "more"])  # nothing else: kept


def test_the_cli_prints_the_divider_where_the_tiers_meet(built_store_dir):
    def run(*args):
        r = CliRunner().invoke(cli, ["--data-dir", str(built_store_dir), "search", *args], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return " ".join(r.output.split())  # the table wraps at 80 columns

    page3 = run("diffusion model", "-n", "20", "--page", "3")  # 45 match: numbers 41-45, then related
    assert "45 papers match · 55 more related · page 3/5" in page3
    divider = page3.index("── 55 more related: close in meaning, or holding some of the words ──")
    assert page3.index(" 45 ") < divider < page3.index(" 46 ")
    assert "more related: close" not in run("diffusion model", "-n", "20", "--page", "2")
    hits = json.loads(run("diffusion model", "-n", "50", "--json"))["hits"]
    assert [h["tier"] for h in hits] == ["match"] * 45 + ["related"] * 5
    assert "ranked by meaning and words: 100 papers" in run(QUESTION)

"""The tiers of a results list in the JSON interfaces (docs/search.md, "Tiers"): over every
page of /api/search, /search.json and the MCP search tool, each tier's count equals the hits
listed in it, the tiers come in their order, and the first tier is the matched set."""

from __future__ import annotations

from collections import Counter

import pytest
from mcp import Client

from paperdex.mcp_server import build_server
from paperdex.service import SearcherPool
from tests.conftest import run_async

QUESTION = "how can large language models use less memory during inference"
CASES = [
    ({"q": "diffusion model"}, "two"),
    ({"q": "diffusion model", "category": "cs.CV"}, "two"),
    ({"q": "weight decay cat:cs.LG"}, "two"),
    ({"q": QUESTION}, "one"),
    ({"q": "diffusion model", "sort": "newest"}, "newest"),
]


def check(first: dict, hits: list[dict], kind: str) -> None:
    counts = {t["tier"]: t["count"] for t in first["tiers"]}
    assert Counter(h["tier"] for h in hits) == Counter({t: n for t, n in counts.items() if n})
    order = list(counts)
    assert [h["tier"] for h in hits] == sorted((h["tier"] for h in hits), key=order.index)
    if kind == "two":
        assert order == ["match", "related"] and 0 < counts["match"] == first["total"]
        assert first["read_as"] == "keywords"
    elif kind == "one":
        assert order == ["ranked"] and first["read_as"] == "question"
        assert any(n.startswith("read as a question") for n in first["notices"])
    else:
        assert order == ["match"] and counts["match"] == first["total"] == len(hits)


@pytest.mark.parametrize("path", ["/api/search", "/search.json"])
@pytest.mark.parametrize(("params", "kind"), CASES)
def test_tier_counts_equal_the_hits_each_tier_lists(client, path, params, kind):
    def get(page: int) -> dict:
        r = client.get(path, params={**params, "per_page": 20, "page": page})
        assert r.status_code == 200, r.text
        return r.json()

    first = get(1)
    hits = first["hits"] + [h for n in range(2, first["pages"] + 1) for h in get(n)["hits"]]
    check(first, hits, kind)
    if kind == "two":  # the matched tier is what Newest lists
        newest = client.get(path, params={**params, "sort": "newest", "per_page": 100}).json()["hits"]
        assert {h["id"] for h in hits if h["tier"] == "match"} == {h["id"] for h in newest}


def test_the_mcp_search_tool_lists_its_tiers(web_dir):
    async def go():
        async with Client(build_server(web_dir, SearcherPool(web_dir, size=1))) as c:
            for params, kind in CASES:
                args = {"query": params["q"], "limit": 20, "sort": params.get("sort", "relevance")}
                args |= {"category": params["category"]} if "category" in params else {}
                first = (await c.call_tool("search", args)).structured_content
                hits = list(first["hits"])
                for n in range(2, first["pages"] + 1):
                    hits += (await c.call_tool("search", {**args, "page": n})).structured_content["hits"]
                check(first, hits, kind)

    run_async(go())

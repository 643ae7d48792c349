"""`paperdex serve` with a Milvus backend ($PAPERDEX_BACKEND), as a load balancer and a
researcher see it: a real server process over a Milvus Lite copy of the store, /healthz, a
search that finds a paper only the collection holds, and a facet whose click lists as many
papers as it counted."""

from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import quote

import httpx
from live_server import LiveServer
from playwright.sync_api import expect

from paperdex.store import Store


def _count(text: str) -> int:
    return int(re.sub(r"[^\d]", "", text))


def test_serve_searches_a_milvus_copy(e2e_dir, tmp_path, page):
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend

    path = tmp_path / "papers.db"
    with MilvusBackend(path) as b:  # closed before the server starts: Milvus Lite is one process per file
        with Store(e2e_dir, readonly=True) as s:
            migrate_store(s, b)
        p = b.search("", per_page=1).hits[0].paper
        b.upsert([replace(p, id="2699.09998", title="Quokka foraging under canopy gaps")])
    with LiveServer(e2e_dir, workers=1, env={"PAPERDEX_BACKEND": f"milvus://{path}"}) as srv:
        srv.wait_ready()
        h = httpx.get(srv.base + "/healthz", timeout=30).json()
        assert h["backend"] == "milvus" and h["indexed"] == h["papers"] + 1  # the collection's extra paper
        page.goto(srv.base + "/?q=" + quote("quokka canopy"))
        expect(page.locator('article.card[data-id="2699.09998"]')).to_be_visible()
        page.goto(srv.base + "/?q=" + quote("diffusion models for image generation"))
        link = page.locator("aside.facets a").filter(has_text=re.compile(r"^cs\.CV")).first
        counted = _count(link.locator(".count").inner_text())
        assert 0 < counted < _count(page.get_by_test_id("total").inner_text())
        link.click()
        expect(page).to_have_url(re.compile(r"category=cs\.CV"))
        assert _count(page.get_by_test_id("total").inner_text()) == counted

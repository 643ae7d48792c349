"""`paperdex serve` with a Milvus backend ($PAPERDEX_BACKEND), as a load balancer and a
researcher see it: a real server process over a Milvus Lite copy of the store, /healthz, a
search that finds a paper only the collection holds, and a facet whose click lists as many
papers as it counted; and the production layout of docs/scale-out.md on one machine, two
servers on two data directories sharing one collection on a Milvus server process."""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import replace
from urllib.parse import quote

import httpx
from backends.milvus_server import MARK, shared
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


def _found(srv: LiveServer, q: str) -> list[str]:
    r = httpx.get(srv.base + "/api/search", params={"q": q, "mode": "lexical", "per_page": 20}, timeout=30)
    assert r.status_code == 200, r.text
    return [h["id"] for h in r.json()["hits"]]


@MARK
def test_two_servers_share_one_collection_on_a_milvus_server(built_store_dir, tmp_path, tmp_path_factory, request):
    """docs/scale-out.md's layout on one machine: a Milvus standalone server (a process of its
    own, tests/backends/milvus_server.py), two stateless `paperdex serve` processes, one with two
    workers (a Milvus Lite file admits one process), on two data directories, named by
    `milvus://127.0.0.1:PORT`, and one writer (this test) that publishes. Both answer as the
    store does; a paper the writer adds while they run is found by both, and one it deletes
    by neither: they read the server's collection and the shared snapshot folder, not a copy
    made when they started."""
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend

    milvus = shared(request.config, tmp_path_factory)
    snaps = tmp_path / "snapshots"  # the shared volume of docs/scale-out.md
    uri = f"milvus://127.0.0.1:{milvus.port}?collection=serve&snapshots={snaps}"
    writer = MilvusBackend(milvus.uri, collection="serve", snapshots=str(snaps))
    with Store(built_store_dir, readonly=True) as s:
        migrate_store(s, writer)
        want = _store_ids(s, "robot grasping")
    assert want
    dirs = [shutil.copytree(built_store_dir, tmp_path / f"pod{i}") for i in (1, 2)]
    servers = [
        LiveServer(d, "--no-warm", workers=n, env={"PAPERDEX_BACKEND": uri}, log=tmp_path / f"pod{n}.log")
        for n, d in zip((2, 1), dirs, strict=True)
    ]
    try:
        for n, srv in zip((2, 1), servers, strict=True):
            srv.wait_ready()
            assert len(srv.worker_pids()) == (n if n > 1 else 0), srv.output()[-2000:]  # one: the supervisor serves
            h = httpx.get(srv.base + "/healthz", timeout=30).json()
            assert h["ok"] and h["backend"] == "milvus" and h["indexed"] == 314, h
            assert _found(srv, "robot grasping") == want  # the store's papers, in its order
        p = writer.get(want[0])
        assert p is not None
        writer.upsert([replace(p, id="2699.09997", title="Quokka foraging under canopy gaps")])
        _eventually(servers, "quokka", ["2699.09997"])
        assert writer.delete("2699.09997")
        _eventually(servers, "quokka", [])
    finally:
        for srv in servers:
            srv.close()
        writer.client.drop_collection("serve")
        writer.close()


def _store_ids(s: Store, q: str) -> list[str]:
    from paperdex.search import Searcher

    res = Searcher(s).search(q, mode="lexical", per_page=20, facets=False)
    return [h.paper.id for h in res.hits]


def _eventually(servers: list[LiveServer], q: str, want: list[str], timeout: float = 10) -> None:
    """Every server answers `want` within `timeout` s (a reader picks up a published snapshot
    when its pointer file changes; the bound is issue 37's for a lagging index)."""
    deadline = time.monotonic() + timeout
    while True:
        got = [_found(srv, q) for srv in servers]
        if all(g == want for g in got):
            return
        assert time.monotonic() < deadline, got
        time.sleep(0.2)

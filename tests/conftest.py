"""A real SQLite fixture store: 314 real arXiv papers with their all-MiniLM-L6-v2 vectors
(copied from the shared corpus into tests/data), built once per session."""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

import pytest
from backends import milvus_server

from paperdex.ingest import import_vectors, ingest_file
from paperdex.search import Searcher
from paperdex.store import Store

DATA = Path(__file__).parent / "data"
PAPERS = DATA / "papers.jsonl"


def pytest_collection_finish(session) -> None:
    milvus_server.count_users(session.config, session.items)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem) -> None:
    milvus_server.one_done(item)


@pytest.fixture(scope="session")
def built_store_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("store")
    with Store(d) as s:
        ingest_file(s, PAPERS)
        import_vectors(s, DATA / "papers.minilm.f16.npy", DATA / "papers.ids.txt", "all-MiniLM-L6-v2")
    return d


@pytest.fixture(scope="session")
def ro_store(built_store_dir) -> Store:
    """Shared, read-only by convention: tests that write use `store`."""
    return Store(built_store_dir)


@pytest.fixture(scope="session")
def searcher(ro_store) -> Searcher:
    return Searcher(ro_store)


@pytest.fixture
def store(built_store_dir, tmp_path) -> Store:
    """A private writable copy of the fixture store."""
    d = tmp_path / "copy"
    shutil.copytree(built_store_dir, d)
    s = Store(d)
    yield s
    s.close()


@pytest.fixture
def empty_store(tmp_path) -> Store:
    s = Store(tmp_path / "empty")
    yield s
    s.close()


def run_async(coro):
    """asyncio.run in a thread of its own: the session's Playwright browser (tests/e2e) owns
    the main thread's event loop once it has started, and asyncio.run refuses to nest."""
    out: dict = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the test's thread
            out["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join(300)
    if "error" in out:
        raise out["error"]
    return out["value"]

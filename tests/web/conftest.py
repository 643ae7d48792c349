from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parent))
import webstore  # noqa: E402

from paperdex.web.app import create_app  # noqa: E402


@pytest.fixture(scope="session")
def web_dir(built_store_dir, tmp_path_factory) -> Path:
    return webstore.build(built_store_dir, tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def web_milvus(web_dir, tmp_path_factory) -> str:
    """The web store copied into Milvus Lite (`paperdex migrate --to`), as a backend URI."""
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend
    from paperdex.store import Store

    path = tmp_path_factory.mktemp("web-milvus") / "papers.db"
    with Store(web_dir) as s, MilvusBackend(path) as b:
        migrate_store(s, b)
    return f"milvus://{path}"


@pytest.fixture(scope="session", params=["embedded", "milvus"])
def app(request, web_dir):
    """The app over the web store, searching it (embedded) or its Milvus copy (`--backend`):
    every test of the pages, the API and MCP through `app`/`client` runs against both."""
    if request.param == "embedded":
        return create_app(web_dir, pool_size=2)
    from paperdex.settings import Settings

    uri = request.getfixturevalue("web_milvus")
    return create_app(web_dir, pool_size=2, settings=Settings.from_env(data_dir=web_dir, backend=uri))


@pytest.fixture
def client(app) -> TestClient:
    """A fresh client (no cookies carried over) per test, over the one app."""
    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False)

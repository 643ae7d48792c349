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
def app(web_dir):
    return create_app(web_dir, pool_size=2)


@pytest.fixture
def client(app) -> TestClient:
    """A fresh client (no cookies carried over) per test, over the one app."""
    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False)

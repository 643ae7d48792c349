"""The Milvus server the backend suite runs against beside Milvus Lite: one per session
(tests/backends/milvus_server.py), started on first use."""

from __future__ import annotations

import pytest

from .milvus_server import MilvusServer, shared


@pytest.fixture(scope="session")
def milvus_server(request, tmp_path_factory) -> MilvusServer:
    return shared(request.config, tmp_path_factory)

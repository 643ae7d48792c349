"""No network: a host name that does not resolve stops a source at once with one clear line,
instead of retrying with back-off for a minute (the first ingest on an offline machine)."""

from __future__ import annotations

import socket

import httpx
import pytest

from paperdex.sources.http import HttpClient, SourceError


def _no_dns(req: httpx.Request) -> httpx.Response:
    # what httpx raises offline: its ConnectError, caused by the resolver's socket.gaierror
    try:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    except socket.gaierror as e:
        raise httpx.ConnectError(str(e), request=req) from e


def test_an_unresolvable_host_fails_at_once_without_retries():
    sleeps: list[float] = []
    calls: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        return _no_dns(req)

    http = HttpClient(transport=httpx.MockTransport(handler), min_interval=0, sleep=sleeps.append)
    with pytest.raises(SourceError, match=r"cannot resolve export\.arxiv\.org .*is this machine online"):
        http.get("https://export.arxiv.org/api/query")
    assert len(calls) == 1 and sleeps == []


def test_a_refused_connection_is_still_retried():
    sleeps: list[float] = []

    def refused(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=req)

    http = HttpClient(transport=httpx.MockTransport(refused), min_interval=0, sleep=sleeps.append, max_retries=2)
    with pytest.raises(SourceError, match="failed after 3 attempts: connection failed"):
        http.get("https://export.arxiv.org/api/query")
    assert len(sleeps) == 2

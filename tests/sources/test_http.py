"""The shared HTTP client: arXiv's 3 s spacing, retries on 429/503/timeouts, Retry-After."""

from __future__ import annotations

import json

import httpx
import pytest

from paperdex.sources import arxiv
from paperdex.sources.http import HttpClient, SourceError, parse_retry_after

from .conftest import Router, param, real, xml


def ok(req: httpx.Request) -> httpx.Response:
    return httpx.Response(200, text="fine")


def test_requests_are_spaced_by_the_minimum_interval(make_http, clock):
    http = make_http(Router().add(lambda r: True, ok), min_interval=3.0)
    for _ in range(3):
        assert http.get("https://export.arxiv.org/api/query").text == "fine"
    assert clock.sleeps == [3.0, 3.0]


def test_slow_callers_are_not_made_to_wait(make_http, clock):
    http = make_http(Router().add(lambda r: True, ok), min_interval=3.0)
    http.get("https://x.test/")
    clock.now += 10  # the caller spent 10 s storing the page
    http.get("https://x.test/")
    assert clock.sleeps == []


def test_503_with_retry_after_waits_as_told(make_http, clock):
    router = Router().add(
        lambda r: True, [httpx.Response(503, headers={"Retry-After": "7"}, text="busy"), httpx.Response(200)]
    )
    http = make_http(router, min_interval=3.0)
    assert http.get("https://oaipmh.arxiv.org/oai").status_code == 200
    assert clock.sleeps == [7.0]
    assert len(router.requests) == 2


def test_429_without_retry_after_backs_off_exponentially(make_http, clock):
    router = Router().add(lambda r: True, [httpx.Response(429)] * 3 + [httpx.Response(200)])
    http = make_http(router, min_interval=0, backoff=2.0)
    http.get("https://huggingface.co/api/daily_papers")
    assert clock.sleeps == [2.0, 4.0, 8.0]


def test_timeouts_are_retried_then_reported(make_http, clock):
    def timeout(req):
        raise httpx.ReadTimeout("read timed out", request=req)

    router = Router().add(lambda r: True, timeout)
    http = make_http(router, min_interval=0, max_retries=2, backoff=1.0)
    with pytest.raises(SourceError, match=r"failed after 3 attempts: timed out"):
        http.get("https://x.test/slow")
    assert len(router.requests) == 3
    assert clock.sleeps == [1.0, 2.0]


def test_a_timeout_then_success_recovers(make_http):
    def timeout(req):
        raise httpx.ConnectTimeout("connect timed out", request=req)

    router = Router().add(lambda r: True, [timeout, httpx.Response(200, text="late")])
    assert make_http(router, min_interval=0).get("https://x.test/").text == "late"


def test_client_errors_are_not_retried(make_http):
    router = Router().add(lambda r: True, httpx.Response(400, text="badArgument: from is not a date"))
    with pytest.raises(SourceError, match=r"HTTP 400 badArgument"):
        make_http(router).get("https://x.test/")
    assert len(router.requests) == 1


def test_retry_after_longer_than_allowed_gives_up_with_advice(make_http, clock):
    router = Router().add(lambda r: True, httpx.Response(503, headers={"Retry-After": "3600"}))
    with pytest.raises(SourceError, match="run again later"):
        make_http(router, max_wait=600).get("https://x.test/")
    assert clock.sleeps == []


def test_retry_after_http_date():
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
    assert parse_retry_after("Tue, 14 Nov 2023 22:13:50 GMT", now=now) == 30.0
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("soon") is None


def test_the_spacing_holds_across_clients_sharing_a_data_directory(tmp_path, clock):
    """Two processes on one data directory (two clients here, each with its own connection)
    keep one host's interval together: the second waits for the first's last request."""
    sent: list[float] = []  # the clock at each request the server got
    ok = httpx.MockTransport(lambda r: sent.append(clock()) or httpx.Response(200, text="ok"))
    first = HttpClient(min_interval=3.0, transport=ok, clock=clock, sleep=clock.sleep).share_spacing(tmp_path)
    second = HttpClient(min_interval=3.0, transport=ok, clock=clock, sleep=clock.sleep).share_spacing(tmp_path)
    first.get("https://export.arxiv.org/api/query")
    clock.now += 0.5
    second.get("https://export.arxiv.org/api/query")
    second.get("https://huggingface.co/api/daily_papers")  # another host: no wait
    assert clock.sleeps == [2.5]
    assert [round(t - sent[0], 3) for t in sent] == [0.0, 3.0, 3.0]
    assert (tmp_path / "arxiv.org").exists()  # arXiv's hosts are one service (see the next test)


def test_arxivs_hosts_are_one_service_to_the_spacing(tmp_path, clock, store):
    """OAI-PMH (oaipmh.arxiv.org), the listing (rss.arxiv.org) and the export API
    (export.arxiv.org) count together in arXiv's one-request-every-3-s: a sync's RSS request
    right after its last OAI page, and its API call right after RSS, wait their 3 s (a real
    sync sent them 0.016 s and 0.065 s apart while the spacing was kept per host). Real-format
    answers of each service."""
    rec = json.loads(real("arxiv_api", "id_1605.08386_s0_m100_199195aa31ad.json").read_text())
    router = Router()
    router.add(lambda q: q.url.host == "oaipmh.arxiv.org", xml(real("arxiv_oai", "listrecords_arXivRaw_math.xml")))
    router.add(lambda q: q.url.host == "rss.arxiv.org", xml(real("arxiv_rss", "rss_cs.CV_2023-10-26.xml")))
    router.add(lambda q: param(q, "id_list") == "1605.08386", httpx.Response(200, text=rec["body"]))
    unknown = json.loads(real("arxiv_api", "id_0000.0000_s0_m100_8b51d9633a68.json").read_text())["body"]
    router.add(lambda q: q.url.host == "export.arxiv.org", httpx.Response(200, text=unknown))
    sent: list[float] = []  # the clock at each request a service got
    ok = httpx.MockTransport(lambda q: sent.append(clock()) or router(q))
    http = HttpClient(min_interval=3.0, transport=ok, clock=clock, sleep=clock.sleep).share_spacing(tmp_path / "req")
    arxiv.harvest(store, http, arxiv.Harvest("math", "2008-01-01"))
    arxiv.read_listing(store, http, "cs.CV")
    arxiv.fetch_ids(http, ["1605.08386"])
    hosts = [q.url.host for q in router.requests]
    assert hosts[0] == "oaipmh.arxiv.org" and "rss.arxiv.org" in hosts and hosts[-1] == "export.arxiv.org"
    gaps = [round(b - a, 3) for a, b in zip(sent, sent[1:], strict=False)]
    assert gaps and min(gaps) >= 3.0, gaps

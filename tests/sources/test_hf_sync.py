"""Hugging Face Daily Papers over several syncs: a day that failed arrives on the next sync,
upvotes and stars follow the server, days are UTC days, one paper can be refreshed on demand.
Recorded responses (tests/fixtures/hf, real shape) through the real client and `sync`."""

from __future__ import annotations

import copy
import json
import os
import time
from datetime import UTC, date, datetime

import httpx
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.sources import hf
from paperdex.sources import sync as sources_sync
from paperdex.sources.sync import load_config, sync_sources
from paperdex.store import Store

from .conftest import FakeClock, fixture, param

DAY = json.loads(fixture("hf", "daily_papers_2026-06-02.json").read_text())


class HF:
    """Daily Papers: 2026-06-02 holds the fixture's papers (upvotes as set in `upvotes`),
    other days are empty; days in `down` answer 503."""

    def __init__(self) -> None:
        self.down: set[str] = set()
        self.upvotes: dict[str, int] = {}
        self.asked: list[str] = []
        self.busy = 0  # the next this many requests answer 503

    def __call__(self, req: httpx.Request) -> httpx.Response:
        day = param(req, "date")
        self.asked.append(day)
        if self.busy:
            self.busy -= 1
            return httpx.Response(503, text="Service Unavailable")
        if day in self.down:
            return httpx.Response(503, text="Service Unavailable")
        if day != "2026-06-02" or param(req, "p") not in (None, "0"):
            return httpx.Response(200, json=[])
        body = copy.deepcopy(DAY)
        for item in body:
            pid = (item.get("paper") or {}).get("id")
            if pid in self.upvotes:
                item["paper"]["upvotes"] = self.upvotes[pid]
        return httpx.Response(200, json=body)


@pytest.fixture
def hf_server(tmp_path, monkeypatch):
    server = HF()
    clock = FakeClock()
    monkeypatch.setattr(
        sources_sync,
        "http_factory",
        lambda source, section: sources_sync.HttpClient(
            transport=httpx.MockTransport(server), clock=clock, sleep=clock.sleep, max_retries=1
        ),
    )
    d = tmp_path / "data"
    d.mkdir()
    (d / "sources.toml").write_text("[hf]\ndays = 3\nrefresh_days = 2\n")
    return d, server


def _sync(d, today: date):
    with Store(d) as s:
        return sync_sources(s, load_config(d), today=today, echo=lambda x: None)


def test_a_day_that_failed_is_read_again_on_the_next_sync(hf_server):
    d, server = hf_server
    server.down.add("2026-06-02")
    _, failures = _sync(d, date(2026, 6, 3))
    assert len(failures) == 1 and failures[0].startswith("hf 2026-06-02: ")
    with Store(d) as s:
        assert s.count() == 0
    server.down.clear()
    server.asked.clear()
    # two days later the failed day is outside the refresh window, and is still asked for
    total, failures = _sync(d, date(2026, 6, 5))
    assert failures == []
    assert "2026-06-02" in server.asked and "2026-06-01" not in server.asked
    with Store(d) as s:
        assert {p.id for p in s.iter_papers()} == {"2606.27731", "2605.31457"}
    server.asked.clear()
    _sync(d, date(2026, 6, 6))
    assert sorted(set(server.asked)) == ["2026-06-05", "2026-06-06"]  # read days are not asked again


def test_upvotes_follow_the_server_on_every_sync(hf_server):
    d, server = hf_server
    _sync(d, date(2026, 6, 2))
    with Store(d) as s:
        assert s.get("2606.27731").extra["hf"]["upvotes"] == 42
    for today, votes in ((date(2026, 6, 2), 57), (date(2026, 6, 3), 99)):
        server.upvotes["2606.27731"] = votes
        _sync(d, today)
        with Store(d) as s:
            assert s.get("2606.27731").extra["hf"]["upvotes"] == votes


def test_one_paper_is_refreshed_on_demand(tmp_path, monkeypatch):
    body = json.loads(fixture("hf", "paper_2602.23229.json").read_text())["response"]
    seen = []

    def server(req):
        seen.append(req.url.path)
        if req.url.path == "/api/papers/2602.23229":
            return httpx.Response(200, json=body)
        return httpx.Response(404, json={"error": "Paper not found"})

    clock = FakeClock()
    monkeypatch.setattr(
        sources_sync,
        "http_factory",
        lambda source, section: sources_sync.HttpClient(
            transport=httpx.MockTransport(server), clock=clock, sleep=clock.sleep
        ),
    )
    d = tmp_path / "data"
    r = CliRunner().invoke(
        cli, ["--data-dir", str(d), "ingest", "hf", "--paper", "2602.23229v2", "--paper", "2601.00001"]
    )
    assert seen == ["/api/papers/2602.23229", "/api/papers/2601.00001"]
    assert "Hugging Face has no paper 2601.00001" in r.output
    with Store(d) as s:
        p = s.get("2602.23229")
        assert p.extra["hf"]["upvotes"] == 99 and p.title == "Large Multimodal Models as General In-Context Classifiers"


def test_a_sync_plans_the_utc_day_whatever_the_local_zone(hf_server, monkeypatch):
    """A zone on the other side of the date line from UTC at this hour: the local date differs
    from the UTC date, and the day asked for is the UTC one."""
    d, server = hf_server
    zone = "Etc/GMT-14" if datetime.now(UTC).hour >= 12 else "Etc/GMT+12"
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        utc = datetime.now(UTC).date()
        assert date.today() != utc  # the premise of the test
        with Store(d) as s:
            sync_sources(s, load_config(d), echo=lambda x: None)
        assert max(server.asked) == utc.isoformat()
        assert hf.utc_today() == utc
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
        os.environ.pop("TZ", None)


def test_sync_quiet_logs_retries_and_prints_nothing(hf_server):
    """Cron mail carries what changed and what failed; a retried request goes to sync.log."""
    d, server = hf_server
    _sync(d, date(2026, 6, 2))
    server.busy = 1
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "sync", "--quiet"])
    assert r.exit_code == 0, r.output
    assert r.output == ""
    assert "HTTP 503; retry 1/1" in (d / "sync.log").read_text()

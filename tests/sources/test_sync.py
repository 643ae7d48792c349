"""`paperdex sync`: every configured source, incrementally, suitable for cron."""

from __future__ import annotations

import json
from datetime import date

import click
import httpx
import pytest
from click.testing import CliRunner

from paperdex.cli.sources import sync
from paperdex.settings import Settings
from paperdex.sources import sync as sources_sync
from paperdex.sources.sync import load_config, plan, sync_sources
from paperdex.store import Store

from .conftest import FakeClock, Router, fixture, oai_router, param

CONFIG = """
[arxiv]
sets = ["cs"]
categories = ["cs.CV", "cs.CL"]
start = "2025-04-01"

[openreview]
venues = ["ICML.cc/2026/Conference"]

[hf]
days = 2
"""


def network(req: httpx.Request) -> httpx.Response:
    """arXiv OAI-PMH and Hugging Face, as recorded."""
    if req.url.host == "huggingface.co":
        if param(req, "date") == "2026-06-02":
            return httpx.Response(200, content=fixture("hf", "daily_papers_2026-06-02.json").read_bytes())
        return httpx.Response(200, json=[])
    return oai_router()(req)


@pytest.fixture
def data_dir(tmp_path, monkeypatch, openreview_api):
    clock = FakeClock()
    monkeypatch.setattr(
        sources_sync,
        "http_factory",
        lambda source, section: sources_sync.HttpClient(
            transport=httpx.MockTransport(network), clock=clock, sleep=clock.sleep, min_interval=3.0
        ),
    )
    d = tmp_path / "data"
    d.mkdir()
    (d / "sources.toml").write_text(CONFIG)
    return d


def _cli(data_dir):
    @click.group()
    @click.pass_context
    def g(ctx):
        ctx.obj = {"settings": Settings.from_env(data_dir=data_dir)}

    g.add_command(sync)
    return g


def test_sync_runs_every_source_and_prints_what_changed(data_dir, monkeypatch):
    monkeypatch.setattr(sources_sync, "utc_today", lambda: date(2026, 6, 2))
    res = CliRunner().invoke(_cli(data_dir), ["sync"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "arxiv cs: 6 added, 0 updated, 0 unchanged, 1 rejected, 0 merged"
    assert lines[2] == "openreview ICML.cc/2026/Conference: 1 added, 2 updated, 0 unchanged, 1 rejected, 2 merged"
    assert lines[4].startswith("hf 2026-06-01: 0 added")
    assert lines[5] == "hf 2026-06-02: 0 added, 2 updated, 0 unchanged, 1 rejected, 2 merged"
    assert "7 new papers are searchable by words now; `paperdex embed` adds their vectors." in res.output

    with Store(data_dir) as s:
        assert s.count() == 7
        assert s.get("2605.31457").sources == ["arxiv", "openreview", "hf"]
        assert json.loads(s.get_state("arxiv:oai:cs")) == {"next_from": "2026-06-30"}  # the service's responseDate
        assert s.get_state("hf:last_day") == "2026-06-02"

    again = CliRunner().invoke(_cli(data_dir), ["sync", "--quiet"])
    assert again.exit_code == 0
    assert again.output == ""  # nothing changed: nothing for cron to mail


def test_a_failing_source_does_not_stop_the_others(data_dir, monkeypatch):
    monkeypatch.setattr(sources_sync, "utc_today", lambda: date(2026, 6, 2))
    broken = Router().add(lambda r: r.url.host != "huggingface.co", httpx.Response(503, text="down"))
    broken.add(lambda r: True, network)
    clock = FakeClock()
    monkeypatch.setattr(
        sources_sync,
        "http_factory",
        lambda source, section: sources_sync.HttpClient(
            transport=httpx.MockTransport(broken), clock=clock, sleep=clock.sleep, max_retries=1
        ),
    )
    res = CliRunner().invoke(_cli(data_dir), ["sync"])
    assert res.exit_code == 1
    assert "arxiv cs: FAILED: GET https://oaipmh.arxiv.org/oai failed after 2 attempts: HTTP 503" in res.output
    assert "openreview ICML.cc/2026/Conference: 3 added" in res.output
    assert "1 source(s) failed" in res.output


def test_only_runs_the_named_sources(data_dir):
    with Store(data_dir) as s:
        total, failures = sync_sources(
            s, load_config(data_dir), only=["hf"], today=date(2026, 6, 2), echo=lambda x: None
        )
        assert failures == []
        assert {p.sources[0] for p in s.iter_papers()} == {"hf"}


def test_hf_continues_from_the_last_day_read(data_dir):
    with Store(data_dir) as s:
        cfg = load_config(data_dir)
        first = [label for src, label, _ in plan(cfg, s, date(2026, 6, 2)) if src == "hf"]
        assert first == ["hf 2026-06-01", "hf 2026-06-02"]
        s.set_state("hf:last_day", "2026-05-30")
        later = [label for src, label, _ in plan(cfg, s, date(2026, 6, 1)) if src == "hf"]
        assert later == ["hf 2026-05-30", "hf 2026-05-31", "hf 2026-06-01"]


def test_missing_config_explains_how_to_write_one(tmp_path):
    res = CliRunner().invoke(_cli(tmp_path), ["sync"])
    assert res.exit_code == 1
    assert "no sources.toml" in res.output and "[openreview]" in res.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[arxiv\nsets = 1", "sources.toml"),
        ("[crossref]\n", "unknown section(s) crossref"),
        ("[arxiv]\nsets = 5\n", "arxiv.sets must be a list of strings"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path, text, message):
    (tmp_path / "sources.toml").write_text(text)
    res = CliRunner().invoke(_cli(tmp_path), ["sync"])
    assert res.exit_code == 1
    assert message in res.output


class _FixedDate(date):
    @classmethod
    def today(cls):
        return cls(2026, 6, 2)

"""Long work speaks in any terminal: `embed`, `ingest`, `migrate --to` and `sync` run with stderr
not a terminal (CliRunner's, as under cron or nohup) print a progress line every interval with
what is done, the rate and the time left, and a last line with the total and the time it took.
Before, click's bar printed only its label there ("embedding") for the whole run."""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from datetime import date

import click
import httpx
import pytest
from click.testing import CliRunner

from paperdex.cli import cli, progress
from paperdex.cli.progress import Progress, duration, size
from paperdex.paper import Paper
from paperdex.sources import sync as sources_sync
from paperdex.store import Store
from tests.conftest import PAPERS
from tests.sources.conftest import FakeClock, fixture, param

MODEL = "all-MiniLM-L6-v2"  # the smallest built-in model: a dozen papers embed in a second
RATE = r"[\d,.]+ papers/s"
LEFT = r"about [\d.]+ (s|min)( \d+ s)? left"


def _papers(store: Store, n: int) -> None:
    recs = [json.loads(line) for line in PAPERS.read_text().splitlines()[:n]]
    store.upsert([Paper(id=r["id"], title=r["title"], abstract=r["abstract"][:300]) for r in recs])


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_embed_off_a_terminal_prints_papers_done_rate_and_time_left(empty_store, monkeypatch):
    _papers(empty_store, 12)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # a line at every batch
    d = str(empty_store.data_dir)
    r = _invoke("--data-dir", d, "embed", "--model", MODEL, "--batch-size", "4")
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert [re.fullmatch(rf"embedding: (\d+) of 12 papers, {RATE}, {LEFT}", x)[1] for x in lines[:3]] == [
        "4",
        "8",
        "12",
    ]
    assert re.fullmatch(rf"embedding: 12 papers in [\d.]+ s \({RATE}\)", lines[3])
    assert len(lines) == 4
    assert "embedded 12 papers with all-MiniLM-L6-v2; 12/12 have vectors" in r.stdout


def test_embed_quiet_prints_no_progress_and_the_default_interval_waits(empty_store, monkeypatch):
    _papers(empty_store, 8)
    d = str(empty_store.data_dir)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    r = _invoke("--data-dir", d, "embed", "--model", MODEL, "--batch-size", "4", "--limit", "4", "-q")
    assert r.exit_code == 0 and r.stderr == ""
    assert "embedded 4 papers" in r.stdout
    # at the default 30 s a short run prints only its last line, not a line per batch
    monkeypatch.setattr(progress, "INTERVAL", 30.0)
    r = _invoke("--data-dir", d, "embed", "--model", MODEL, "--batch-size", "2")
    assert r.exit_code == 0
    assert re.fullmatch(rf"embedding: 4 papers in [\d.]+ s \({RATE}\)\n", r.stderr)


def test_ingest_off_a_terminal_prints_bytes_read_rate_and_time_left(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    half = tmp_path / "half.jsonl"
    half.write_text("".join(PAPERS.read_text().splitlines(keepends=True)[:150]))
    total = size(PAPERS.stat().st_size + half.stat().st_size)
    r = _invoke("--data-dir", str(tmp_path / "d"), "ingest", str(half), str(PAPERS))
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert re.fullmatch(rf"ingesting: [\d.]+ kB of {total}, [\d.]+ [kMG]?B/s, {LEFT}", lines[0])
    assert re.fullmatch(rf"ingesting: {total} of {total}, [\d.]+ [kMG]?B/s, about 0.0 s left", lines[-2])
    assert re.fullmatch(rf"ingesting: {total} in [\d.]+ s \([\d.]+ [kMG]?B/s\)", lines[-1])
    assert "added 314, updated 0, unchanged 150, rejected 0" in r.stdout


def test_migrate_to_off_a_terminal_prints_papers_copied(built_store_dir, tmp_path, monkeypatch):
    pytest.importorskip("milvus_lite")
    d = tmp_path / "store"
    shutil.copytree(built_store_dir, d)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    db = tmp_path / "m.db"
    r = _invoke("--data-dir", str(d), "migrate", "--to", f"milvus://{db}", "--batch-size", "100")
    assert r.exit_code == 0, r.output
    lines = [x for x in r.stderr.splitlines() if x.startswith(f"copying to {db}")]
    counts = [re.fullmatch(rf"copying to {db}: ([\d,]+) of 314 papers, {RATE}, {LEFT}", x)[1] for x in lines[:-1]]
    assert counts == ["100", "200", "300", "314"]
    assert re.fullmatch(rf"copying to {db}: 314 papers in [\d.]+ s \({RATE}\)", lines[-1])


HF_ONLY = "[hf]\ndays = 2\n"


def test_sync_off_a_terminal_says_which_job_runs_while_it_runs(tmp_path, monkeypatch):
    """A job that sends nothing back for a while (an hour of OAI pages, here a slow server)
    still gets its line: the heartbeat's, naming the job and how long it has run."""
    monkeypatch.setattr(sources_sync, "utc_today", lambda: date(2026, 6, 2))

    def slow(req: httpx.Request) -> httpx.Response:
        time.sleep(0.5)
        if param(req, "date") == "2026-06-02":
            return httpx.Response(200, content=fixture("hf", "daily_papers_2026-06-02.json").read_bytes())
        return httpx.Response(200, json=[])

    clock = FakeClock()  # the request spacing's; the server's slowness is real time
    monkeypatch.setattr(
        sources_sync,
        "http_factory",
        lambda source, section: sources_sync.HttpClient(
            transport=httpx.MockTransport(slow), clock=clock, sleep=clock.sleep
        ),
    )
    monkeypatch.setattr(progress, "INTERVAL", 0.2)
    d = tmp_path / "d"
    d.mkdir()
    (d / "sources.toml").write_text(HF_ONLY)
    r = _invoke("--data-dir", str(d), "sync")
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    beats = [
        re.fullmatch(r"sync: (\d) of 2 jobs done, [\d.]+ s so far; now (hf \S+) \(for [\d.]+ s\)", x) for x in lines
    ]
    assert {(m[1], m[2]) for m in beats if m} == {("0", "hf 2026-06-01"), ("1", "hf 2026-06-02")}
    assert re.fullmatch(r"sync: 2 jobs in [\d.]+ s", lines[-1])
    # the jobs' own lines and the total are on stdout, as before
    assert r.stdout.startswith("hf 2026-06-01: 0 added") and "\nhf 2026-06-02: 2 added" in r.stdout
    assert "\nsync: 2 added" in r.stdout

    quiet = _invoke("--data-dir", str(d), "sync", "--quiet")
    assert quiet.exit_code == 0 and quiet.stderr == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_keeps_the_bar_and_gets_the_last_line():
    out = _Terminal()
    with Progress("embedding", 10, file=out, interval=0.0) as p:
        p.update(4)
        p.update(6)
    text = out.getvalue()
    assert "100%" in text and "#" in text  # click's bar, drawn to the end
    assert "of 10 papers" not in text  # no log lines on a terminal
    assert re.search(rf"embedding: 10 papers in [\d.]+ s \({RATE}\)\n$", text)


def test_work_that_stops_says_where():
    out = io.StringIO()
    with pytest.raises(click.ClickException), Progress("embedding", 50, file=out, interval=30.0) as p:
        p.update(20)
        raise click.ClickException("the disk is full")
    assert re.fullmatch(r"embedding: stopped after 20 of 50 papers, [\d.]+ s\n", out.getvalue())


def test_durations_and_sizes_read_as_a_person_writes_them():
    assert [duration(s) for s in (3.24, 9.97, 45, 59.6, 200, 1860, 7500)] == [
        "3.2 s",
        "10 s",
        "45 s",
        "1 min 0 s",
        "3 min 20 s",
        "31 min",
        "2 h 5 min",
    ]
    assert [size(n) for n in (830, 12_400, 999_960, 1_200_000_000)] == ["830 B", "12.4 kB", "1.0 MB", "1.2 GB"]

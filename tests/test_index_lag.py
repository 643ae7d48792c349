"""After kill -9 of an ingest (issue 26): the papers it committed are in the database but not in
the published word index. `paperdex stats` reports the lag without writing anything; the next
writer, or `serve` (in the background), closes it.

The kill is deterministic: a sitecustomize.py in the ingest's process sends itself SIGKILL when
the ingest, its batches committed, starts publishing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from live_server import LiveServer  # noqa: E402

PAPERS = Path(__file__).parent / "data" / "papers.jsonl"
KILL = """
import os, signal
if os.environ.get("PAPERDEX_TEST_KILL_AT_PUBLISH"):
    import paperdex.store

    def publish(self):  # the batches are committed; die as kill -9 would, before publishing
        os.kill(os.getpid(), signal.SIGKILL)

    paperdex.store.Store.publish = publish
"""


def _cli(d: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paperdex", "--data-dir", str(d), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})},
        timeout=300,
    )


def _snapshot_files(d: Path) -> dict[str, float]:
    return {p.name: p.stat().st_mtime for p in d.iterdir() if p.name.startswith(("lexical", "vectors"))}


@pytest.fixture
def killed(tmp_path) -> tuple[Path, list[str]]:
    """A store of 40 papers, then an ingest of 25 more killed -9 before it published."""
    lines = PAPERS.read_text().splitlines()
    d = tmp_path / "store"
    (tmp_path / "a.jsonl").write_text("\n".join(lines[:40]) + "\n")
    (tmp_path / "b.jsonl").write_text("\n".join(lines[40:65]) + "\n")
    assert _cli(d, "ingest", str(tmp_path / "a.jsonl")).returncode == 0
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL)
    env = {"PAPERDEX_TEST_KILL_AT_PUBLISH": "1", "PYTHONPATH": str(hook)}
    r = _cli(d, "ingest", str(tmp_path / "b.jsonl"), env=env)
    assert r.returncode == -9, r.stderr[-2000:]
    return d, [json.loads(x)["id"] for x in lines[40:65]]


def _lag(d: Path) -> dict | None:
    r = _cli(d, "stats", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["index_lag"]


def test_stats_reports_the_lag_and_does_not_write(killed):
    d, _ = killed
    before = _snapshot_files(d)
    lag = _lag(d)
    assert lag is not None and lag["papers_behind"] == 25 and lag["fix"] == "paperdex migrate"
    text = _cli(d, "stats").stdout
    assert "25 papers in the database are not in the word index" in text and "`paperdex migrate`" in text
    assert _snapshot_files(d) == before  # a read reports; it does not publish


def test_the_next_writer_closes_it(killed, tmp_path):
    d, _ = killed
    again = tmp_path / "again.jsonl"
    again.write_text(PAPERS.read_text().splitlines()[0] + "\n")  # nothing new: still a writer
    assert _cli(d, "ingest", str(again)).returncode == 0
    assert _lag(d) is None


def test_serve_closes_it_in_the_background(killed, tmp_path):
    d, ids = killed
    server = LiveServer(d, workers=1, log=tmp_path / "serve.log").wait_ready()
    try:
        end = time.monotonic() + 120
        while _lag(d) is not None:
            assert time.monotonic() < end, server.output()[-2000:]
            time.sleep(0.5)
        assert "25 papers in the database are not in the word index" in server.output()
        # the worker's watcher loads the new snapshot: the killed ingest's papers are found by words
        title = httpx.get(f"{server.base}/api/papers/{ids[-1]}", timeout=30).json()["title"]
        while True:
            hits = httpx.get(f"{server.base}/api/search", params={"q": title, "mode": "lexical"}, timeout=30).json()
            if ids[-1] in [h["id"] for h in hits["hits"]]:
                break
            assert time.monotonic() < end, hits
            time.sleep(0.5)
    finally:
        server.terminate()

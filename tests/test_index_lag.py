"""After kill -9 of an ingest (issue 26): the papers it committed are in the database but not in
the published word index. `paperdex stats` reports the lag without writing anything; the next
writer, or `serve` (in the background), closes it; a server already running closes it within
seconds once no writer is alive (issue 37), and /healthz says the index lags until then.

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
    import paperdex.index.lexical

    def publish(*args, **kw):  # the batches are committed; die as kill -9 would, before publishing
        os.kill(os.getpid(), signal.SIGKILL)

    paperdex.index.lexical.publish = publish
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


# A writer stopped between two of its batches (the first committed, the rest not read yet),
# so the test can kill it -9 there itself: mid-ingest, deterministically.
PAUSE = """
import os, time
if os.environ.get("PAPERDEX_TEST_PAUSE_AFTER_BATCH"):
    import paperdex.store

    real = paperdex.store.Store._upsert_batch

    def _upsert_batch(self, *args, **kw):
        s = real(self, *args, **kw)  # committed
        open(os.environ["PAPERDEX_TEST_PAUSE_AFTER_BATCH"], "w").close()
        while True:  # the test kills this process with SIGKILL here
            time.sleep(1)

    paperdex.store.Store._upsert_batch = _upsert_batch
"""
WORD = "glimmerwort"  # in every synthetic paper's title, in no real one


def _name(i: int) -> str:
    """A word of letters only, one per synthetic paper (the tokeniser keeps it whole)."""
    out = ""
    for _ in range(4):
        i, r = divmod(i, 26)
        out += chr(97 + r)
    return "zq" + out


def _synthetic(n: int) -> str:
    rows = [
        {
            "id": f"2699.{i:05d}",
            "title": f"The {WORD} {_name(i)} study",
            "abstract": f"We measure {_name(i)} in {WORD} meadows over three seasons.",
            "authors": ["Ada Tester"],
            "categories": ["q-bio.PE"],
            "published": "2026-12-01",
        }
        for i in range(n)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def _found(base: str, q: str) -> int:
    r = httpx.get(f"{base}/api/search", params={"q": q, "mode": "lexical", "per_page": 1}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["total"]


def test_a_live_server_makes_a_killed_writers_papers_searchable(tmp_path):
    """Issue 37: an ingest killed with -9 mid-ingest (its first batch of 1,000 committed)
    under a running two-worker server: the server finds the committed papers by their words
    within 10 s, without a restart and without another writer, and /healthz never says ok
    while its word index lags the database."""
    d = tmp_path / "store"
    assert _cli(d, "ingest", str(PAPERS)).returncode == 0
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(PAUSE)
    new = tmp_path / "new.jsonl"
    new.write_text(_synthetic(1500))  # batches of 1,000 (sources.merge): one commits, then the pause
    with LiveServer(d, workers=2, log=tmp_path / "serve.log") as server:
        server.wait_ready()
        h = httpx.get(f"{server.base}/healthz", timeout=30).json()
        assert h["ok"] and h["papers"] == h["indexed"] == 314, h
        paused = tmp_path / "paused"
        writer = subprocess.Popen(
            [sys.executable, "-m", "paperdex", "--data-dir", str(d), "ingest", str(new)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={
                **os.environ,
                "PYTHONWARNINGS": "ignore",
                "PYTHONPATH": str(hook),
                "PAPERDEX_TEST_PAUSE_AFTER_BATCH": str(paused),
            },
        )
        try:
            end = time.monotonic() + 120
            while not paused.exists():
                assert writer.poll() is None and time.monotonic() < end, "the writer did not pause"
                time.sleep(0.05)
            # the writer is alive: its papers are its own to publish (the server leaves them to
            # it, past its 2 s grace), and /healthz says the index lags and who will close it
            for _ in range(10):
                h = httpx.get(f"{server.base}/healthz", timeout=30).json()
                assert not h["ok"] and h["papers"] == 1314 and h["degraded"]["fix"] == "paperdex migrate", h
                assert "a writer is running" in h["degraded"]["message"], h
                time.sleep(0.5)
            assert _found(server.base, WORD) == 0
        finally:
            writer.kill()  # SIGKILL: kill -9
            writer.wait()
        assert writer.returncode == -9
        killed, caught_up, streak = time.monotonic(), None, 0
        while streak < 6:  # six answers in a row (both workers) find all 1,000 by their words
            assert time.monotonic() - killed < 10, (
                f"not found within 10 s of the kill: {_found(server.base, WORD)} of 1000; "
                f"healthz {httpx.get(f'{server.base}/healthz', timeout=30).json()}\n{server.output()[-3000:]}"
            )
            h = httpx.get(f"{server.base}/healthz", timeout=30).json()
            assert not h["ok"] or h["papers"] == h["indexed"] == 1314, h  # never ok while it lags
            ok = _found(server.base, WORD) == 1000 and _found(server.base, _name(999)) == 1
            streak = streak + 1 if ok else 0
            if ok and caught_up is None:
                caught_up = time.monotonic() - killed
            time.sleep(0.1)
        h = httpx.get(f"{server.base}/healthz", timeout=30).json()
        assert h["ok"] and h["papers"] == h["indexed"] == 1314 and "degraded" not in h, h
        assert "1,000 papers in the database are not in the word index" in server.output()
        assert _lag(d) is None
        print(f"found {caught_up:.1f} s after the kill")


def test_a_server_that_cannot_publish_says_so_and_names_the_command(killed):
    """A dead writer's lag that this server cannot publish (here the publish lock cannot be
    opened: a directory stands in its place): /healthz is not ok and names the command."""
    from paperdex import service
    from paperdex.index.snapshots import LOCK

    d, _ = killed
    (d / LOCK).unlink(missing_ok=True)
    (d / LOCK).mkdir()
    pool = service.SearcherPool(d, size=1)
    pool.watch(interval=0.1)
    try:
        end = time.monotonic() + 60
        while True:
            h = service.health(pool)
            if "cannot publish" in h.get("degraded", {}).get("message", ""):
                break
            assert not h["ok"] and time.monotonic() < end, h
            time.sleep(0.1)
    finally:
        pool.close()
    assert not h["ok"] and h["papers"] == 65 and h["indexed"] == 40, h
    assert "run `paperdex migrate`" in h["degraded"]["message"] and h["degraded"]["behind"] == ["lexical"]

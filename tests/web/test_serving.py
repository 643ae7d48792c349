"""Serving concerns: reads while an ingest holds the write lock, and the click commands."""

from __future__ import annotations

import shutil
import sqlite3
import threading

from click.testing import CliRunner
from fastapi.testclient import TestClient

from paperdex.web.app import create_app
from paperdex.web.commands import mcp, serve


def test_reads_do_not_wait_on_an_ingest(web_dir, tmp_path):
    d = tmp_path / "copy"
    shutil.copytree(web_dir, d)
    client = TestClient(create_app(d, pool_size=1), base_url="http://127.0.0.1:8000")
    writer = sqlite3.connect(d / "paperdex.db", check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")  # an ingest batch in flight holds the write lock
    writer.execute("UPDATE papers SET title = 'Rewritten' WHERE id = '2599.00002'")
    done = threading.Event()
    result = {}

    def read():
        result["search"] = client.get("/api/search", params={"q": "zebrafinch", "mode": "lexical"})
        result["paper"] = client.get("/api/papers/2599.00002")
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(15), "a read blocked behind the writer"
    writer.rollback()
    writer.close()
    assert result["search"].status_code == 200 and result["search"].json()["total"] == 2
    assert result["paper"].json()["title"] == "Zebrafinch Chorus: a second hostile record"  # last committed state


def test_commands_report_a_missing_data_dir(tmp_path):
    for cmd in (serve, mcp):
        r = CliRunner().invoke(cmd, [], obj={"data_dir": tmp_path / "nothing"})
        assert r.exit_code == 1 and "no paperdex data" in r.output


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SLOW_SERVE = """
import sys, time
from paperdex.web import service
real = service.get_paper
def get_paper(pool, pid):
    if pid == "slow":  # a request that will not finish by itself
        time.sleep(120)
    return real(pool, pid)
service.get_paper = get_paper
from paperdex.cli import cli
cli(sys.argv[1:])
"""


def test_sigterm_exits_promptly_even_with_a_request_stuck(web_dir):
    """A real `paperdex serve` process: on SIGTERM it stops within the grace period (plus a
    little), though one request is stuck in a worker thread; it used to wait for it."""
    import signal
    import subprocess
    import sys
    import time

    import httpx

    port = _free_port()
    args = ["--data-dir", str(web_dir), "serve", "--port", str(port), "--no-warm", "--log-level", "warning"]
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SERVE, *args], stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/static/style.css", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "the server did not start"
            time.sleep(0.1)
        assert httpx.get(f"{base}/api/days", timeout=10).status_code == 200
        stuck = threading.Thread(target=_ignore, args=(httpx.get, f"{base}/api/papers/slow"), daemon=True)
        stuck.start()
        time.sleep(0.5)
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        took = time.monotonic() - t
        assert took < 9, f"took {took:.1f} s to exit"
        assert proc.returncode in (0, -signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _ignore(fn, *args) -> None:
    try:
        fn(*args, timeout=60)
    except Exception:
        pass

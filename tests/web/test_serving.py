"""Serving concerns: reads while an ingest holds the write lock, and the click commands."""

from __future__ import annotations

import shutil
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from paperdex.cli import cli
from paperdex.web.app import create_app

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/live_server.py


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
    for cmd in ("serve", "mcp"):
        r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "nothing"), cmd])
        assert r.exit_code == 1 and "no paperdex data" in r.output


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SLOW_SERVE = """
import sys, time
from paperdex import service
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
    args += ["--workers", "1"]  # the monkeypatch lives in this process (workers are spawned afresh)
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


# --- the process model: several workers behind one port ---------------------------------

SLOW_SITE = """
import os
if os.environ.get("PAPERDEX_TEST_SLOW"):
    import time
    from paperdex import service
    real = service.get_paper
    def get_paper(pool, pid):
        if pid.startswith("slow"):  # slow-N: N seconds, then a 404
            time.sleep(float(pid.split("-")[1]))
        return real(pool, pid)
    service.get_paper = get_paper
"""


def _slow_site(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SLOW_SITE)
    return tmp_path / "site"


def test_workers_warm_up_serve_in_parallel_and_drain_on_sigterm(web_dir, tmp_path):
    """Two worker processes: each logs its warm-up before serving; two slow requests run at
    once (one per worker, not one after the other); on SIGTERM requests in flight finish
    (drain), new connections are refused, and the server exits within the grace period."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    from live_server import LiveServer

    env = {"PAPERDEX_TEST_SLOW": "1"}
    log = tmp_path / "serve.log"
    with LiveServer(web_dir, env=env, log=log, python_path=_slow_site(tmp_path)) as srv:
        srv.wait_ready()
        out = srv.output()
        assert out.count(" warm in ") == 2, out
        assert "lexical" in out and "model" in out and "zh" in out
        assert len(srv.worker_pids()) == 2
        # the kernel spreads connections over the workers; with one searcher pool per worker
        # and separate connections, 4 slow requests of 1.5 s take ~3 s, not 6 s
        with ThreadPoolExecutor(8) as ex:
            t = time.monotonic()
            rs = list(ex.map(lambda i: httpx.get(f"{srv.base}/api/papers/slow-1.5", timeout=30), range(4)))
            took = time.monotonic() - t
        assert [r.status_code for r in rs] == [404] * 4
        assert took < 5.5, took
        with ThreadPoolExecutor(4) as ex:
            inflight = [ex.submit(httpx.get, f"{srv.base}/api/papers/slow-2", timeout=30) for _ in range(2)]
            time.sleep(0.7)
            took = srv.terminate()
            assert [f.result().status_code for f in inflight] == [404, 404]  # drained, not cut
        assert took < 5 + 4, took
        assert srv.proc.returncode == 0
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{srv.base}/static/style.css", timeout=2)


def test_a_worker_killed_is_replaced(web_dir, tmp_path):
    import os
    import signal
    import time

    import httpx
    from live_server import LiveServer

    with LiveServer(web_dir, log=tmp_path / "serve.log") as srv:
        srv.wait_ready()
        before = srv.worker_pids()
        os.kill(before[0], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = srv.worker_pids()
            if len(now) == 2 and before[0] not in now and srv.output().count(" warm in ") == 3:
                break
            time.sleep(0.2)
        assert "exited" in srv.output() and srv.output().count(" warm in ") == 3, srv.output()
        for _ in range(6):
            assert httpx.get(f"{srv.base}/api/search", params={"q": "robot"}, timeout=30).status_code == 200
        assert srv.terminate() < 9


def _closed_by_the_server(sock, timeout: float = 30) -> bool:
    """True when the server closes the connection (EOF or reset) before `timeout`."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_slow_clients_are_cut_off_and_a_token_in_a_url_is_not_logged(web_dir, tmp_path):
    """Connections that never finish their headers, or their body, are closed after the
    server's timeouts (issue 26: 200 of 200 were still open after 60 s); a token passed in a
    URL is refused and does not reach the access log."""
    import socket
    import time

    import httpx
    from live_server import LiveServer

    log = tmp_path / "serve.log"
    args = ("--header-timeout", "1", "--body-timeout", "1", "--log-level", "info")
    server = LiveServer(web_dir, *args, workers=1, log=log).wait_ready()
    try:
        addr = ("127.0.0.1", server.port)
        idle = socket.create_connection(addr)
        headers = socket.create_connection(addr)
        headers.sendall(b"GET /api/days HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        body = socket.create_connection(addr)
        body.sendall(
            b"POST /api/related HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"text": "gra'
        )
        for name, sock in (("idle", idle), ("headers", headers), ("body", body)):
            assert _closed_by_the_server(sock), name
            sock.close()
        assert httpx.get(f"{server.base}/api/days", timeout=30).status_code == 200  # others still served
        tok = "pdx_" + "Q" * 43
        r = httpx.get(f"{server.base}/api/tags", params={"token": tok}, timeout=30)
        assert r.status_code == 400
        end = time.monotonic() + 30
        while "/api/tags?token=" not in server.output():
            assert time.monotonic() < end, server.output()[-2000:]
            time.sleep(0.2)
        assert tok not in server.output() and "token=REDACTED" in server.output()
    finally:
        server.terminate()


def test_a_running_server_keeps_the_templates_it_started_with(store, tmp_path):
    """A server running while `git pull` changed the code under it answered 500 on every tag
    page: the old code read the new template from disk ('pages' is undefined). Now the app reads
    and compiles its templates when it starts: a template changed on disk afterwards (here in a
    copy of the package's templates) changes nothing until the next start."""
    from paperdex.discover import library
    from paperdex.web.views.base import TEMPLATES

    pid = store.conn.execute("SELECT id FROM papers ORDER BY id LIMIT 1").fetchone()[0]
    library.add_to_tag(store, "robots", [pid])
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    app = create_app(store.data_dir, pool_size=1, templates=templates)
    client = TestClient(app, base_url="http://localhost", raise_server_exceptions=False)
    before = client.get("/tag/robots")
    assert before.status_code == 200 and pid in before.text
    tag_page = templates / "discover_tag.html"
    new = tag_page.read_text(encoding="utf-8").replace("{% if pages > 1 %}", "{% if listing.pages > 1 %}")
    assert new != tag_page.read_text(encoding="utf-8")
    tag_page.write_text(new, encoding="utf-8")  # the next version's template, which the running code does not fill in
    (templates / "base.html").write_text("{% block main %}{% endblock %} a new layout", encoding="utf-8")
    after = client.get("/tag/robots")
    assert after.status_code == 200 and after.text == before.text
    restarted = TestClient(create_app(store.data_dir, pool_size=1, templates=templates), base_url="http://localhost")
    assert "a new layout" in restarted.get("/library").text  # the change takes effect at the restart

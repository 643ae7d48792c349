"""`paperdex serve` on a Milvus Lite file (issue 37): one process can open the file, so the
server runs one worker and says so; `--workers N` > 1 on one is a one-line error. Before, on a
2-core machine the default started two workers, the second could not open the file, and the
server stopped with pymilvus's ConnectionConfigException."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from live_server import free_port

from paperdex.web.serving import default_workers, workers_for


@pytest.fixture(scope="module")
def lite_uri(web_dir, tmp_path_factory) -> str:
    """The web store copied into a Milvus Lite file of this module's own (closed again: the
    server must be the one process holding it)."""
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend
    from paperdex.store import Store

    path = tmp_path_factory.mktemp("lite") / "m.db"
    with Store(web_dir, readonly=True) as s, MilvusBackend(path) as b:
        migrate_store(s, b)
    return f"milvus://{path}"


def _serve(web_dir, uri: str, *args: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(web_dir), "serve", "--port", str(port), *args]
    env = {**os.environ, "PAPERDEX_BACKEND": uri, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    return proc, port


def test_serve_on_a_lite_file_runs_one_worker_and_says_so(web_dir, lite_uri):
    """No --workers: one worker (whatever the cores), one line saying why, and it serves."""
    proc, port = _serve(web_dir, lite_uri, "--log-level", "warning")
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        end = time.monotonic() + 180
        while not any("serving " in ln for ln in lines):
            assert time.monotonic() < end and proc.poll() is None, "".join(lines)[-3000:]
            lines.append(proc.stderr.readline())
        said = [ln for ln in lines if "Milvus Lite" in ln]
        assert len(said) == 1 and said[0].startswith("paperdex: one worker process: the Milvus Lite file ")
        assert "(1 process)" in lines[-1]
        h = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=30).json()
        assert h["backend"] == "milvus"
        r = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "graph"}, timeout=60)
        assert r.status_code == 200 and r.json()["hits"]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serve_refuses_more_workers_on_a_lite_file_in_one_line(web_dir, lite_uri):
    proc, _ = _serve(web_dir, lite_uri, "--workers", "2")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert err.strip().splitlines() == [
        f"Error: --workers 2: the Milvus Lite file {lite_uri[len('milvus://') :]} can be opened by one process "
        "only; serve it with --workers 1, or serve a Milvus server (milvus://http://HOST:19530) for more"
    ]


def test_only_a_lite_file_limits_the_workers():
    assert workers_for(None, None) == (default_workers(), None)
    assert workers_for(3, "/srv/store") == (3, None)  # the embedded store
    assert workers_for(None, "milvus://http://milvus:19530") == (default_workers(), None)  # a server
    assert workers_for(4, "http://milvus:19530?collection=p") == (4, None)
    for lite in ("milvus:///srv/m.db", "milvus://m.db", "/srv/papers.db", "milvus:///srv/m.db?collection=x"):
        n, why = workers_for(None, lite)
        assert n == 1 and why and "Milvus Lite" in why
        assert workers_for(1, lite)[0] == 1
        with pytest.raises(ValueError, match="--workers 2: the Milvus Lite file"):
            workers_for(2, lite)

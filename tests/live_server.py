"""A real `paperdex serve` in a subprocess on a free loopback port, for tests that need the
process model (worker processes, signals) rather than an in-process TestClient."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(
        self,
        data_dir: Path,
        *args: str,
        workers: int = 2,
        env: dict[str, str] | None = None,
        log: Path | None = None,
        python_path: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(data_dir), "serve", "--port", str(self.port)]
        cmd += ["--workers", str(workers), "--log-level", "warning", *args]
        e = {**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})}
        if python_path is not None:  # e.g. a sitecustomize.py every process (workers too) runs
            e["PYTHONPATH"] = os.pathsep.join([str(python_path), e.get("PYTHONPATH", "")])
        self.log = log
        self._log_fh = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, stdout=self._log_fh, stderr=self._log_fh, env=e)

    def wait_ready(self, timeout: float = 120) -> LiveServer:
        """Until the supervisor says every worker is serving (or, with one process, a static
        file answers)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the server exited: {self.output()[-2000:]}"
            if self.log is None or "serving " in self.output():
                try:
                    if httpx.get(f"{self.base}/static/style.css", timeout=2).status_code == 200:
                        return self
                except httpx.HTTPError:
                    pass
            time.sleep(0.2)
        raise AssertionError(f"the server did not start in {timeout} s: {self.output()[-2000:]}")

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log and self.log.exists() else ""

    def worker_pids(self) -> list[int]:
        """The supervisor's worker processes (multiprocessing's resource tracker excluded)."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout
        pids = []
        for p in out.split():
            try:
                cmd = Path(f"/proc/{p}/cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in cmd:
                pids.append(int(p))
        return pids

    def terminate(self, timeout: float = 30) -> float:
        """SIGTERM; returns the seconds it took to exit."""
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=timeout)
        return time.monotonic() - t

    def close(self) -> None:
        if self.proc.poll() is None:
            pids = self.worker_pids()
            self.proc.kill()
            self.proc.wait()
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self._log_fh is not subprocess.DEVNULL:
            self._log_fh.close()

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextmanager
def in_thread(app) -> Iterator[str]:
    """The app under a real uvicorn in a thread of this process, on a free loopback port: its
    base URL while the block runs (for browser tests, which need no worker processes)."""
    import uvicorn

    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    deadline = time.time() + 30
    while not srv.started:
        if time.time() > deadline or not t.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{srv.config.port}"
    finally:
        srv.should_exit = True
        t.join(timeout=10)


@contextmanager
def smtp_inbox() -> Iterator[tuple[int, list]]:
    """A local SMTP server (aiosmtpd) on a free loopback port while the block runs: its port
    and the list the messages it receives arrive in."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    got: list = []

    class Keep(Message):
        def handle_message(self, message):
            got.append(message)

    port = free_port()
    ctl = Controller(Keep(), hostname="127.0.0.1", port=port)
    ctl.start()
    try:
        yield port, got
    finally:
        ctl.stop()


def wait_for(got: list, timeout: float = 5.0) -> list:
    """The list once something arrived in it (or the timeout passed)."""
    deadline = time.monotonic() + timeout
    while not got and time.monotonic() < deadline:
        time.sleep(0.1)
    return got

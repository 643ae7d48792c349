"""A real Milvus standalone server for the tests: PyPI's `milvus` package (2.3.5, the dev extra on
Linux x86-64) ships the server binary with embedded etcd and local storage; this starts it as a
process of its own in a temporary folder, on free loopback ports, and stops it.

Why not `milvus.default_server.start()` as the package suggests:

* its ports start at the Milvus defaults (19530, 2379, ...) and move up when one is taken, but
  the embedded etcd's peer port (2380) is not configurable there: a second server on the machine
  (another engineer's test session) cannot start its etcd, panics, and the package's wait loop
  does not notice the exit and waits 180 s. Here every port, the etcd peer port included (an
  etcd config file), is one the kernel just handed out, and the wait fails as soon as the
  process exits, with the end of its log;
* it unpacks 250 MB of LZMA-compressed binaries into every data folder (5 s of CPU): here they
  are unpacked once into a cache folder (pytest's cache, under a lock) and linked;
* a test session killed with SIGKILL would leave the server running, holding its ports: the
  process is started with PR_SET_PDEATHSIG, so it gets SIGTERM when the session dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import pytest

VERSION = "2.3.5"  # the dev extra's pin: the template and the unpacking below are this version's
_PORT_KEYS = [
    "proxy_port",
    "proxy_internal_port",
    "etcd_port",
    "root_coord_port",
    "query_coord_port",
    "query_node_port",
    "index_coord_port",
    "index_node_port",
    "data_coord_port",
    "data_node_port",
]
_EMBED = "  use:\n    embed: true"
# Shorter intervals than Milvus's defaults, for the suite's time only: the writer's counters are
# Strong reads, which a server answers after its next time tick (200 ms by default), and making
# a collection waits for the query coordinator's polling. Measured with the fixture papers: one
# upsert 0.64 s and loading a new collection 2.3 s at the defaults, 0.18 s and 1.4 s at these.
# What the server answers is unchanged; docs/scale-out.md gives the figures at the defaults.
_FASTER = {"timeTickInterval": 20, "checkInterval": 100, "distPullInterval": 50}
_ADDED = {"checkChannelInterval": 100, "checkSegmentInterval": 100}  # queryCoord's, not in the template


def unpacked_binaries(cache: Path) -> Path:
    """The server's binaries, unpacked once into `cache` (the package checks each file's md5
    and skips the ones already there; the lock keeps two sessions from writing one file)."""
    import milvus

    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        milvus._initialize_data_files(str(cache))  # writes cache/bin
    return cache / "bin"


def _free_ports(n: int) -> list[int]:
    """n distinct ports the kernel considers free now (held together, so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the thread that started it (the session's) ends."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class MilvusServer:
    """One `milvus run standalone` process; `uri` is what pymilvus and paperdex connect to."""

    def __init__(self, base: Path, binaries: Path, fast: bool = True) -> None:
        self.base = base.absolute()
        self.base.mkdir(parents=True, exist_ok=True)
        (self.base / "bin").symlink_to(binaries.absolute(), target_is_directory=True)
        ports = _free_ports(len(_PORT_KEYS) + 2)
        cfg = dict(zip(_PORT_KEYS, ports, strict=False))
        self.port = cfg["proxy_port"]
        self.metrics_port, peer = ports[-2:]
        etcd = self.base / "etcd.yaml"
        client, peer_url = f"http://127.0.0.1:{cfg['etcd_port']}", f"http://127.0.0.1:{peer}"
        etcd.write_text(
            f"name: default\nlisten-client-urls: {client}\nadvertise-client-urls: {client}\n"
            f"listen-peer-urls: {peer_url}\ninitial-advertise-peer-urls: {peer_url}\n"
            f"initial-cluster: default={peer_url}\n"
        )
        from milvus import MilvusServerConfig

        config = MilvusServerConfig(data_dir=str(self.base), **cfg)
        assert config.template_text.count(_EMBED) == 1, "the milvus package's config template changed"
        config.template_text = config.template_text.replace(_EMBED, f"  config:\n    path: {etcd}\n{_EMBED}")
        for key, ms in _FASTER.items() if fast else ():
            config.template_text, n = re.subn(rf"(\n\s*{key}:) \d+", rf"\g<1> {ms}", config.template_text)
            assert n == 1, f"the milvus package's config template changed: {key}"
        if fast:  # the query coordinator's checks of a collection being loaded: not in the template
            line = f"\n  checkInterval: {_FASTER['checkInterval']}\n"
            more = "".join(f"  {key}: {ms}\n" for key, ms in _ADDED.items())
            assert config.template_text.count(line) == 1, "the milvus package's config template changed"
            config.template_text = config.template_text.replace(line, line + more)
        config.resolve()  # writes base/configs/milvus.yaml, which the binary reads from its cwd
        self.uri = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.started_in = 0.0

    def start(self, timeout: float = 120) -> MilvusServer:
        """Start it and wait until its health check says OK (the process exiting fails at once)."""
        env = {
            **os.environ,
            "DEPLOY_MODE": "STANDALONE",
            "METRICS_PORT": str(self.metrics_port),
            "MILVUS_RUN_DIR": str(self.base / "run"),
            "LD_LIBRARY_PATH": os.pathsep.join([str(self.base / "bin"), os.environ.get("LD_LIBRARY_PATH", "")]),
        }
        t = time.monotonic()
        with open(self.base / "logs" / "milvus-stdout.log", "wb") as log:  # the process keeps its own copy
            self.proc = subprocess.Popen(
                [str(self.base / "bin" / "milvus"), "run", "standalone"],
                cwd=self.base,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
        health = f"http://127.0.0.1:{self.metrics_port}/healthz"
        while time.monotonic() - t < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the Milvus server exited ({self.proc.returncode}): {self.log_tail()}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(health, timeout=2) as r:
                    if b"OK" in r.read():
                        self.started_in = time.monotonic() - t
                        return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the Milvus server did not start in {timeout} s: {self.log_tail()}")

    def log_tail(self, n: int = 3000) -> str:
        p = self.base / "logs" / "milvus-stdout.log"
        return p.read_text(errors="replace")[-n:] if p.exists() else ""

    def stop(self, remove: bool = True) -> None:
        """SIGTERM, SIGKILL after 3 s (with the suite's clients still connected, a SIGTERM ran
        out the 15 s this waited before, measured, and nothing of the server is read again), then
        the data folder goes (300 MB of etcd and RocksMQ files), unless `remove` is False."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if remove:
            shutil.rmtree(self.base / "data", ignore_errors=True)


_SHARED: list[MilvusServer | BaseException] = []

# The server ticks every 20 ms (`_FASTER`) even when no test asks it anything: a fifth of a core,
# measured, from its first test to the session's end, on a 2-core machine where the suite is CPU
# bound. So its tests carry one xdist group (`make test` distributes by group: they all run on
# one worker, and one server starts), and the server stops as soon as the last of them is done.
GROUP = "milvus-server"
MARK = pytest.mark.xdist_group(GROUP)
_LEFT: list[int] = []  # the session's tests in GROUP not yet run (on this worker's list)


def uses_server(item: Any) -> bool:
    return any(m.args[:1] == (GROUP,) for m in item.iter_markers("xdist_group"))  # MARK's form


def count_users(config: Any, items: list[Any]) -> None:
    """At the end of collection: how many of the session's tests ask for the server. Under
    --dist loadgroup a worker's copy of a grouped test's id ends in "@" and the group; where it
    does not, the grouping failed (pytest-xdist#1386) and every worker may start a server."""
    users = [i for i in items if uses_server(i)]
    _LEFT[:] = [len(users)]
    if getattr(config.option, "loadgroup", False) and users and not users[0].nodeid.endswith("@" + GROUP):
        warnings.warn("--dist loadgroup did not group the Milvus server's tests (pytest-xdist#1386)", stacklevel=1)


def one_done(item: Any) -> None:
    """After each test's teardown: the last of GROUP stops the server (and its 300 MB go)."""
    if not (_LEFT and uses_server(item)):
        return
    _LEFT[0] -= 1
    if _LEFT[0] == 0 and _SHARED and isinstance(_SHARED[0], MilvusServer):
        _SHARED[0].stop()
        _SHARED[0] = RuntimeError(
            "the Milvus server stopped after the last test marked with tests/backends/milvus_server.MARK: "
            "a test that asks for it must carry that mark"
        )


def shared(config: Any, tmp_path_factory: Any) -> MilvusServer:
    """The session's one server (tests/backends and tests/e2e ask for it alike), started by the
    first test that needs it in a temporary folder and stopped after the last (`one_done`) or
    when the session ends; every test that uses it makes collections of its own, under names no
    other test uses. A server that failed to start fails every later test that asks, at once,
    with the same error.

    Where the dev extra installs the package (Linux x86-64) its absence fails the test: a venv
    made before the extra named it would otherwise skip the server tests without a word."""
    if not _SHARED:
        try:
            import milvus
        except ImportError:
            if sys.platform == "linux" and platform.machine() == "x86_64":
                pytest.fail("no Milvus server package: pip install -e '.[dev]' (it brings milvus==2.3.5)")
            pytest.skip("PyPI's milvus package (a Milvus server) has wheels for Linux x86-64 only")
        assert milvus.__version__ == VERSION, f"milvus {milvus.__version__} installed; these tests know {VERSION}"
        cache = getattr(config, "cache", None)
        cache = cache.mkdir(f"milvus-{VERSION}") if cache else tmp_path_factory.mktemp("milvus-bin")
        server = MilvusServer(tmp_path_factory.mktemp("milvus-server"), unpacked_binaries(Path(cache)))
        config.add_cleanup(server.stop)
        try:
            _SHARED.append(server.start())
        except RuntimeError as e:
            _SHARED.append(e)
    got = _SHARED[0]
    if isinstance(got, BaseException):
        raise got
    return got

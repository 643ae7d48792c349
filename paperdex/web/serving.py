"""The process model of `paperdex serve`: a supervisor binds the port, starts one uvicorn
worker process per core (a search is CPU work under the GIL), restarts a worker that dies and
passes SIGTERM/SIGINT on; each worker warms up before it accepts. A client is the peer's address,
or a named proxy's ``X-Forwarded-For`` (docs/web.md); the reasons: README.md ("Serving").
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from multiprocessing.synchronize import Event
from typing import NoReturn

from paperdex.settings import Settings

GRACE = 5  # seconds requests in flight get to finish after SIGTERM
HEADER_TIMEOUT = 10.0  # seconds a connection gets to send a request's headers (--header-timeout)
BODY_TIMEOUT = 30.0  # seconds, after its headers, to send the whole body (--body-timeout)
STOP_SLACK = 3  # after GRACE, seconds before a worker that has not exited is killed
SWITCH_INTERVAL = 0.001  # a worker's GIL hand-over (default 5 ms): the event loop answers sooner
MAX_RESTARTS = 5  # worker deaths within RESTART_WINDOW before the supervisor gives up
RESTART_WINDOW = 60.0
CLIENT_QUEUE = 16  # one client's requests waiting for a searcher; why 16: docs/web.md, "A lab behind one address"
# one native thread per worker process, the workers being the parallelism (the engine: embed_threads=1)
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

log = logging.getLogger("paperdex.serve")


@dataclass(frozen=True)
class ServeOptions:
    """What `paperdex serve` was told: the process settings plus the server's own flags;
    picklable, so a worker process does what the supervisor was told, whatever its environment."""

    settings: Settings
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    pool: int | None = None  # searchers per worker
    warm: bool = True
    log_level: str = "info"
    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    client_queue: int = CLIENT_QUEUE  # requests of one client waiting for a searcher, per worker


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _say(msg: str) -> None:
    print(f"paperdex: {msg}", file=sys.stderr, flush=True)


def lite_file(backend: str | None) -> str | None:
    """The local file a Milvus Lite backend URI names (milvus:///path/x.db, x.db), else None
    (the embedded store, or a Milvus server that any number of processes share)."""
    if not backend:
        return None
    from paperdex.backends import parse_uri

    try:
        kind, target, _ = parse_uri(backend)
    except ValueError:
        return None  # the backend says why when it is opened
    return target if kind == "milvus" and "://" not in target else None


def workers_for(asked: int | None, backend: str | None) -> tuple[int, str | None]:
    """How many worker processes to run, and a line to say about it (or None). A Milvus Lite
    file opens in one process only: one worker on it, ValueError when more were asked for."""
    lite = lite_file(backend)
    if lite is None:
        return asked or default_workers(), None
    if asked is not None and asked > 1:
        raise ValueError(
            f"--workers {asked}: the Milvus Lite file {lite} can be opened by one process only; "
            "serve it with --workers 1, or serve a Milvus server (milvus://http://HOST:19530) for more"
        )
    return 1, f"one worker process: the Milvus Lite file {lite} can be opened by one process only"


def build_app(st: ServeOptions, *, worker: str = "") -> object:
    """The app of one worker, warmed up before it is returned (so before it accepts)."""
    from paperdex.web.app import create_app

    t = time.perf_counter()
    app = create_app(st.settings.data_dir, pool_size=st.pool, settings=st.settings, client_queue=st.client_queue)
    if st.warm:
        detail = ", ".join(f"{k} {v:.2f} s" for k, v in app.state.pool.warm().items())
        _say(f"{worker or 'server'} [{os.getpid()}] warm in {time.perf_counter() - t:.2f} s ({detail})")
    app.state.pool.watch()
    return app


def _server(app, st: ServeOptions):
    """The uvicorn server of one process (the only one, or a worker)."""
    import uvicorn

    from paperdex.web.redact import RedactTokens

    proxies = list(st.settings.forwarded_allow_ips)
    config = uvicorn.Config(
        app,
        host=st.host,
        port=st.port,
        log_level=st.log_level,
        access_log=st.log_level == "info",
        timeout_graceful_shutdown=GRACE,
        http=timed_protocol(st.header_timeout, st.body_timeout),
        # X-Forwarded-For/-Proto believed from the named proxies only (never uvicorn's default
        # of 127.0.0.1, nor its $FORWARDED_ALLOW_IPS): see the module docstring
        proxy_headers=bool(proxies),
        forwarded_allow_ips="*" if proxies == ["*"] else proxies,
    )
    # after Config, which configures uvicorn's loggers: no secret of a URL in the log
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactTokens) for f in access.filters):
        access.addFilter(RedactTokens())
    return uvicorn.Server(config)


def timed_protocol(header_timeout: float, body_timeout: float):
    """uvicorn's HTTP protocol with deadlines (uvicorn never closes a connection that does not finish
    its request: slowloris): the headers within `header_timeout` s, the body `body_timeout` s after."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class TimedHttp(HttpToolsProtocol):
        _deadline = None

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                log.info("closed a connection that did not finish its request in time")
                self.transport.close()

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm(header_timeout)

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._deadline is None:
                self._arm(header_timeout)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._arm(body_timeout)

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._disarm()

    return TimedHttp


# --- one process ----------------------------------------------------------------------------
def _listen(st: ServeOptions):
    """The listening socket, bound before anything says "serving": a port in use is one line."""
    import socket

    sock = socket.socket(socket.AF_INET6 if ":" in st.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((st.host, st.port))
    except OSError as e:
        import click

        sock.close()
        raise click.ClickException(f"cannot listen on {st.host}:{st.port}: {e.strerror or e}") from None
    sock.listen(2048)
    return sock


def serve_single(st: ServeOptions) -> None:
    sock = _listen(st)
    app = build_app(st)
    _say(f"serving {st.settings.data_dir} on http://{st.host}:{st.port}/ (1 process)")
    try:  # after the grace period uvicorn re-raises SIGTERM (the process ends) or SIGINT
        _server(app, st).run(sockets=[sock])
    finally:
        _exit_if_stuck()


def _exit_if_stuck() -> None:
    """After the grace period, a request still running in a worker thread (those are not
    daemon threads) would keep the process alive after Ctrl-C: exit anyway."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    deadline = time.monotonic() + 1.0
    for t in others:
        t.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in others):
        _say("requests still running after the grace period were abandoned")
        _exit(0)


def _exit(status: int) -> NoReturn:
    """Exit now, output flushed: no waiting for stuck threads, no interpreter teardown."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


# --- several processes ----------------------------------------------------------------------
def _worker_main(st: ServeOptions, sock, name: str, ready) -> None:  # pragma: no cover - in a child
    """A worker process: warm up, say so, serve on the inherited socket until SIGTERM."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor turns Ctrl-C into SIGTERM
    try:
        app = build_app(st, worker=name)
    except Exception as e:
        _say(f"{name} [{os.getpid()}] could not start: {e}")
        os._exit(3)
    ready.set()
    try:
        _server(app, st).run(sockets=[sock])
    finally:  # never wait for a request thread stuck past the grace period
        _exit(0)


@dataclass
class _Worker:
    name: str
    proc: multiprocessing.process.BaseProcess
    ready: Event


def serve_workers(st: ServeOptions) -> int:
    """Run `st.workers` worker processes on one listening socket; returns the exit status."""
    for k in THREAD_ENV:
        os.environ.setdefault(k, "1")
    if st.settings.embed_threads is None:  # one engine thread per worker, unless told otherwise
        st = replace(st, settings=st.settings.replace(embed_threads=1))
    sock = _listen(st)
    sock.set_inheritable(True)
    ctx = multiprocessing.get_context("spawn")
    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}

    def start(i: int) -> _Worker:
        ready = ctx.Event()
        name = f"worker {i}"
        p = ctx.Process(target=_worker_main, args=(st, sock, name, ready), name=f"paperdex-{i}", daemon=False)
        p.start()
        return _Worker(name, p, ready)

    workers = [start(i + 1) for i in range(st.workers)]
    deaths: list[float] = []
    announced = False
    status = 0
    try:
        while not stop.is_set():
            if not announced and all(w.ready.is_set() for w in workers):
                _say(f"serving {st.settings.data_dir} on http://{st.host}:{st.port}/ ({len(workers)} worker processes)")
                announced = True
            for i, w in enumerate(workers):
                if w.proc.is_alive():
                    continue
                code = w.proc.exitcode
                if not w.ready.is_set():
                    _say(f"{w.name} [{w.proc.pid}] failed to start (exit status {code}); stopping")
                    status = 1
                    stop.set()
                    break
                now = time.monotonic()
                deaths = [t for t in deaths if now - t < RESTART_WINDOW] + [now]
                if len(deaths) > MAX_RESTARTS:
                    _say(f"{len(deaths)} workers died within {RESTART_WINDOW:.0f} s; stopping")
                    status = 1
                    stop.set()
                    break
                _say(f"{w.name} [{w.proc.pid}] exited (status {code}); starting another")
                workers[i] = start(i + 1)
            stop.wait(0.2)
    finally:
        _stop_all(workers)
        sock.close()
        for s, h in old.items():
            signal.signal(s, h)
    return status


def _stop_all(workers: list[_Worker]) -> None:
    """SIGTERM to every worker; they drain for up to GRACE s; SIGKILL after GRACE+STOP_SLACK."""
    for w in workers:
        if w.proc.is_alive():
            w.proc.terminate()  # SIGTERM (a process already gone is no error)
    deadline = time.monotonic() + GRACE + STOP_SLACK
    for w in workers:
        w.proc.join(max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.proc.is_alive():
            _say(f"{w.name} [{w.proc.pid}] did not stop in time; killed")
            w.proc.kill()
            w.proc.join(2)


def close_index_lag(st: ServeOptions) -> threading.Thread | None:
    """Papers a killed write committed but never published are invisible to word search: say so,
    and publish them in a background thread, or, when this server cannot write, name the command."""
    from paperdex.index.lexical import index_lag
    from paperdex.index.publish import publish
    from paperdex.index.snapshots import REPAIR_COMMAND
    from paperdex.store import Store, StoreError

    try:
        with Store(st.settings.data_dir, readonly=True) as ro:
            lag = index_lag(ro)
    except (StoreError, OSError) as e:
        _say(f"could not check the word index: {e}")
        return None
    if lag is None:
        return None
    _say(f"{lag.message()}: publishing them in the background")

    def run() -> None:
        t = time.perf_counter()
        try:
            with Store(st.settings.data_dir) as store:
                publish(store)
        except Exception as e:  # a read-only directory, a full disk: the operator can fix it
            _say(f"could not publish the missing papers ({e}); run `{REPAIR_COMMAND}`")
            return
        _say(f"the word index has caught up with the database ({time.perf_counter() - t:.1f} s)")

    thread = threading.Thread(target=run, name="paperdex-catch-up", daemon=True)
    thread.start()
    return thread


def serve(st: ServeOptions) -> int:
    close_index_lag(st)
    if st.workers <= 1:
        serve_single(st)
        return 0
    _exit(serve_workers(st))  # the workers are gone: tearing the interpreter down takes seconds

"""One HTTP client for every network source: polite (a minimum interval between requests to
one service, across processes too), patient (429, 5xx, timeouts and unreadable bodies are
retried with back-off, honouring ``Retry-After``) and testable (transport, clock and sleep are
injectable)."""

from __future__ import annotations

import email.utils
import fcntl
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

import httpx

log = logging.getLogger("paperdex.sources")

USER_AGENT = "paperdex (open-source paper search; https://pypi.org/project/paperdex/)"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class SourceError(RuntimeError):
    """A source could not be read; the message names the URL and the reason, so a cron
    mail says what to do (wait, fix the config, report a format change)."""


def _unresolvable(e: BaseException | None) -> bool:
    """A host name that does not resolve (socket.gaierror under httpx's errors)."""
    for _ in range(10):
        if e is None or isinstance(e, socket.gaierror):
            return e is not None
        e = e.__cause__ or e.__context__
    return False


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now_dt = datetime.fromtimestamp(now, UTC) if now is not None else datetime.now(UTC)
    return max(0.0, (when - now_dt).total_seconds())


T = TypeVar("T")

# Domains whose hosts are one service to whoever runs it: a request to any of them waits for the
# last request to all of them (arXiv's terms count oaipmh., export. and rss.arxiv.org together)
ONE_SERVICE = ("arxiv.org",)


def service_of(host: str) -> str:
    """The name a host's requests are spaced under: its domain in :data:`ONE_SERVICE`
    (``export.arxiv.org`` -> ``arxiv.org``), else the host itself."""
    host = host.lower().rstrip(".")
    return next((d for d in ONE_SERVICE if host == d or host.endswith("." + d)), host)


class UnreadableResponse(SourceError):
    """A 2xx body that does not parse (cut off mid-transfer, an error page in place of XML or
    JSON): :meth:`HttpClient.fetch` asks for it again, like a 503."""


class HttpClient:
    """A rate-limited, retrying GET client, one per source; its interval is per service."""

    def __init__(
        self,
        *,
        min_interval: float = 0.0,
        max_retries: int = 5,
        backoff: float = 2.0,
        max_wait: float = 300.0,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.min_interval = min_interval
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.clock = clock
        self.sleep = sleep
        self._last: float | None = None
        self.spacing: Path | None = None  # see share_spacing
        self._wall = clock
        self._client = httpx.Client(
            transport=transport,
            timeout=timeout,
            follow_redirects=True,
            limits=httpx.Limits(max_connections=1),  # arXiv: one connection at a time
            headers={"User-Agent": USER_AGENT},
        )

    def share_spacing(self, folder: str | Path) -> HttpClient:
        """Keep this client's interval with every process that uses ``folder``: the time of the
        last request to each service, in a file per service, under an exclusive lock. Wall-clock
        times (unless the client was given a clock of its own), a future one waiting one interval."""
        self.spacing = Path(folder)
        self._wall = time.time if self.clock is time.monotonic else self.clock
        return self

    def _wait_shared(self, folder: Path, host: str) -> None:
        """Sleep until ``min_interval`` after any process's last request to ``host``'s service."""
        folder.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9.\-]", "_", service_of(host)) or "_"
        fd = os.open(folder / name, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held while waiting: the next process queues behind
            try:
                last = float(os.read(fd, 64).decode("ascii", "replace").strip())
            except ValueError:  # a new file: no request recorded yet
                last = None
            if last is not None and (gap := self._wall() - last) < self.min_interval:
                self.sleep(min(self.min_interval, self.min_interval - gap))
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, f"{self._wall():.3f}\n".encode())
        finally:
            os.close(fd)  # closing releases the lock

    def _wait_turn(self, url: str) -> None:
        if self.min_interval > 0 and self.spacing is not None:
            self._wait_shared(self.spacing, urlparse(url).hostname or "")
        elif self._last is not None and self.min_interval > 0:
            gap = self.clock() - self._last
            if gap < self.min_interval:
                self.sleep(self.min_interval - gap)
        self._last = self.clock()

    def get(
        self,
        url: str,
        params: Mapping[str, Any] | None = None,
        *,
        accept: tuple[int, ...] = (),
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """GET with retries: a 2xx response, or one whose status is in ``accept``; else SourceError.
        A key goes in ``headers``, never in the URL an error message shows."""
        return self.fetch(url, lambda r: r, params, accept=accept, headers=headers)

    def fetch(
        self,
        url: str,
        parse: Callable[[httpx.Response], T],
        params: Mapping[str, Any] | None = None,
        *,
        accept: tuple[int, ...] = (),
        headers: Mapping[str, str] | None = None,
    ) -> T:
        """GET and ``parse`` the response; a body the parser refuses with UnreadableResponse (cut
        off, an HTML error page in place of XML) is asked for again like a 503."""
        attempt = 0
        while True:
            self._wait_turn(url)
            try:
                resp = self._client.get(url, params=params, headers=headers)
            except httpx.TimeoutException as e:
                reason, wait = f"timed out ({type(e).__name__})", None
            except httpx.TransportError as e:
                if _unresolvable(e):  # offline or no DNS: retrying for a minute would not help
                    host = urlparse(url).hostname
                    raise SourceError(f"GET {url}: cannot resolve {host} ({e}): is this machine online?") from e
                reason, wait = f"connection failed ({e})", None
            else:
                if resp.status_code < 300 or resp.status_code in accept:
                    try:
                        return parse(resp)
                    except UnreadableResponse as e:
                        reason, wait = f"unreadable response ({e})", None
                        if attempt >= self.max_retries:
                            raise SourceError(f"GET {resp.request.url}: {e} ({attempt + 1} attempts)") from e
                elif resp.status_code not in RETRY_STATUS:
                    raise SourceError(f"GET {resp.request.url} failed: HTTP {resp.status_code} {_snippet(resp.text)}")
                else:
                    reason, wait = f"HTTP {resp.status_code}", parse_retry_after(resp.headers.get("Retry-After"))
            if attempt >= self.max_retries:
                raise SourceError(f"GET {url} failed after {attempt + 1} attempts: {reason}")
            if wait is None:
                wait = self.backoff * (2**attempt)
            if wait > self.max_wait:
                raise SourceError(
                    f"GET {url}: {reason}, server asks to retry in {wait:.0f} s "
                    f"(more than {self.max_wait:.0f} s); run again later"
                )
            attempt += 1
            log.warning("%s: %s; retry %d/%d in %.1f s", url, reason, attempt, self.max_retries, wait)
            self.sleep(wait)

    def close(self) -> None:
        self._client.close()


def _snippet(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text[:n] + ("…" if len(text) > n else "")

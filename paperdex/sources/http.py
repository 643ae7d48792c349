"""One HTTP client for every network source.

Polite (a minimum interval between requests on one connection: arXiv asks for one request
every 3 s), patient (429, 5xx and timeouts are retried with exponential back-off, honouring
``Retry-After``) and testable (transport, clock and sleep are injectable, so tests run
against recorded responses and never really wait).
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

log = logging.getLogger("paperdex.sources")

USER_AGENT = "paperdex (open-source paper search; https://pypi.org/project/paperdex/)"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class SourceError(RuntimeError):
    """A source could not be read; the message names the URL and the reason, so a cron
    mail says what to do (wait, fix the config, report a format change)."""


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


class HttpClient:
    """A rate-limited, retrying GET client. One per source: its interval is per host."""

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
        user_agent: str = USER_AGENT,
    ) -> None:
        self.min_interval = min_interval
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.clock = clock
        self.sleep = sleep
        self._last: float | None = None
        self.requests = 0  # requests actually sent, for tests and logs
        self.sent: list[float] = []  # clock() at each request, to check the spacing
        self._client = httpx.Client(
            transport=transport,
            timeout=timeout,
            follow_redirects=True,
            limits=httpx.Limits(max_connections=1),  # arXiv: one connection at a time
            headers={"User-Agent": user_agent},
        )

    def _wait_turn(self) -> None:
        if self._last is not None and self.min_interval > 0:
            gap = self.clock() - self._last
            if gap < self.min_interval:
                self.sleep(self.min_interval - gap)
        self._last = self.clock()

    def get(self, url: str, params: Mapping[str, Any] | None = None, *, accept: tuple[int, ...] = ()) -> httpx.Response:
        """GET with retries; returns a 2xx response (or one whose status is in ``accept``, for
        services that explain an error in the body) or raises SourceError."""
        attempt = 0
        while True:
            self._wait_turn()
            self.requests += 1
            self.sent.append(self.clock())
            try:
                resp = self._client.get(url, params=params)
            except httpx.TimeoutException as e:
                reason, wait = f"timed out ({type(e).__name__})", None
            except httpx.TransportError as e:
                reason, wait = f"connection failed ({e})", None
            else:
                if resp.status_code < 300 or resp.status_code in accept:
                    return resp
                if resp.status_code not in RETRY_STATUS:
                    raise SourceError(f"GET {resp.request.url} failed: HTTP {resp.status_code} {_snippet(resp.text)}")
                reason = f"HTTP {resp.status_code}"
                wait = parse_retry_after(resp.headers.get("Retry-After"))
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

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _snippet(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text[:n] + ("…" if len(text) > n else "")

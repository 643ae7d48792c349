"""One code path per feature, shared by the HTML views, the JSON API and the MCP tools.

Each function takes plain arguments, validates them the same way for every interface, and
returns library objects (a search ``Result``, a ``Paper``, a feed ``Day``); the interfaces only
choose how to show them. Errors are :class:`ServiceError` with the HTTP status they mean.

Searchers are not thread-safe and each holds a vector index in memory, so a small pool of
them (one per core) is shared by the server's worker threads: a request borrows one for the
duration of a call. Every searcher has its own SQLite connection; WAL lets them read while an
ingest writes, so read requests never wait on an ingest.
"""

from __future__ import annotations

import datetime as dt
import os
import queue
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import feed
from .paper import Paper
from .query import QueryError
from .search import MODES, SORTS, Filters, Hit, Result, Searcher
from .store import Store, StoreError

MAX_QUERY = 1000
MAX_PAGE = 500
MAX_PER_PAGE = 100
MAX_SIMILAR = 50
MAX_CATEGORY = 64
MAX_FILTER = 200
POOL_WAIT = float(os.environ.get("PAPERDEX_POOL_WAIT", "10"))  # seconds a request waits for a searcher
RETRY_AFTER = 2
_VERSION = re.compile(r"v\d+$")
DATE_PREFIX = r"^\d{4}(-\d{2}(-\d{2})?)?$"  # YYYY, YYYY-MM or YYYY-MM-DD
DAY = r"^\d{4}-\d{2}-\d{2}$"
_DATE_PREFIX = re.compile(DATE_PREFIX)


class ServiceError(Exception):
    """A request that cannot be answered; `status` is the HTTP status it means, `headers` any
    the answer must carry (Retry-After on a 503)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def check_date(value: str | None, name: str) -> str | None:
    """YYYY, YYYY-MM or YYYY-MM-DD naming a day that exists: 2025-13-45 and 2025-02-30 are a
    400 with a message, not a filter that silently matches nothing."""
    if value is None or value == "":
        return None
    if not _DATE_PREFIX.match(value):
        raise ServiceError(400, f"{name} must be a date YYYY, YYYY-MM or YYYY-MM-DD, got {value[:40]!r}")
    parts = [int(x) for x in value.split("-")] + [1, 1]
    try:
        dt.date(parts[0], parts[1], parts[2])
    except ValueError:
        raise ServiceError(400, f"{name} is not a real date: {value!r}") from None
    if parts[0] < 1:
        raise ServiceError(400, f"{name} is not a real date: {value!r}")
    return value


def make_searcher(store: Store) -> Searcher:
    """The web ranks exactly as the CLI does: same Searcher, same defaults."""
    return Searcher(store)


class SearcherPool:
    """A fixed set of searchers handed out one caller at a time."""

    def __init__(self, data_dir: str | Path, size: int | None = None, wait: float | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.size = max(1, size or min(4, os.cpu_count() or 2))
        self.wait = POOL_WAIT if wait is None else wait
        self._free: queue.LifoQueue[Searcher] = queue.LifoQueue()
        self._made = 0
        self._lock = threading.Lock()
        # Fail fast (and readably) when there is no data directory.
        with Store(self.data_dir, readonly=True):
            pass

    @contextmanager
    def searcher(self, wait: float | None = None) -> Iterator[Searcher]:
        """Borrow a searcher. When all are busy, wait a bounded time, then answer 503 with
        Retry-After: a request is never left to hang, and never becomes a 500."""
        s = None
        try:
            s = self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                if self._made < self.size:
                    s = make_searcher(Store(self.data_dir, readonly=True))
                    self._made += 1
            if s is None:
                try:
                    s = self._free.get(timeout=self.wait if wait is None else wait)
                except queue.Empty:
                    raise ServiceError(
                        503,
                        "the server is busy with other searches; try again in a moment",
                        {"Retry-After": str(RETRY_AFTER)},
                    ) from None
        try:
            yield s
        finally:
            self._free.put(s)

    def warm(self) -> None:
        """Open every searcher and load its vector index and the query model now, so no
        request pays for it."""
        held = []
        try:
            for _ in range(self.size):
                cm = self.searcher()
                s = cm.__enter__()
                held.append(cm)
                try:
                    s.search("warm up", per_page=1, facets=False)
                except (QueryError, StoreError):
                    pass
        finally:
            for cm in held:
                cm.__exit__(None, None, None)

    def close(self) -> None:
        while True:
            try:
                self._free.get_nowait().store.close()
            except queue.Empty:
                return


@dataclass
class SearchParams:
    q: str = ""
    mode: str = "hybrid"
    sort: str = "relevance"
    page: int = 1
    per_page: int = 20
    category: str | None = None
    date_from: str | None = None
    date_to: str | None = None
    venue: str | None = None
    area: str | None = None
    author: str | None = None

    def filters(self) -> Filters:
        return Filters(self.category, self.date_from, self.date_to, self.venue, self.area, self.author)

    def has_filters(self) -> bool:
        return any((self.category, self.date_from, self.date_to, self.venue, self.area, self.author))


def _clean(v: str | None, limit: int = 200) -> str | None:
    if v is None:
        return None
    v = v.strip()
    if len(v) > limit:
        raise ServiceError(400, f"a filter value is longer than {limit} characters")
    if "\x00" in v:
        raise ServiceError(400, "a filter value contains a NUL character")
    return v or None


def normalise(p: SearchParams) -> SearchParams:
    """Validate and tidy search parameters; raises ServiceError(400) for bad ones."""
    q = (p.q or "").strip()
    if len(q) > MAX_QUERY:
        raise ServiceError(400, f"the query is longer than {MAX_QUERY} characters")
    if "\x00" in q:
        raise ServiceError(400, "the query contains a NUL character")
    if p.mode not in MODES:
        raise ServiceError(400, f"unknown mode {p.mode!r}; use one of {', '.join(MODES)}")
    if p.sort not in SORTS:
        raise ServiceError(400, f"unknown sort {p.sort!r}; use one of {', '.join(SORTS)}")
    if not 1 <= p.page <= MAX_PAGE:
        raise ServiceError(400, f"page must be between 1 and {MAX_PAGE}")
    if not 1 <= p.per_page <= MAX_PER_PAGE:
        raise ServiceError(400, f"per_page must be between 1 and {MAX_PER_PAGE}")
    return SearchParams(
        q,
        p.mode,
        p.sort,
        p.page,
        p.per_page,
        _clean(p.category, MAX_CATEGORY),
        check_date(_clean(p.date_from, 10), "from"),
        check_date(_clean(p.date_to, 10), "to"),
        _clean(p.venue, MAX_FILTER),
        _clean(p.area, MAX_FILTER),
        _clean(p.author, MAX_FILTER),
    )


def search(pool: SearcherPool, params: SearchParams, facets: bool = True) -> Result:
    """Run a search; a query the user must fix becomes ServiceError(400)."""
    p = normalise(params)
    with pool.searcher() as s:
        try:
            return s.search(
                p.q, mode=p.mode, sort=p.sort, page=p.page, per_page=p.per_page, filters=p.filters(), facets=facets
            )
        except QueryError as e:
            raise ServiceError(400, str(e)) from None


def _check_id(pid: str) -> str:
    pid = (pid or "").strip().removeprefix("arXiv:").removeprefix("arxiv:")
    if not pid or len(pid) > 200 or "\x00" in pid:
        raise ServiceError(404, "no paper with this id")
    return pid


def get_paper(pool: SearcherPool, pid: str) -> Paper:
    """One paper by id (arXiv ids may carry an `arXiv:` prefix or a version suffix)."""
    pid = _check_id(pid)
    with pool.searcher() as s:
        p = s.store.get(pid)
        if p is None and _VERSION.search(pid):
            p = s.store.get(_VERSION.sub("", pid))
    if p is None:
        raise ServiceError(404, f"no paper with id {pid[:80]!r}")
    return p


def similar(pool: SearcherPool, pid: str, k: int = 10) -> tuple[Paper, list[Hit]]:
    """A paper and its nearest neighbours."""
    if not 1 <= k <= MAX_SIMILAR:
        raise ServiceError(400, f"k must be between 1 and {MAX_SIMILAR}")
    paper = get_paper(pool, pid)
    with pool.searcher() as s:
        try:
            return paper, s.similar(paper.id, k)
        except KeyError:
            raise ServiceError(404, f"no paper with id {pid[:80]!r}") from None
        except QueryError:  # a title that makes no lexical query: no neighbours to offer
            return paper, []


def daily(pool: SearcherPool, day: str | None = None, category: str | None = None, page: int = 1, per_page: int = 50):
    """The papers of one day (default: the latest day in the store)."""
    if not 1 <= page <= MAX_PAGE:
        raise ServiceError(400, f"page must be between 1 and {MAX_PAGE}")
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise ServiceError(400, f"per_page must be between 1 and {MAX_PER_PAGE}")
    if day is not None and day != "" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        raise ServiceError(400, f"day must be a date YYYY-MM-DD, got {day[:40]!r}")
    day = check_date(day, "day")
    category = _clean(category, MAX_CATEGORY)
    with pool.searcher() as s:
        try:
            return feed.daily(s.store, day, category, page, per_page)
        except feed.FeedError as e:
            raise ServiceError(400, str(e)) from None


def days(pool: SearcherPool, limit: int = 60) -> list[tuple[str, int]]:
    if not 1 <= limit <= 1000:
        raise ServiceError(400, "limit must be between 1 and 1000")
    with pool.searcher() as s:
        return feed.days(s.store, limit)

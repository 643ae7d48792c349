"""One code path per feature, shared by the HTML views, the JSON API, the MCP tools and the CLI.

Each function takes a pool and plain arguments, validates them once for every interface and
returns library objects; errors are :class:`ServiceError` with the HTTP status they mean. The
server passes a :class:`SearcherPool` (a request borrows a searcher; cheap look-ups borrow plain
store connections, never queueing behind searches), a command a :class:`Local` pool. Every
search runs within a time budget (:func:`within_budget`, docs/request-costs.md).
"""

from __future__ import annotations

import contextvars
import datetime as dt
import itertools
import logging
import os
import queue
import re
import sqlite3
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from paperdex.discover import feed, library
from paperdex.discover import recommend as R
from paperdex.index import lexical, vectors
from paperdex.index.embed import EmbedOptions
from paperdex.index.publish import publish_if_abandoned, unpublished
from paperdex.index.snapshots import REPAIR_COMMAND, stamp, writer_alive
from paperdex.index.vectors import VectorIndex
from paperdex.messages import message, param
from paperdex.paper import ARXIV_REF, Paper, typed_id
from paperdex.search import MAX_WINDOW, MODES, SORTS, Filters, Hit, OverBudget, Request, Result, Searcher, lex_index
from paperdex.search.query import DATE_SHAPE, QueryError
from paperdex.settings import DEFAULT_POOL_WAIT, DEFAULT_TIME_BUDGET, Settings
from paperdex.store import OverTime, Period, PrefixCounts, Store, StoreError
from paperdex.text import zh

MAX_QUERY = 1000
# a page number's bound, the results window's: with per_page 1 every listed paper has its page
# (it was 500, under the `pages` a search of 10 a page reported, up to 1,000, and the pager linked)
MAX_PAGE = MAX_WINDOW
MAX_PER_PAGE = 100
MAX_SIMILAR = 50
MAX_CATEGORY = 64
MAX_FILTER = 200
POOL_WAIT = DEFAULT_POOL_WAIT  # seconds a request waits for a searcher ($PAPERDEX_POOL_WAIT: settings)
RETRY_AFTER = 2
TIME_BUDGET = DEFAULT_TIME_BUDGET  # seconds one search may run ($PAPERDEX_TIME_BUDGET: settings)
READERS = 4  # store connections for cheap look-ups, per process
CATCH_UP_AFTER = 2.0  # seconds of lag, no writer alive, before the server publishes (SearcherPool._catch_up)
PUBLISH_RETRY = 60.0  # seconds between tries when this server could not publish (a read-only directory)
MAX_WAITING = 4  # requests of one client waiting for a searcher, per process; more are a 503 at once
# Seconds a related-work request waits for its text's vector before it answers from the words
RELATED_EMBED_WAIT = 8.0
PASTED_CACHE = 256  # pasted texts' vectors kept per process
MAX_RELATED = 100  # related papers one request lists (k)
MAX_K = 200  # recommendations, papers "for you" (a page) or new papers of a saved search one request lists
MAX_RECOMMEND_PAGE = 50  # pages of a tag's recommendations
MAX_DAYS = 1000  # days the list of days goes back
# Who is asking (set by web/limits.py): searchers are handed out client by client
CLIENT: contextvars.ContextVar[str] = contextvars.ContextVar("paperdex_client", default="local")
log = logging.getLogger("paperdex.service")
# The API spec's pattern of a day that can exist: YYYY[-MM[-DD]], 02-29 in any year (check_date sees to it)
_YEAR = r"(?:[1-9]\d{3}|0[1-9]\d{2}|00[1-9]\d|000[1-9])"
_MONTH_DAY = r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2\d))"
_MONTH = r"(?:0[1-9]|1[0-2])"
DATE_PREFIX = rf"^{_YEAR}(?:-{_MONTH_DAY}|-{_MONTH})?$"
DAY = rf"^{_YEAR}-{_MONTH_DAY}$"


class ServiceError(Exception):
    """A request that cannot be answered: its HTTP status, and `headers` (Retry-After)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def check_date(value: str | None, name: str) -> str | None:
    """YYYY, YYYY-MM or YYYY-MM-DD naming a day that exists (else a 400, not an empty filter)."""
    if value is None or value == "":
        return None
    if not DATE_SHAPE.match(value):
        raise ServiceError(400, message("param_date_shape", name=param(name), value=value[:40]))
    parts = [int(x) for x in value.split("-")] + [1, 1]
    try:
        dt.date(parts[0], parts[1], parts[2])  # year 0000 too: date.MINYEAR is 1
    except ValueError:
        raise ServiceError(400, message("param_date_not_real", name=param(name), value=value)) from None
    return value


def make_searcher(
    store: Store, backend: str | None = None, embed_options: EmbedOptions | None = None, zh_dict: bool = True
) -> Searcher:
    """The one Searcher of the web and the CLI; with a backend URI, over its copy."""
    from paperdex.backends import search_corpus

    return Searcher(store, corpus=search_corpus(backend), embed_options=embed_options, zh_dict=zh_dict)


@contextmanager
def within_budget(
    store: Store, budget: float, what: str = "a request", over: Callable[[float], ServiceError] | None = None
) -> Iterator[float]:
    """Run a request within `budget` s, yielding the deadline; a 503 out of time (`over`), a 400 for bad input
    (a LibraryError passes: every interface answers it as it answers a ServiceError)."""
    try:
        with store.time_limit(budget) as deadline:
            yield deadline
    except (QueryError, feed.FeedError) as e:
        raise ServiceError(400, str(e)) from None
    except (OverBudget, OverTime):
        log.warning("%s over its time budget (%g s)", what, budget)
        raise (over or over_budget)(budget) from None


class FairGate:
    """`size` slots for the waiting client holding the fewest, then served longest ago."""

    def __init__(self, size: int, max_waiting: int = MAX_WAITING) -> None:
        self._cv = threading.Condition(threading.Lock())
        self._free = size
        self._held: Counter[str] = Counter()
        self._lanes: OrderedDict[str, deque[list[bool]]] = OrderedDict()
        self._served: dict[str, int] = {}  # client -> when it last got a slot (a counter)
        self._clock = itertools.count(1)
        self.max_waiting = max_waiting

    def acquire(self, client: str, timeout: float) -> bool:
        """Take a slot for `client` within `timeout` s; False if none came."""
        with self._cv:
            if self._free > 0 and not self._lanes:
                self._grant(client)
                return True
            if len(lane := self._lanes.setdefault(client, deque())) >= self.max_waiting:
                return False
            ticket = [False]
            lane.append(ticket)
            self._hand_out()
            if self._cv.wait_for(lambda: ticket[0], timeout):
                return True
            lane.remove(ticket)
            if not lane:
                del self._lanes[client]
                if not self._held[client]:
                    self._served.pop(client, None)
            return False

    def release(self, client: str) -> None:
        with self._cv:
            self._held[client] -= 1
            if self._held[client] <= 0:
                del self._held[client]
                if client not in self._lanes:
                    self._served.pop(client, None)
            self._free += 1
            self._hand_out()

    @property
    def waiting(self) -> int:
        with self._cv:
            return sum(len(lane) for lane in self._lanes.values())

    def _hand_out(self) -> None:  # under the lock
        woke = False
        while self._free > 0 and self._lanes:
            client = min(self._lanes, key=lambda c: (self._held[c], self._served.get(c, 0)))
            lane = self._lanes[client]
            lane.popleft()[0] = True
            if not lane:
                del self._lanes[client]
            self._grant(client)
            woke = True
        if woke:
            self._cv.notify_all()

    def _grant(self, client: str) -> None:  # under the lock
        self._free -= 1
        self._held[client] += 1
        self._served[client] = next(self._clock)


class SearcherPool:
    """A fixed set of searchers, one caller at a time, and store connections for look-ups."""

    def __init__(
        self,
        data_dir: str | Path,
        size: int | None = None,
        wait: float | None = None,
        budget: float | None = None,
        backend: str | None = None,
        client_queue: int = MAX_WAITING,
        embed_options: EmbedOptions | None = None,
        zh_dict: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.backend = backend  # a URI searches read; None: the store itself
        self.embed_options, self.zh_dict = embed_options, zh_dict
        self.size = max(1, size or min(4, os.cpu_count() or 2))
        self.wait = POOL_WAIT if wait is None else wait
        self.budget = TIME_BUDGET if budget is None else budget
        self._free: queue.LifoQueue[Searcher] = queue.LifoQueue()
        self._stores: queue.LifoQueue[Store] = queue.LifoQueue()
        self._made = {"searcher": 0, "reader": 0}
        self._limit = {"searcher": self.size, "reader": max(1, READERS)}
        self._lock = threading.Lock()
        self._gate = FairGate(self.size, client_queue)
        self._watch: threading.Thread | None = None
        self._closing = threading.Event()
        self.pasted = PastedVectors()
        self.publish_error: str | None = None  # why this server could not publish a dead writer's papers
        self._retry_at = 0.0  # when to try publishing again after it failed
        self.took: dict[str, float] = {}  # seconds spent loading what searches need, per part (warm)
        Store(self.data_dir, readonly=True).close()  # fails fast without a data directory

    @classmethod
    def of(cls, st: Settings, data_dir: str | Path, size: int | None = None, queue: int = MAX_WAITING) -> SearcherPool:
        """The pool `st` describes, `queue` a client's waiting requests at most."""
        return cls(data_dir, size, st.pool_wait, st.time_budget, st.backend, queue, st.embedding, st.zh_dict)

    def _borrow(self, kind: str, free: queue.LifoQueue, make, wait: float | None):
        with suppress(queue.Empty):
            return free.get_nowait()
        with self._lock:
            made = self._made[kind] < self._limit[kind]
            self._made[kind] += made
        if made:
            try:
                return make()
            except BaseException:
                with self._lock:
                    self._made[kind] -= 1
                raise
        try:
            return free.get(timeout=self.wait if wait is None else wait)
        except queue.Empty:
            raise ServiceError(503, message("busy"), {"Retry-After": str(RETRY_AFTER)}) from None

    @property
    def waiting(self) -> int:
        return self._gate.waiting

    @contextmanager
    def searcher(self, wait: float | None = None) -> Iterator[Searcher]:
        """Borrow a searcher, in turn with other clients; all busy past the wait is a 503."""
        client = CLIENT.get()
        if not self._gate.acquire(client, self.wait if wait is None else wait):
            raise ServiceError(503, message("busy"), {"Retry-After": str(RETRY_AFTER)})
        try:
            s = self._borrow("searcher", self._free, self._new_searcher, 0)
        except BaseException:
            self._gate.release(client)
            raise
        try:
            yield s
        finally:
            self._free.put(s)
            self._gate.release(client)

    def embed_pasted(self, emb, model: str, text: str) -> np.ndarray | None:
        """The vector of a pasted text, None if not made within RELATED_EMBED_WAIT s."""
        return self.pasted.vector(CLIENT.get(), emb, model, text, RELATED_EMBED_WAIT)

    def _new_searcher(self) -> Searcher:
        """A searcher with what queries need loaded, never charged to a query's budget."""
        s = make_searcher(Store(self.data_dir, readonly=True), self.backend, self.embed_options, self.zh_dict)
        _load(self.took, **_first_loads(s))
        return s

    def prepare(self, text: str, dense: bool) -> None:
        """Nothing: every searcher loaded what queries need when it was made."""

    @contextmanager
    def reader(self, wait: float | None = None) -> Iterator[Store]:
        """Borrow a store connection for a cheap look-up (a pool of its own)."""
        st = self._borrow("reader", self._stores, lambda: Store(self.data_dir, readonly=True), wait)
        try:
            yield st
        finally:
            self._stores.put(st)

    def warm(self) -> dict[str, float]:
        """Make every searcher and load now what the first searches would otherwise pay for; seconds per part."""
        with ExitStack() as held:
            for sr in [held.enter_context(self.searcher()) for _ in range(self.size)]:
                _load(self.took, searchers=partial(sr.search, "warm up", per_page=1, facets=False))
            with self.reader() as st:
                _load(self.took, searchers=st.count)
        return self.took

    def watch(self, interval: float = 1.0) -> None:
        """Load what writers publish in the background, so no request pays for it. Idempotent."""
        if self._watch is not None:
            return
        pointers = (self.data_dir / lexical.POINTER, self.data_dir / vectors.POINTER)

        def run() -> None:
            store = Store(self.data_dir, readonly=True)
            seen = tuple(map(stamp, pointers))
            behind_since: float | None = None
            try:
                while not self._closing.wait(interval):
                    if self.backend is None:  # a backend's copy is its writer's (backends/migrate.py)
                        behind_since = self._catch_up(store, behind_since)
                    if (now := tuple(map(stamp, pointers))) == seen:
                        continue
                    t = time.perf_counter()
                    try:
                        lex_index(store)
                        _warm_vectors(Searcher(store))
                        seen = now
                        log.info("loaded the new snapshots in %.2f s", time.perf_counter() - t)
                    except Exception:  # a half-published snapshot: try again at the next tick
                        log.warning("could not load the new snapshots yet", exc_info=True)
            finally:
                store.close()

        self._watch = threading.Thread(target=run, name="paperdex-snapshots", daemon=True)
        self._watch.start()

    def _catch_up(self, store: Store, since: float | None) -> float | None:
        """One tick of closing a dead writer's lag; returns since when it has been seen."""
        try:
            behind = unpublished(store)
        except (sqlite3.Error, StoreError) as e:
            log.warning("could not check whether the indexes are published: %s", e)
            return since
        if not behind:
            self.publish_error = None
            return None
        if since is None:
            return time.monotonic()
        return None if time.monotonic() - since >= CATCH_UP_AFTER and self._publish_abandoned(store) else since

    def _publish_abandoned(self, store: Store) -> bool:
        """Publish a dead writer's papers; False if it did not (retried every PUBLISH_RETRY s)."""
        if self.publish_error is not None and time.monotonic() < self._retry_at:
            return False
        t = time.perf_counter()
        try:
            what = publish_if_abandoned(store)
        except (OSError, sqlite3.Error, StoreError) as e:
            if self.publish_error is None:
                log.warning(
                    "the indexes lag the database and this server cannot publish them (%s); run `%s`",
                    e,
                    REPAIR_COMMAND,
                )
            self.publish_error = str(e)[:200] or type(e).__name__
            self._retry_at = time.monotonic() + PUBLISH_RETRY
            return False
        if what is None:
            return False
        log.warning("%s; no writer is running, so this server published them (%.1f s)", what, time.perf_counter() - t)
        self.publish_error = None
        return True

    def close(self) -> None:
        self._closing.set()
        for free in (self._free, self._stores):
            with suppress(queue.Empty):
                while item := free.get_nowait():
                    (item.store if isinstance(item, Searcher) else item).close()


class Local:
    """A command's pool: one searcher over a store it opened, the server's checks and budget."""

    def __init__(
        self,
        store: Store,
        backend: str | None = None,
        budget: float | None = None,
        embed_options: EmbedOptions | None = None,
        zh_dict: bool = True,
    ) -> None:
        self.store, self.backend, self.data_dir = store, backend, store.data_dir
        self.budget = TIME_BUDGET if budget is None else budget
        self._searcher = make_searcher(store, backend, embed_options, zh_dict)
        self._loaded: set[str] = set()

    @contextmanager
    def searcher(self, wait: float | None = None) -> Iterator[Searcher]:
        yield self._searcher

    def prepare(self, text: str, dense: bool) -> None:
        """Load what searches for `text` need before their time budget starts."""
        s, model = self._searcher, dense and "model" not in self._loaded
        _load({}, lexical=lambda: s.lex, model=lambda: _warm_model(s) if model else None, zh=lambda: _warm_zh(text))
        if dense:
            self._loaded.add("model")

    @contextmanager
    def reader(self, wait: float | None = None) -> Iterator[Store]:
        yield self.store

    def embed_pasted(self, emb, model: str, text: str) -> np.ndarray | None:
        """A command embeds its text itself: no other client waits for the model."""
        return emb.embed_query(text)


Pool = SearcherPool | Local


EMBED_NICE = 10  # the pasted-text embedding threads' niceness (searches: SEARCH_NICE)
TURN_WAIT = 3600.0  # seconds a pasted text waits for the model's turn (its requests wait seconds)


@dataclass(slots=True)
class _Pasted:
    """One text to embed: who waits for it, and what came of it."""

    key: tuple[str, str]
    emb: Any
    waiting: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    vector: np.ndarray | None = None


class PastedVectors:
    """The vectors of pasted texts (the last PASTED_CACHE kept), each embedded on a thread below
    searches, in turn client by client (a :class:`FairGate` of one); a text nobody waits for by
    its turn is dropped, so an overloaded server works through no backlog (docs/request-costs.md)."""

    def __init__(self, size: int = PASTED_CACHE, max_waiting: int = MAX_WAITING) -> None:
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._jobs: dict[tuple[str, str], _Pasted] = {}
        self._model = FairGate(1, max_waiting)
        self.size = size

    def vector(self, client: str, emb, model: str, text: str, wait: float) -> np.ndarray | None:
        """The vector of `text` by `emb` (model `model`); None if not made within `wait` s."""
        key = (model, text)
        with self._lock:
            if (got := self._cache.get(key)) is not None:
                self._cache.move_to_end(key)
                return got
            if (job := self._jobs.get(key)) is None:
                job = self._jobs[key] = _Pasted(key, emb)
                threading.Thread(target=self._embed, args=(client, job), name="paperdex-embed", daemon=True).start()
            job.waiting += 1
        job.done.wait(wait)
        with self._lock:
            job.waiting -= 1
        return job.vector

    def _embed(self, client: str, job: _Pasted) -> None:
        """Wait for the model's turn, then embed the text if anybody still waits for it."""
        with suppress(AttributeError, OSError):  # as _yield_to_the_loop
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), EMBED_NICE)
        vector = None
        if self._model.acquire(client, TURN_WAIT):
            try:
                with self._lock:
                    wanted = job.waiting > 0
                if wanted:
                    vector = job.emb.embed_query(job.key[1])
            except Exception:  # a model that fails: the request answers from the words, and says so
                log.warning("embedding a pasted text failed", exc_info=True)
            finally:
                self._model.release(client)
        with self._lock:
            if vector is not None:
                self._cache[job.key] = vector
                while len(self._cache) > self.size:
                    self._cache.popitem(last=False)
            job.vector = vector
            self._jobs.pop(job.key, None)
        job.done.set()


def _warm_vectors(s: Searcher) -> None:
    if isinstance((ix := s.index), VectorIndex) and len(ix):  # another backend's vectors have nothing to load
        ix.warm()


def _warm_zh(text: str = "扩散模型") -> None:
    if zh.has_cjk(text):
        zh.concepts("扩散模型", table=PrefixCounts)  # jieba's dictionary and ours


def _load(took: dict[str, float], **steps: Callable[[], object]) -> dict[str, float]:
    """Load what searches need, adding each step's seconds to `took`; a failure is logged."""
    for name, fn in steps.items():
        t = time.perf_counter()
        try:
            fn()
        except (QueryError, StoreError, OSError, ValueError) as e:
            log.warning("loading %s failed: %s", name, e)
        took[name] = took.get(name, 0.0) + time.perf_counter() - t
    return took


def _first_loads(s: Searcher) -> dict[str, Callable[[], object]]:
    return dict(lexical=lambda: s.lex, vectors=lambda: _warm_vectors(s), model=lambda: _warm_model(s), zh=_warm_zh)


def _warm_model(s: Searcher) -> None:
    if (emb := s.embedder()) is not None:
        emb.embed_query("warm up")


SearchParams = Request  # one search request as every interface makes it


def _within(value: int, limit: int, key: str, low: int = 1) -> None:
    """A number within low..limit, else ServiceError(400) with the message `key`."""
    if not low <= value <= limit:
        raise ServiceError(400, message(key, limit=limit))


def _clean(v: str | None, limit: int = 200) -> str | None:
    if v is None:
        return None
    v = v.strip()
    if len(v) > limit:
        raise ServiceError(400, message("filter_too_long", limit=limit))
    if "\x00" in v:
        raise ServiceError(400, message("filter_nul"))
    return v or None


def normalise(p: SearchParams) -> SearchParams:
    """Validate and tidy search parameters; raises ServiceError(400) for bad ones."""
    q = (p.q or "").strip()
    if len(q) > MAX_QUERY:
        raise ServiceError(400, message("query_longer_than", limit=MAX_QUERY))
    if "\x00" in q:
        raise ServiceError(400, message("query_nul"))
    if p.mode not in MODES:
        raise ServiceError(400, message("unknown_mode", value=p.mode, choices=", ".join(MODES)))
    if p.sort not in SORTS:
        raise ServiceError(400, message("unknown_sort", value=p.sort, choices=", ".join(SORTS)))
    _within(p.page, MAX_PAGE, "page_range")
    _within(p.per_page, MAX_PER_PAGE, "per_page_range")
    return replace(
        p,
        q=q,
        category=_clean(p.category, MAX_CATEGORY),
        date_from=check_date(_clean(p.date_from, 10), "from"),
        date_to=check_date(_clean(p.date_to, 10), "to"),
        venue=_clean(p.venue, MAX_FILTER),
        area=_clean(p.area, MAX_FILTER),
        author=_clean(p.author, MAX_FILTER),
    )


def over_budget(budget: float) -> ServiceError:
    return ServiceError(503, message("over_budget", budget=budget))


def tags_over_budget(budget: float) -> ServiceError:
    """Ranking by the user's tags out of time: nothing for them to narrow (their models were fitted
    before the budget started: recommend.prepare), so a retry, said as such."""
    return ServiceError(503, message("tags_over_budget", budget=budget), {"Retry-After": str(RETRY_AFTER)})


SEARCH_NICE = 5  # a search thread's niceness: the event loop (static files, cheap pages) goes first
_niced = threading.local()


def _yield_to_the_loop() -> None:
    """Lower this request thread's CPU priority once, so the event loop goes first (not the CLI's)."""
    if getattr(_niced, "done", False) or threading.current_thread() is threading.main_thread():
        return
    _niced.done = True
    with suppress(AttributeError, OSError):  # not Linux, or not allowed: same priority as before
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SEARCH_NICE)


def health(pool: Pool) -> dict:
    """For a load balancer: a 503 unless the store and backend answer; `degraded`: a lag."""
    try:
        with pool.reader(wait=1.0) as st:
            with st.read_snapshot():
                papers, generation, epoch = st.count(), st.generation(), st.vectors_epoch()
            corpus = make_searcher(st, pool.backend).corpus
            lex = corpus.lexical()
            vectors = corpus.vectors()
            degraded = None
            if pool.backend is None:  # a backend's copy is not this store's snapshots
                behind = ["lexical"] * (lex.generation != generation)
                if isinstance(vectors, VectorIndex) and vectors.epoch != epoch:
                    behind.append("vectors")
                if behind:
                    degraded = _degraded(pool, st, behind, generation, lex.generation)
    except ServiceError:
        raise
    except Exception as e:  # a backend down, a snapshot unreadable: say so, as a 503
        raise ServiceError(
            503, message("not_ready", kind=type(e).__name__, error=str(e)[:200]), {"Retry-After": "5"}
        ) from None
    kind = "embedded" if pool.backend is None else pool.backend.split("://", 1)[0]
    out = {"ok": degraded is None, "backend": kind, "papers": papers, "indexed": lex.n, "vectors": len(vectors or [])}
    return out if degraded is None else {**out, "degraded": degraded}


def _degraded(pool: Pool, st: Store, behind: list[str], generation: int, indexed: int) -> dict:
    """What /healthz says while the snapshots lag, and the command that closes it."""
    error = getattr(pool, "publish_error", None)
    if not unpublished(st):
        action = message("index_behind_loading")
    elif error:
        action = message("index_behind_cannot", error=error, fix=REPAIR_COMMAND)
    else:
        action = message("index_behind_waiting" if writer_alive(st.data_dir) else "index_behind_publishing")
    if len(behind) == 2:
        what = message("index_behind_what_both")
    else:
        what = message("index_behind_what_lexical" if behind == ["lexical"] else "index_behind_what_vectors")
    return {
        "message": message("index_behind", what=what, action=action),
        "behind": behind,
        "generation": generation,
        "indexed_generation": indexed,
        "fix": REPAIR_COMMAND,
    }


def search(pool: Pool, params: SearchParams, facets: bool = True) -> Result:
    """Run a search within the pool's time budget (ServiceError 400 or 503)."""
    p = normalise(params)
    _yield_to_the_loop()
    pool.prepare(p.q, p.mode != "lexical")
    with pool.searcher() as s, within_budget(s.store, pool.budget, f"the search {p.q[:200]!r}") as deadline:
        return s.search(p, facets=facets, deadline=deadline)


def matched(pool: Pool, params: SearchParams, limit: int) -> tuple[list[Paper], Result]:
    """The papers a search matches (its `total`), in its order, at most `limit` (1..MAX_WINDOW,
    the results a query lists), with its first page for the total and the notices. The related
    papers listed after the matched set are left out: a .bib of a query holds what it found.
    A query read as one ranked list (a question) gives its first `total` papers."""
    _within(limit, MAX_WINDOW, "limit_range")
    papers: list[Paper] = []
    first: Result | None = None
    for page in range(1, MAX_WINDOW // MAX_PER_PAGE + 1):
        res = search(pool, replace(params, page=page, per_page=MAX_PER_PAGE), facets=False)
        first = first or res
        papers += [h.paper for h in res.hits if h.tier != "related"]
        last = len(res.hits) < MAX_PER_PAGE or any(h.tier == "related" for h in res.hits)
        if last or len(papers) >= min(limit, first.total):
            break
    assert first is not None
    return papers[: min(limit, first.total)], first


def papers_by_ids(pool: Pool, ids: list[str]) -> list[Paper]:
    """The papers of typed ids (get_paper's rule: `arXiv:`, a version, an arXiv URL), each once,
    in the order given; ServiceError(404) naming every id the store does not have."""
    wanted = list(dict.fromkeys(typed_id(i) for i in ids))
    with pool.reader() as st:
        found = {pid: p for pid in wanted if pid and "\x00" not in pid and (p := st.get(pid)) is not None}
    missing = [i for i in ids if typed_id(i) not in found]
    if missing:
        raise ServiceError(404, message("ids_not_in_store", ids=", ".join(missing)))
    return [found[pid] for pid in wanted]


def related(pool: Pool, text: str, k: int = 20, filters: Filters | None = None) -> R.Related:
    """Related work for a pasted text (from its words alone if not embedded within a wait)."""
    text = str(text or "")
    if not text.strip():
        raise ServiceError(400, message("text_missing"))
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_RELATED:
        raise ServiceError(400, message("k_related", limit=MAX_RELATED))
    f = filters or Filters()
    for name, v in (("category", f.category), ("from", f.date_from), ("to", f.date_to)):
        if v is not None and not isinstance(v, str):  # a JSON body's number or object
            raise ServiceError(400, message("param_not_text", name=name, value=repr(v)[:40]))
    named = _named_paper(pool, text)
    if named is not None:  # an id or arXiv URL alone: the paper's own words, itself left out
        text, k = f"{named.title}. {named.abstract}", k + 1
    _yield_to_the_loop()
    pool.prepare(text[: R.MAX_TEXT], True)
    with pool.searcher() as s:  # a moment: the model the vectors were made with
        vindex = s.index
        model = vindex.model if vindex is not None and len(vindex) else None
        emb = s.embedder(model) if model else None
    qv = None if emb is None or model is None else pool.embed_pasted(emb, model, R.pasted_prefix(text))
    words_only = emb is not None and qv is None

    def over(budget: float) -> ServiceError:
        return ServiceError(503, message("related_over_budget", budget=budget), {"Retry-After": str(RETRY_AFTER)})

    what = f"related work for {len(text)} characters"
    with pool.searcher() as s, within_budget(s.store, pool.budget, what, over) as dl:
        out = R.related(s, text, k, filters=filters, deadline=dl, query_vector=qv, dense=not words_only)
    if words_only:
        out.notices.append(message("related_words_only"))
    if named is not None:
        out.hits = [h for h in out.hits if h.paper.id != named.id][: k - 1]
        out.notices.insert(0, message("related_to_paper", id=named.id, title=" ".join(named.title.split())[:120]))
    return out


def _named_paper(pool: Pool, text: str) -> Paper | None:
    """The paper a text that is only an arXiv id or URL names (paper.ARXIV_REF, as a typed id is
    read): a researcher asking for its related work means the paper, not the id's digits, which
    embedded as text found noise. ServiceError(404) when the store lacks it: its words are unknown."""
    if (m := ARXIV_REF.match(text.strip())) is None:
        return None
    pid = typed_id(m.group(0))
    with pool.reader() as st:
        p = st.get(pid)
    if p is None:
        raise ServiceError(404, message("related_id_not_in_store", id=pid[:80]))
    return p


def get_paper(pool: Pool, pid: str) -> Paper:
    """One paper by id (arXiv ids may carry an `arXiv:` prefix or a version suffix)."""
    if not (pid := typed_id(pid)) or len(pid) > 200 or "\x00" in pid:
        raise ServiceError(404, message("no_paper_this_id"))
    with pool.reader() as st:
        p = st.get(pid)
    if p is None:
        raise ServiceError(404, message("no_paper_id", id=pid[:80]))
    return p


def similar(pool: Pool, pid: str, k: int = 10) -> tuple[Paper, list[Hit]]:
    """The paper (from the store) and its nearest papers (from what searches read). A paper the
    store has and a backend's copy lacks (ingested since the last `migrate --to`) has none: its
    page was a 404 while `show` printed it."""
    _within(k, MAX_SIMILAR, "k_range")
    paper = get_paper(pool, pid)
    with pool.searcher() as s, within_budget(s.store, pool.budget):
        try:
            return paper, s.similar(paper.id, k)
        except (KeyError, QueryError):  # not in the copy yet; a title that makes no lexical query
            return paper, []


def daily(pool: Pool, day: str | None = None, category: str | None = None, page: int = 1, per_page: int = 50):
    day, category = _listing_args(day, category, page, per_page)
    return read_feed(pool, feed.daily, day, category, page, per_page)


def _listing_args(day: str | None, category: str | None, page: int, per_page: int) -> tuple[str | None, str | None]:
    """The checks of every listing's parameters; the day and category as the feed takes them."""
    _within(page, MAX_PAGE, "page_range")
    _within(per_page, MAX_PER_PAGE, "per_page_range")
    if day is not None and day != "" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        raise ServiceError(400, message("day_shape", value=day[:40]))
    return check_date(day, "day"), _clean(category, MAX_CATEGORY)


def read_feed(pool: Pool, fn, *args, over: Callable[[float], ServiceError] | None = None):
    """A feed function on a reader connection, within the time budget (400 or 503: `over`'s)."""
    with pool.reader() as st, within_budget(st, pool.budget, over=over):
        return fn(st, *args)


def listing(
    pool: Pool, view: str, day: str | None, category: str | None, sort: str, page: int, per_page: int
) -> feed.Listing:
    """A day's, week's or month's papers (feed.listing); "Top" without upvotes ranked as "For you"
    given tags, else in the listing's order, saying so (why not by stars: docs/web.md). A page
    past the last is empty, its `pages` the last (the page says so), however far past."""
    day, category = _listing_args(day, category, min(page, MAX_PAGE), per_page)
    if page > MAX_PAGE:  # past any listing's last page: read none of it
        d = listing(pool, view, day, category, sort, 1, per_page)
        d.page, d.papers = page, []
        return d
    over = None
    if sort in ("top", "foryou") and view != "trending":  # ranked by the tags: their models first
        with pool.reader() as st:
            R.prepare(st)
        over = tags_over_budget
    d = read_feed(pool, feed.listing, view, day, category, sort, page, per_page, over=over)
    if sort != "top" or view == "trending" or "upvotes" in d.ranked_by or "stars" not in d.ranked_by:
        return d
    instead = "foryou" if "tags" in d.ranked_by else "newest"
    alt = read_feed(pool, feed.listing, view, day, category, instead, page, per_page, over=over)
    alt.sort = "top"
    alt.ranked_by = ["no_upvotes", "tags" if instead == "foryou" else "listing"]
    return alt


def days(pool: Pool, limit: int = 60) -> list[tuple[str, int]]:
    _within(limit, MAX_DAYS, "limit_range")
    with pool.reader() as st:
        return feed.days(st, limit)


def overview(pool: Pool) -> dict:
    """The store's size, date range and newest paper (a real id for examples)."""
    with pool.reader() as store:
        st = store.stats()
        newest = store.newest_paper_id()
    return {k: st[k] for k in ("papers", "with_vectors", "first_date", "last_date")} | {"example_id": newest}


def recommend(pool: Pool, tag: str, k: int = 20, page: int = 1, within: list[int] | None = None) -> R.Recommendations:
    """A tag's recommendations (`within`: among these rowids only), within the time budget."""
    _within(k, MAX_K, "k_range")
    _within(page, MAX_RECOMMEND_PAGE, "page_range")
    with pool.searcher() as s:
        R.prepare(s.store, [tag], s.corpus)  # the tag's model, before the budget starts
        with within_budget(s.store, pool.budget, f"recommendations for {tag[:80]!r}", tags_over_budget):
            return R.recommend(s.store, tag, k, page=page, within=within, source=s.corpus)


def saved_searches(pool: Pool) -> list[tuple[library.SavedSearch, library.NewMatches | None]]:
    """Every saved search and its new papers, within one time budget (None: not counted)."""
    out: list[tuple[library.SavedSearch, library.NewMatches | None]] = []
    with pool.reader() as st:
        saved = library.saved_searches(st)
    _prepare(pool, saved)
    with pool.searcher() as s, within_budget(s.store, pool.budget) as deadline:
        for ss in saved:
            try:
                with s.store.time_limit(deadline - time.monotonic()):
                    out.append((ss, library.new_matches(s, ss, 0, deadline=deadline)))
            except (OverBudget, OverTime):
                out.append((ss, None))
    return out


def new_matches(pool: Pool, key: str, limit: int = 20) -> library.NewMatches:
    """The papers new since the last visit that a saved search (by name or id) matches."""
    _within(limit, MAX_K, "limit_from_zero", low=0)
    ss = _saved(pool, key)
    with pool.searcher() as s, within_budget(s.store, pool.budget) as deadline:
        return library.new_matches(s, ss, limit, deadline=deadline)


def _saved(pool: Pool, key: str) -> library.SavedSearch:
    """A saved search by name or id (404 if none), what running it needs loaded."""
    with pool.reader() as st:
        ss = library.get_saved(st, key)
    _prepare(pool, [ss])
    return ss


def _prepare(pool: Pool, saved: list[library.SavedSearch]) -> None:
    pool.prepare(" ".join(ss.query for ss in saved), any(ss.mode != "lexical" for ss in saved))


def run_saved(pool: Pool, key: str, per_page: int) -> tuple[library.SavedSearch, Result]:
    """A saved search's newest matches; one that no longer runs is a 422."""
    ss = _saved(pool, key)
    with pool.searcher() as s, within_budget(s.store, pool.budget) as deadline:
        try:
            return ss, library.run_saved(s, ss, per_page=per_page, deadline=deadline)
        except QueryError as e:
            raise ServiceError(422, message("saved_no_longer_runs", name=ss.name, error=str(e))) from None


def for_you(pool: Pool, day: str | None, k: int, page: int = 1) -> tuple[feed.Day, list[tuple[Paper, float, str]]]:
    """Page `page` (`k` a page: the API's `per_page`) of a day's papers that the user's tags score,
    best first, each with its best score and that tag; `d.total` is how many the tags score (what
    the pages list), `d.day_total` the day's papers. A page past the last is empty and says so
    (`d.pages`); page 0 or one past MAX_PAGE is a 400, as a day's listing's."""
    _within(k, MAX_K, "per_page_range")
    _within(page, MAX_PAGE, "page_range")
    with pool.searcher() as s:
        R.prepare(s.store, None, s.corpus)  # the tags' models, before the budget starts
        with within_budget(s.store, pool.budget, "for you", tags_over_budget):
            d = feed.daily(s.store, day or None, None, 1, 1)  # the day, its neighbours and notices
            ranked = _day_for_you(s, d)
    d = replace(d, page=page, per_page=k, total=len(ranked))
    ranked = ranked[(page - 1) * k : page * k]
    d.papers = [p for p, _, _ in ranked]
    return d, ranked


def _day_for_you(s: Searcher, d: feed.Day) -> list[tuple[Paper, float, str]]:
    """Every paper of the day the tags score, by its best score, ties in listing order (the order
    the first 200, all it scored, had: a day of 500 hid 300, and had no second page)."""
    papers = s.store.papers_in(Period(d.day, d.day), "listing", d.day_total) if d.day and d.day_total else []
    rowids = {s.corpus.rowid(p.id): p for p in papers}
    scored = R.for_you(s.store, [r for r in rowids if r is not None], s.corpus)
    d.notices += R.for_you_notices(s.store, d.day_total, bool(scored))
    return sorted(((p, *scored[r]) for r, p in rowids.items() if r in scored), key=lambda x: -x[1])

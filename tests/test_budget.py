"""The per-search time budget: the store stops a statement past its deadline, the engine checks
its deadline, the service answers 503 with a message, and the connection is clean for the next
search."""

from __future__ import annotations

import threading
import time

import pytest

from paperdex import service
from paperdex.search import OverBudget
from paperdex.service import SearcherPool, SearchParams, ServiceError
from paperdex.store import OverTime, Store

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path) as st:
        yield st


def test_the_time_limit_stops_a_runaway_statement_and_nothing_after(store):
    t = time.monotonic()
    with pytest.raises(OverTime, match="interrupt"):
        with store.time_limit(0.2):
            store.conn.execute(RUNAWAY).fetchone()
    assert time.monotonic() - t < 2
    # a search that ends before its deadline leaves no limit behind for the next one
    with store.time_limit(0.05):
        pass
    time.sleep(0.15)
    assert store.conn.execute("SELECT count(*) FROM (SELECT 1 UNION ALL SELECT 2)").fetchone()[0] == 2


def test_an_interrupted_read_transaction_is_not_left_open(store):
    with pytest.raises(OverTime):
        with store.time_limit(0.1):
            store.conn.execute("BEGIN")
            store.conn.execute(RUNAWAY).fetchone()
    assert not store.conn.in_transaction


def test_the_engine_stops_at_its_deadline(searcher):
    with pytest.raises(OverBudget):
        searcher.search("robot learning", mode="lexical", deadline=time.monotonic() - 1)
    assert searcher.search("robot learning", mode="lexical", deadline=time.monotonic() + 30).total > 0


def test_a_search_over_budget_is_a_503_with_a_message_and_the_pool_recovers(built_store_dir):
    pool = SearcherPool(built_store_dir, size=1, budget=0.0)
    with pytest.raises(ServiceError) as e:
        service.search(pool, SearchParams(q="robot learning", mode="lexical"))
    assert e.value.status == 503 and "time budget" in e.value.message
    pool.budget = 30
    assert service.search(pool, SearchParams(q="robot learning", mode="lexical")).total > 0
    pool.close()


def test_a_phrase_query_in_sqlite_is_interrupted(built_store_dir, monkeypatch):
    """The phrase part runs in SQLite (fts_exact): make it a runaway, and the store stops it."""
    pool = SearcherPool(built_store_dir, size=1, budget=0.3)
    with pool.searcher() as s:
        real = s.store.conn

        class Slow:
            def __getattr__(self, name):
                return getattr(real, name)

            def execute(self, sql, *a):
                if "fts_exact" in sql:
                    return real.execute(RUNAWAY)
                return real.execute(sql, *a)

        s.store.conn = Slow()
    t = time.monotonic()
    with pytest.raises(ServiceError) as e:
        service.search(pool, SearchParams(q='"weight decay" robot', mode="lexical"))
    assert e.value.status == 503 and time.monotonic() - t < 3
    with pool.searcher() as s:
        s.store.conn = real
    assert service.search(pool, SearchParams(q='"robot learning"', mode="lexical")).total >= 0
    pool.close()


def test_lookups_do_not_wait_for_a_searcher(built_store_dir):
    """Every searcher busy: a paper, a day's list and the list of days still answer at once."""
    pool = SearcherPool(built_store_dir, size=1, wait=5)
    pid = service.search(pool, SearchParams(q="robot", mode="lexical")).hits[0].paper.id
    release = threading.Event()
    held = threading.Event()

    def hold():
        with pool.searcher():
            held.set()
            release.wait(10)

    threading.Thread(target=hold, daemon=True).start()
    assert held.wait(5)
    try:
        t = time.monotonic()
        assert service.get_paper(pool, pid).id == pid
        assert service.days(pool)
        assert service.daily(pool).total >= 0
        assert time.monotonic() - t < 2
    finally:
        release.set()
    pool.close()


def test_the_time_limit_stops_only_what_is_past_its_deadline(store):
    """Many searches at once, each on its own connection: the runaways are stopped at their
    deadlines, the quick ones (with a longer budget) are never stopped."""
    results: dict[str, list] = {"runaway": [], "quick": []}

    def runaway() -> None:
        with Store(store.data_dir, readonly=True) as st:
            t = time.monotonic()
            try:
                with st.time_limit(0.3):
                    st.conn.execute(RUNAWAY).fetchone()
            except OverTime as e:
                results["runaway"].append((str(e), time.monotonic() - t))

    def quick() -> None:
        with Store(store.data_dir, readonly=True) as st:
            for _ in range(200):
                with st.time_limit(5):
                    results["quick"].append(st.conn.execute("SELECT 1").fetchone()[0])

    threads = [threading.Thread(target=runaway) for _ in range(3)] + [threading.Thread(target=quick) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results["runaway"]) == 3 and all("interrupt" in m and dt < 3 for m, dt in results["runaway"])
    assert results["quick"] == [1] * 600

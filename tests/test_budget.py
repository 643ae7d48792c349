"""The per-search time budget: a watchdog interrupts SQLite, the engine checks its deadline,
the service answers 503 with a message, and the connection is clean for the next search."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from paperdex import service
from paperdex.search.engine import OverBudget
from paperdex.service import SearcherPool, SearchParams, ServiceError, time_budget

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_the_watchdog_interrupts_a_runaway_statement_and_nothing_after():
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    t = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="interrupt"):
        with time_budget(conn, 0.2):
            conn.execute(RUNAWAY).fetchone()
    assert time.monotonic() - t < 2
    # a search that ends before its deadline leaves no interrupt behind for the next one
    with time_budget(conn, 0.05):
        pass
    time.sleep(0.15)
    assert conn.execute("SELECT count(*) FROM (SELECT 1 UNION ALL SELECT 2)").fetchone()[0] == 2


def test_an_interrupted_read_transaction_is_not_left_open():
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("CREATE TABLE t(x)")
    conn.commit()
    with pytest.raises(sqlite3.OperationalError):
        with time_budget(conn, 0.1):
            conn.execute("BEGIN")
            conn.execute(RUNAWAY).fetchone()
    assert not conn.in_transaction


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
    """The phrase part runs in SQLite (fts_exact): make it a runaway, and the watchdog stops it."""
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


def test_the_watchdog_interrupts_only_what_is_past_its_deadline():
    """Many searches at once, each on its own connection: the runaways are stopped at their
    deadlines, the quick ones (armed with a longer budget) never see an interrupt."""
    results: dict[str, list] = {"runaway": [], "quick": []}

    def runaway() -> None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        t = time.monotonic()
        try:
            with time_budget(conn, 0.3):
                conn.execute(RUNAWAY).fetchone()
        except sqlite3.OperationalError as e:
            results["runaway"].append((str(e), time.monotonic() - t))

    def quick() -> None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        for _ in range(200):
            with time_budget(conn, 5):
                results["quick"].append(conn.execute("SELECT 1").fetchone()[0])

    threads = [threading.Thread(target=runaway) for _ in range(3)] + [threading.Thread(target=quick) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results["runaway"]) == 3 and all("interrupt" in m and dt < 3 for m, dt in results["runaway"])
    assert results["quick"] == [1] * 600

"""The daily feed library over a real store."""

from __future__ import annotations

import pytest
from webstore import DAY_WITH_PAGES

from paperdex.discover import feed
from paperdex.store import Store


@pytest.fixture(scope="module")
def store(web_dir):
    s = Store(web_dir, readonly=True)
    yield s
    s.close()


def test_days_and_neighbours(store):
    ds = feed.days(store)
    assert ds[0][0] == feed.latest_day(store) and [d for d, _ in ds] == sorted((d for d, _ in ds), reverse=True)
    assert sum(n for _, n in ds) == store.count()
    empty = feed.daily(store, "2025-03-21")  # a day without papers still has neighbours
    assert empty.prev_day is not None and empty.prev_day <= "2025-03-21" <= (empty.next_day or "9999")
    assert feed.daily(store, DAY_WITH_PAGES).prev_day is None


def test_daily_by_category(store):
    d = feed.daily(store, DAY_WITH_PAGES, per_page=200)
    cv = feed.daily(store, DAY_WITH_PAGES, "cs.CV", per_page=200)
    assert 0 < cv.total < d.total and all("cs.CV" in p.categories for p in cv.papers)
    archive = feed.daily(store, DAY_WITH_PAGES, "cs", per_page=200)
    assert archive.total == sum(1 for p in d.papers if any(c.startswith("cs.") for c in p.categories))


def test_bad_day(store):
    with pytest.raises(feed.FeedError):
        feed.daily(store, "2025/03/19")
    assert feed.daily(store, "1999-01-01").total == 0

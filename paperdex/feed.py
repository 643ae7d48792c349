"""The daily feed: which days the store has papers for, and the papers of one day.

A paper's day is its ``date`` (the day it was first listed, else published), the same date
search sorts and filters by, so "Daily Papers" and ``date:2025-03-19`` always agree.
Pure functions over a :class:`~paperdex.store.Store`; the web UI, the JSON API and the CLI
all read the feed through here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .paper import Paper
from .query import QueryError, date_range
from .store import Store, paper_from_row

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_CATEGORIES = 16


class FeedError(ValueError):
    """A bad day or category argument; the message is fit to show a user."""


@dataclass
class Day:
    """One day of the feed, possibly narrowed to a category, one page of it."""

    day: str | None
    papers: list[Paper]
    total: int  # papers of the day (after the category filter)
    day_total: int  # papers of the day, all categories
    categories: list[tuple[str, int]]  # category -> papers of the day in it (any of theirs), biggest first
    prev_day: str | None
    next_day: str | None
    category: str | None = None
    page: int = 1
    per_page: int = 50
    notices: list[str] = field(default_factory=list)

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def to_dict(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "category": self.category,
            "total": self.total,
            "day_total": self.day_total,
            "page": self.page,
            "per_page": self.per_page,
            "prev_day": self.prev_day,
            "next_day": self.next_day,
            "categories": [{"value": c, "count": n} for c, n in self.categories],
            "papers": [p.to_dict() for p in self.papers],
        }


def days(store: Store, limit: int | None = None) -> list[tuple[str, int]]:
    """Days that have papers, newest first, with how many papers each has."""
    sql = "SELECT date, count(*) FROM papers WHERE date IS NOT NULL GROUP BY date ORDER BY date DESC"
    params: list[Any] = []
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    return [(r[0], r[1]) for r in store.conn.execute(sql, params)]


def latest_day(store: Store) -> str | None:
    """The newest day with papers: what "today's papers" means for a local store."""
    return store.conn.execute("SELECT max(date) FROM papers").fetchone()[0]


def neighbours(store: Store, day: str) -> tuple[str | None, str | None]:
    """The nearest earlier and later days that have papers (days without papers, such as
    weekends, are skipped)."""
    prev = store.conn.execute("SELECT max(date) FROM papers WHERE date < ?", [day]).fetchone()[0]
    nxt = store.conn.execute("SELECT min(date) FROM papers WHERE date > ?", [day]).fetchone()[0]
    return prev, nxt


def _check_day(day: str) -> str:
    """A real calendar day, by the query language's one date rule."""
    day = day.strip()
    if not _DAY.match(day):
        raise FeedError(f"a day is written YYYY-MM-DD, got {day[:40]!r}")
    try:
        date_range(day, day)
    except QueryError as e:
        raise FeedError(str(e)) from None
    return day


def _category_clause(store: Store, category: str) -> tuple[str, list]:
    """`cs.LG` matches that category, `cs` any category of the archive, case-insensitive:
    the `cat:` rule itself (`LexIndex.category_docs`), not a copy of it in SQL."""
    from .search import lex_index

    ix = lex_index(store)
    rowids = [int(r) for r in ix.rowids[ix.category_docs(category)]]
    return "p.rowid IN (SELECT value FROM json_each(?))", [json.dumps(rowids)]


def daily(
    store: Store,
    day: str | None = None,
    category: str | None = None,
    page: int = 1,
    per_page: int = 50,
) -> Day:
    """The papers of `day` (default: the latest day), in listing order, optionally only those
    in `category` (matched on any of a paper's categories, like the `cat:` filter)."""
    page, per_page = max(1, int(page)), max(1, min(int(per_page), 200))
    category = (category or "").strip() or None
    if category and len(category) > 64:
        raise FeedError("category is too long")
    if day:
        day = _check_day(day)
    else:
        day = latest_day(store)
    if day is None:
        return Day(None, [], 0, 0, [], None, None, category, page, per_page, ["the store has no papers yet"])
    cats = [
        (r[0], r[1])
        for r in store.conn.execute(
            "SELECT pc.category, count(*) n FROM paper_categories pc JOIN papers p ON p.rowid = pc.paper "
            "WHERE p.date = ? GROUP BY pc.category ORDER BY n DESC, pc.category LIMIT ?",
            [day, MAX_CATEGORIES],
        )
    ]
    day_total = store.conn.execute("SELECT count(*) FROM papers WHERE date = ?", [day]).fetchone()[0]
    where, params = "p.date = ?", [day]
    if category:
        clause, extra = _category_clause(store, category)
        where += f" AND {clause}"
        params += extra
    total = store.conn.execute(f"SELECT count(*) FROM papers p WHERE {where}", params).fetchone()[0]
    rows = store.conn.execute(
        f"SELECT * FROM papers p WHERE {where} ORDER BY p.rowid LIMIT ? OFFSET ?",
        [*params, per_page, (page - 1) * per_page],
    ).fetchall()
    prev, nxt = neighbours(store, day)
    notices = [] if day_total else [f"no papers listed on {day}"]
    return Day(
        day, [paper_from_row(r) for r in rows], total, day_total, cats, prev, nxt, category, page, per_page, notices
    )

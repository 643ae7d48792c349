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


# --- periods: a day, a week, a month, trending (the web UI's daily page) ------------------------

VIEWS = ("day", "week", "month", "trending")
LISTING_SORTS = ("newest", "upvotes", "stars", "foryou")  # foryou: by the user's tags (recommend.py)
TRENDING_DAYS = 7
# What arXiv calls a category (cs.LG, hep-th, math.AP); MSC (68T10) and ACM (I.2.6) classes
# that some records list among their categories are not offered as chips.
_ARXIV_CATEGORY = re.compile(r"^[a-z\-]+(\.[A-Za-z\-]+)?$")
_UPVOTES = "CAST(json_extract(p.extra, '$.hf.upvotes') AS INTEGER)"
_STARS = "CAST(coalesce(json_extract(p.extra, '$.code_stars'), json_extract(p.extra, '$.hf.github_stars')) AS INTEGER)"
_ORDER = {
    "newest": "p.date DESC, p.rowid",
    "upvotes": f"{_UPVOTES} DESC NULLS LAST, p.date DESC, p.rowid",
    "stars": f"{_STARS} DESC NULLS LAST, p.date DESC, p.rowid",
}


@dataclass
class Listing:
    """Papers of a period (a day, the week or month around a day, or the trending week), one
    page, with the counts a reader sees: `total` after the category filter, `period_total`
    before it, and the category chips of the period (real arXiv categories only)."""

    view: str
    start: str | None
    end: str | None
    papers: list[Paper]
    total: int
    period_total: int
    categories: list[tuple[str, int]]
    prev: str | None  # a day inside the previous period that has papers
    next: str | None
    category: str | None = None
    sort: str = "newest"
    page: int = 1
    per_page: int = 30
    with_upvotes: int = 0  # papers of the period with Hugging Face upvotes
    notices: list[str] = field(default_factory=list)

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def to_dict(self) -> dict[str, Any]:
        return {
            "view": self.view,
            "start": self.start,
            "end": self.end,
            "category": self.category,
            "sort": self.sort,
            "total": self.total,
            "period_total": self.period_total,
            "page": self.page,
            "per_page": self.per_page,
            "prev": self.prev,
            "next": self.next,
            "notices": self.notices,
            "categories": [{"value": c, "count": n} for c, n in self.categories],
            "papers": [p.to_dict() for p in self.papers],
        }


def period(view: str, day: str) -> tuple[str, str]:
    """First and last day of the `view` period around `day`: the ISO week (Monday to Sunday),
    the calendar month, or the TRENDING_DAYS days ending on `day`."""
    import datetime as dt

    d = dt.date.fromisoformat(day)
    if view == "week":
        first = d - dt.timedelta(days=d.weekday())
        return first.isoformat(), (first + dt.timedelta(days=6)).isoformat()
    if view == "month":
        first = d.replace(day=1)
        nxt = (first + dt.timedelta(days=32)).replace(day=1)
        return first.isoformat(), (nxt - dt.timedelta(days=1)).isoformat()
    if view == "trending":
        return (d - dt.timedelta(days=TRENDING_DAYS - 1)).isoformat(), day
    return day, day


def listing(
    store: Store,
    view: str = "day",
    day: str | None = None,
    category: str | None = None,
    sort: str = "newest",
    page: int = 1,
    per_page: int = 30,
) -> Listing:
    """The papers of a period, sorted by date, Hugging Face upvotes, GitHub stars or "for you"
    (the user's tags' recommenders). "trending"
    is always the last TRENDING_DAYS days of the store, by upvotes, papers with upvotes only."""
    if view not in VIEWS:
        raise FeedError(f"unknown view {view!r}; use one of {', '.join(VIEWS)}")
    if sort not in LISTING_SORTS:
        raise FeedError(f"unknown sort {sort!r}; use one of {', '.join(LISTING_SORTS)}")
    page, per_page = max(1, int(page)), max(1, min(int(per_page), 200))
    category = (category or "").strip() or None
    if category and len(category) > 64:
        raise FeedError("category is too long")
    latest = latest_day(store)
    if view == "trending":
        day, sort = latest, "upvotes"
    elif day:
        day = _check_day(day)
    else:
        day = latest
    if day is None:
        notice = "no paper in the store has a date" if store.count() else "the store has no papers yet"
        return Listing(view, None, None, [], 0, 0, [], None, None, category, sort, page, per_page, 0, [notice])
    start, end = period(view, day)
    base, params = "p.date BETWEEN ? AND ?", [start, end]
    if view == "trending":
        base += f" AND {_UPVOTES} > 0"
    period_total = store.conn.execute(f"SELECT count(*) FROM papers p WHERE {base}", params).fetchone()[0]
    with_upvotes = store.conn.execute(
        f"SELECT count(*) FROM papers p WHERE p.date BETWEEN ? AND ? AND {_UPVOTES} > 0", [start, end]
    ).fetchone()[0]
    cats = [
        (c, n)
        for c, n in store.conn.execute(
            f"SELECT pc.category, count(*) n FROM paper_categories pc JOIN papers p ON p.rowid = pc.paper "
            f"WHERE {base} GROUP BY pc.category ORDER BY n DESC, pc.category",
            params,
        )
        if _ARXIV_CATEGORY.match(c)
    ][:MAX_CATEGORIES]
    where, wparams = base, list(params)
    if category:
        clause, extra = _category_clause(store, category)
        where += f" AND {clause}"
        wparams += extra
    total = store.conn.execute(f"SELECT count(*) FROM papers p WHERE {where}", wparams).fetchone()[0]
    # a day keeps its listing order; "for you" falls back to the date order
    order = "p.rowid" if view == "day" and sort in ("newest", "foryou") else _ORDER.get(sort, _ORDER["newest"])
    notices = []
    if sort == "foryou":  # every paper of the period scored by the user's tags (recommend.py)
        from .recommend import for_you_order

        sql = f"SELECT p.rowid FROM papers p WHERE {where} ORDER BY {order}"
        ids = [r[0] for r in store.conn.execute(sql, wparams)]
        ordered, scored = for_you_order(store, ids)
        if ids and not scored:
            notices.append("save papers to a tag to sort them for you; sorted by date")
        ordered = ordered[(page - 1) * per_page : page * per_page]
        got = store.get_many(ordered)
        papers = [got[r] for r in ordered if r in got]
    else:
        rows = store.conn.execute(
            f"SELECT * FROM papers p WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*wparams, per_page, (page - 1) * per_page],
        ).fetchall()
        papers = [paper_from_row(r) for r in rows]
    prev = store.conn.execute("SELECT max(date) FROM papers WHERE date < ?", [start]).fetchone()[0]
    nxt = store.conn.execute("SELECT min(date) FROM papers WHERE date > ?", [end]).fetchone()[0]
    if view == "trending":
        prev = nxt = None
    if not period_total:
        empty = "no papers with upvotes in the last 7 days" if view == "trending" else "no papers in this period"
        notices.append(empty)
    elif sort == "upvotes" and not with_upvotes:
        notices.append("no paper of this period has Hugging Face upvotes; sorted by date")
    return Listing(
        view, start, end, papers, total, period_total, cats, prev, nxt, category, sort, page, per_page, with_upvotes,
        notices,
    )  # fmt: skip

"""The daily feed: which days the store has papers for, and the papers of one day or period.

A paper's day is its ``date`` (the day it was first listed, else published), the same date
search sorts and filters by, so "Daily Papers" and ``date:2025-03-19`` always agree.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from paperdex.discover import library
from paperdex.discover.recommend import MIN_CHIP_PAPERS, for_you_order, strength
from paperdex.messages import message
from paperdex.paper import CATEGORY, Paper
from paperdex.search import lex_index
from paperdex.search.query import DATE_SHAPE, QueryError, date_range
from paperdex.sources import completeness
from paperdex.store import Period, Store

MAX_CATEGORIES = 16


class FeedError(ValueError):
    """A bad day or category argument; the message is fit to show a user."""


class _Page:
    """One page of a listing's papers, and the category chips of what it lists."""

    papers: list[Paper]
    total: int
    categories: list[tuple[str, int]]
    per_page: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def _dict(self, plain: str, **more: Any) -> dict[str, Any]:
        return {
            **{k: getattr(self, k) for k in plain.split()},
            "categories": [{"value": c, "count": n} for c, n in self.categories],
            **more,
            "papers": [p.to_dict() for p in self.papers],
        }


def _page_args(category: str | None, page: int, per_page: int) -> tuple[str | None, int, int]:
    """The category, page and page size as every listing takes them (1 to 200 papers a page)."""
    category = (category or "").strip() or None
    if category and len(category) > 64:
        raise FeedError(message("category_too_long"))
    return category, max(1, int(page)), max(1, min(int(per_page), 200))


@dataclass
class Day(_Page):
    """One page of a day of the feed, possibly narrowed to a category."""

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

    def to_dict(self) -> dict[str, Any]:
        return self._dict("day category total day_total page per_page prev_day next_day")


def days(store: Store, limit: int | None = None) -> list[tuple[str, int]]:
    """Days that have papers, newest first, with how many papers each has."""
    return store.dates_with_counts(limit)


def latest_day(store: Store) -> str | None:
    """The newest day with papers: "today's papers" for a local store."""
    return store.latest_date()


def _check_day(day: str) -> str:
    """A real calendar day, by the query language's one date rule."""
    day = day.strip()
    shape = DATE_SHAPE.match(day)
    if shape is None or shape.group(2) is None:  # a year or a month is no day
        raise FeedError(message("day_written", value=day[:40]))
    try:
        date_range(day, day)
    except QueryError as e:
        raise FeedError(str(e)) from None
    return day


def _in_category(store: Store, period: Period, category: str) -> Period:
    """The papers of `period` in `category` (cs.LG, or cs) by the `cat:` rule itself, not a copy of it in SQL."""
    ix = lex_index(store)
    rowids = tuple(int(r) for r in ix.rowids[ix.category_docs(category)])
    return Period(period.first, period.last, period.upvoted, rowids)


def daily(
    store: Store,
    day: str | None = None,
    category: str | None = None,
    page: int = 1,
    per_page: int = 50,
) -> Day:
    """The papers of `day` (default: the latest day), in listing order, optionally only those
    in `category` (matched on any of a paper's categories, like the `cat:` filter)."""
    category, page, per_page = _page_args(category, page, per_page)
    day = _check_day(day) if day else latest_day(store)
    if day is None:
        return Day(None, [], 0, 0, [], None, None, category, page, per_page, [message("store_empty")])
    cats = store.category_counts_in(Period(day, day), MAX_CATEGORIES)
    day_total = store.count_in(Period(day, day))
    where = _in_category(store, Period(day, day), category) if category else Period(day, day)
    total = store.count_in(where)
    papers = store.papers_in(where, "listing", per_page, (page - 1) * per_page)
    prev, nxt = store.date_before(day), store.date_after(day)  # the nearest days with papers
    notices: list[str] = [] if day_total else [message("no_papers_on", day=day)]
    if state := completeness.day_notice(store, day):
        notices.append(state)
    return Day(day, papers, total, day_total, cats, prev, nxt, category, page, per_page, notices)


# --- periods: a day, a week, a month, trending (the web UI's daily page) ------------------------
VIEWS = ("day", "week", "month", "trending")
# top: the day as a digest (community signal, then the user's tags, then listing order);
# foryou: by the user's tags (recommend.py)
LISTING_SORTS = ("top", "newest", "upvotes", "stars", "foryou")
TOP_TRENDING = 3  # papers the day's shape names as trending
TRENDING_DAYS = 7


@dataclass
class Listing(_Page):
    """One page of a period's papers (a day, the week or month around it, the trending week),
    with `total` after the category filter, `period_total` before it, and the period's chips."""

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
    # the period's shape, for a day's digest: what ranked it, its most upvoted (else starred)
    # papers, and per tag how many of its papers earn the tag's chip and are not in it yet
    ranked_by: list[str] = field(default_factory=list)
    trending: list[Paper] = field(default_factory=list)
    for_tags: list[tuple[str, int]] = field(default_factory=list)
    scores: dict[str, tuple[float, str, str]] = field(default_factory=dict)  # id -> (chance, tag, strength): chips

    def to_dict(self) -> dict[str, Any]:
        return self._dict(
            "view start end category sort total period_total page per_page prev next notices",
            ranked_by=self.ranked_by,
            trending=[p.id for p in self.trending],
            for_tags=[{"tag": t, "count": n} for t, n in self.for_tags],
            chips={i: {"tag": t, "chance": round(p, 3), "strength": s} for i, (p, t, s) in self.scores.items()},
        )


def _top_order(store: Store, where: Period, base_order: str) -> tuple[list[int], list[str], dict]:
    """The period's rowids as a digest: papers with upvotes or stars first, then the rest "for
    you" when there are tags, else in `base_order`; also what ranked it and the for-you scores."""
    rows = store.rowids_by_signal_in(where, base_order)
    signal = [r for r, up, st in rows if (up or 0) > 0 or (st or 0) > 0]
    ranked_by = [name for name, i in (("upvotes", 1), ("stars", 2)) if any((row[i] or 0) > 0 for row in rows)]
    ordered, scored = for_you_order(store, [r for r, _, _ in rows])  # every paper scored, for the shape
    first = set(signal)
    return signal + [r for r in ordered if r not in first], [*ranked_by, "tags" if scored else "listing"], scored


def _shape(store: Store, where: Period, scored: dict) -> tuple[list[Paper], list]:
    """The day's most upvoted (else starred) papers, and per tag how many papers earn its chip
    (for_you scores no paper for a tag holding it: the chips and these counts agree)."""
    trending = store.most_signalled_in(where, TOP_TRENDING)
    counts = Counter(tag for score, tag in scored.values() if strength(score))
    return trending, sorted(counts.items(), key=lambda x: (-x[1], x[0]))


NAMED_SMALL_TAGS = 10  # small tags the daily page names, then how many more


def _too_small(small: list) -> list[str]:
    """What the page says of tags too small to mark papers: for one, how many papers it needs;
    for several, one line naming them (a line per tag was a wall above the first paper)."""
    if len(small) == 1:
        return [message("tag_too_small", tag=small[0].name, n=MIN_CHIP_PAPERS - small[0].count)]
    if not small:
        return []
    names = ", ".join(t.name for t in small[:NAMED_SMALL_TAGS])
    more = f" … (+{len(small) - NAMED_SMALL_TAGS})" if len(small) > NAMED_SMALL_TAGS else ""
    return [message("tags_too_small", tags=names + more, n=MIN_CHIP_PAPERS)]


def period(view: str, day: str) -> tuple[str, str]:
    """First and last day of `view` around `day`: its ISO week, its month, or the TRENDING_DAYS ending on it."""
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
    """The papers of a period, sorted by date, Hugging Face upvotes, GitHub stars or "for you";
    "trending" is the store's last TRENDING_DAYS days, by upvotes, papers with upvotes only."""
    if view not in VIEWS:
        raise FeedError(message("unknown_view", value=view, choices=", ".join(VIEWS)))
    if sort not in LISTING_SORTS:
        raise FeedError(message("unknown_sort", value=sort, choices=", ".join(LISTING_SORTS)))
    category, page, per_page = _page_args(category, page, per_page)
    day = _check_day(day) if day and view != "trending" else latest_day(store)
    sort = "upvotes" if view == "trending" else sort
    if day is None:
        notice = message("no_dates") if store.count() else message("store_empty")
        return Listing(view, None, None, [], 0, 0, [], None, None, category, sort, page, per_page, 0, [notice])
    start, end = period(view, day)
    base = Period(start, end, upvoted=view == "trending")
    period_total = store.count_in(base)
    with_upvotes = store.count_in(Period(start, end, upvoted=True))
    cats = [(c, n) for c, n in store.category_counts_in(base) if CATEGORY.match(c)][:MAX_CATEGORIES]
    where = _in_category(store, base, category) if category else base
    total = store.count_in(where)
    # a day keeps its listing order; "for you" falls back to the date order
    listing_order = "listing" if view == "day" else "newest"
    order = listing_order if sort in ("newest", "foryou", "top") else sort
    notices: list[str] = []
    ranked_by: list[str] = []
    scored: dict[int, tuple[float, str]] = {}
    scores: dict[str, tuple[float, str, str]] = {}
    if sort in ("top", "foryou"):  # a tag too small to mark papers orders them, marks none, says so once
        small = [t for t in library.tags(store) if 0 < t.count < MIN_CHIP_PAPERS]
        notices += _too_small(small)
        if sort == "top":
            ordered, ranked_by, scored = _top_order(store, where, listing_order)
        else:  # every paper of the period scored by the user's tags (recommend.py)
            ordered, scored = for_you_order(store, store.rowids_in(where, order))
            ranked_by = ["tags" if scored else "listing"]
            if ordered and not scored:
                notices.append(message("for_you_needs_tags"))
        scored = {r: v for r, v in scored.items() if v[1] not in {t.name for t in small}}
        ordered = ordered[(page - 1) * per_page : page * per_page]
        got = store.get_many(ordered)
        papers = [got[r] for r in ordered if r in got]
        chips = {r: (*scored[r], strength(scored[r][0])) for r in ordered if r in got and r in scored}
        scores = {got[r].id: (p, t, s) for r, (p, t, s) in chips.items() if s}
    else:
        papers = store.papers_in(where, order, per_page, (page - 1) * per_page)
    prev, nxt = (None, None) if view == "trending" else (store.date_before(start), store.date_after(end))
    trending, for_tags = _shape(store, where, scored) if view == "day" else ([], [])
    if view == "day" and (state := completeness.day_notice(store, start)):
        notices.append(state)  # "complete", or how many papers the day's listing named are missing
    if not period_total:
        notices.append(message("no_upvotes_week" if view == "trending" else "no_papers_period"))
    elif sort == "upvotes" and not with_upvotes:
        notices.append(message("no_hf_upvotes"))
    return Listing(
        view, start, end, papers, total, period_total, cats, prev, nxt, category, sort, page, per_page, with_upvotes,
        notices, ranked_by, trending, for_tags, scores,
    )  # fmt: skip

"""The daily page (/daily) and its JSON twin (/daily.json): a day, week or month of papers, or
the trending week."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from paperdex import service
from paperdex.discover import feed
from paperdex.service import Pool
from paperdex.sources import completeness
from paperdex.web import render
from paperdex.web.views.base import YEAR, page, page_window, paged_json, pool_of

LAYOUTS = ("cards", "compact")  # a card per paper, or one line per paper
LAYOUT_COOKIE = "layout"
# The compact view's part: the first screenfuls, the rest brought in by static/daily.js as the
# reader scrolls; why 100: docs/web.md ("The whole day in one sitting").
COMPACT_PER_PAGE = 100

router = APIRouter()


@router.get("/daily", response_class=HTMLResponse, include_in_schema=False)
@router.get("/daily.json", include_in_schema=False)
def daily_page(
    request: Request,
    day: str | None = None,
    category: str | None = None,
    view: str = "day",
    sort: str = "top",
    page_: Annotated[int, Query(alias="page")] = 1,
    layout: str | None = None,
    per_page: int | None = None,
) -> Response:
    """A day, week or month of papers, or the trending week, by default as a digest; as cards or one
    line per paper (`layout`, remembered), a page being one part daily.js joins to those before."""
    pool = pool_of(request)
    json_view = request.url.path.endswith(".json")
    chosen = layout if layout in LAYOUTS else None
    cookie = request.cookies.get(LAYOUT_COOKIE)
    current = chosen or (cookie if cookie in LAYOUTS else "cards")
    if per_page is None:  # else the service checks it: over its limit is a 400 naming it
        per_page = COMPACT_PER_PAGE if current == "compact" and not json_view else 30
    d = service.listing(pool, view, day or None, category, sort, page_, per_page)
    done, feed_line = day_completeness(pool, d)
    if json_view:
        return paged_json(request, d, "papers", completeness=done)
    cards = [render.card(p, wanted=[d.category] if d.category else []) for p in d.papers]
    for c in cards:
        if c["id"] in d.scores:
            c["for_you"] = d.scores[c["id"]]
    resp = page(
        request,
        "daily.html",
        d=d,
        cards=cards,
        window=page_window(d.page, d.pages),
        layout=current,
        trending=[render.card(p) for p in d.trending],
        completeness=done,
        notices=[n for n in d.notices if n != feed_line],  # the completeness line replaces the feed's
    )
    if chosen:
        resp.set_cookie(LAYOUT_COOKIE, chosen, max_age=YEAR, samesite="lax")
    return resp


def day_completeness(pool: Pool, d: feed.Listing) -> tuple[dict[str, Any] | None, str | None]:
    """Whether the store holds every paper this day's arXiv listings named ("complete", or "missing"
    with the ids and whether a sync retries them), and the feed's notice the page replaces."""
    if d.view != "day" or not d.start:
        return None, None
    with pool.reader() as st:
        found = [s for s in completeness.states(st) if s.day == d.start and s.listed]
        said = completeness.day_notice(st, d.start) if found else None
    if not found:
        return None, None
    missing = [i for s in found for i in s.missing]
    return {
        "state": "missing" if missing else "complete",
        "listed": sum(s.listed for s in found),
        "held": sum(s.held for s in found),
        "missing": missing,
        "listings": [s.listing for s in found],
        "next_retry": any(s.retries_left for s in found if s.missing),
    }, said

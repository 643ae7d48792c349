"""RSS and Atom feeds: a tag's recommendations, a saved search, a category's newest papers, the
newest day."""

from __future__ import annotations

from datetime import date, timedelta
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response

from paperdex import service
from paperdex.discover import digest, feed, library, summaries
from paperdex.messages import message
from paperdex.service import ServiceError
from paperdex.web.views.base import pool_of
from paperdex.web.views.library import search_url

FEED_ITEMS = 30
FEED_DAYS = 14  # a tag's feed: recommendations among the papers of the store's last days

router = APIRouter()


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _feed(request: Request, fmt: str, title: str, page_url: str, items: list[digest.Item]) -> Response:
    if fmt not in digest.FORMATS:
        raise ServiceError(404, message("feed_format"))
    with pool_of(request).reader() as st:  # machine TL;DRs, when the optional layer made any
        summaries.attach_items(st, items)
    body = digest.render_feed(fmt, title, str(request.url), page_url, items, _base(request))
    return Response(body, media_type=digest.FORMATS[fmt] + "; charset=utf-8")


@router.get("/feeds/tag/{name}.{fmt}", include_in_schema=False)
def tag_feed(request: Request, name: str, fmt: str) -> Response:
    pool = pool_of(request)
    with pool.reader() as st:
        tag = library.get_tag(st, name)
        last = feed.latest_day(st)
        within = None
        if last:
            first = (date.fromisoformat(last[:10]) - timedelta(days=FEED_DAYS - 1)).isoformat()
            within = st.rowids_since(first)
    recs = service.recommend(pool, tag.name, FEED_ITEMS, within=within or None)
    items = [digest.Item(r.paper, digest.reason_note(r)) for r in recs.items]
    page_url = f"{_base(request)}/tag/{quote(tag.name)}"
    return _feed(request, fmt, message("feed_title_tag", tag=tag.name), page_url, items)


@router.get("/feeds/saved/{key}.{fmt}", include_in_schema=False)
def saved_feed(request: Request, key: str, fmt: str) -> Response:
    ss, res = service.run_saved(pool_of(request), key, FEED_ITEMS)
    items = [digest.Item(h.paper) for h in res.hits]
    return _feed(request, fmt, message("feed_title_saved", name=ss.name), _base(request) + search_url(ss), items)


@router.get("/feeds/category/{category}.{fmt}", include_in_schema=False)
def category_feed(request: Request, category: str, fmt: str) -> Response:
    newest = service.SearchParams(mode="lexical", sort="newest", per_page=FEED_ITEMS, category=category)
    res = service.search(pool_of(request), newest, facets=False)
    items = [digest.Item(h.paper) for h in res.hits]
    page_url = f"{_base(request)}/?q=cat:{quote(category)}"
    return _feed(request, fmt, message("feed_title_category", category=category), page_url, items)


@router.get("/feeds/daily.{fmt}", include_in_schema=False)
def daily_feed(request: Request, fmt: str, category: str | None = None) -> Response:
    d = service.read_feed(pool_of(request), feed.daily, None, category, 1, 200)  # a bad category: a 400
    items = [digest.Item(p) for p in d.papers]
    title = (
        message("feed_title_daily_in", day=d.day, category=category)
        if category
        else message("feed_title_daily", day=d.day)
    )
    return _feed(request, fmt, title, f"{_base(request)}/daily", items)

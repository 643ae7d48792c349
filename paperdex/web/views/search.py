"""The search page (/), its JSON twin (/search.json) and the home page it is without a query:
one handler for the page and its twin, as datasette's views do, so that the two cannot drift."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field

from paperdex import service
from paperdex.search import Result
from paperdex.service import SearchParams, ServiceError
from paperdex.web import render
from paperdex.web.views.api import search_json
from paperdex.web.views.base import page, page_window, pool_of
from paperdex.web.views.library import related_view

# Queries the home page offers to try: English, Chinese, fielded.
EXAMPLES = (
    ("en", "diffusion models for image editing"),
    ("en", "weight decay"),
    ("zh", "扩散模型 图像编辑"),
    ("zh", "大语言模型 推理"),
    ("fielded", 'ti:"reinforcement learning" cat:cs.LG'),
    ("fielded", "abs:(robot OR robotic) date:2025"),
)
# Longer text in the search box is a pasted abstract or paragraph, which finds related work
# (recommend.related); titles and one-sentence summaries, the longest queries typed, stay well under it.
PASTED_TEXT_AT = 500

router = APIRouter()


class PageQuery(BaseModel):
    """The parameters of the search page and /search.json, as sent: the service checks them."""

    q: str = ""
    mode: str = "hybrid"
    sort: str = "relevance"
    page: int = 1
    per_page: int = 20
    category: str | None = None
    date_from: str | None = Field(None, alias="from")
    date_to: str | None = Field(None, alias="to")
    venue: str | None = None
    area: str | None = None
    author: str | None = None


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
@router.get("/search.json", include_in_schema=False)
def search_page(request: Request, query: Annotated[PageQuery, Query()]) -> Response:
    """Search results; without a query or filter, the home page (queries to try) above the newest papers."""
    pool = pool_of(request)
    params = SearchParams(**query.model_dump())
    json_view = request.url.path.endswith(".json")
    if len(params.q.strip()) > PASTED_TEXT_AT and not json_view:
        return related_view(  # a pasted abstract or paragraph: related work
            request, params.q.strip(), {"category": params.category, "from": params.date_from, "to": params.date_to}
        )
    if json_view:
        return search_json(request, service.search(pool, params))
    res: Result | None = None
    err, status = None, 200
    try:  # the service checks the parameters; the page shows what it says is wrong
        res = service.search(pool, params)
    except ServiceError as e:
        err, status = e.message, e.status  # 503: over the time budget, or busy
    cards = []
    if res is not None:
        params = res.plan or params  # the request as searched: checked, tidied
        cards = _cards(request, res)
    home = service.overview(pool) if not params.q and not params.has_filters() and params.page == 1 else None
    # what "Save this search" keeps, under the form's names
    saving = {"mode": params.mode if params.mode != "hybrid" else None, **params.url_params()}
    return page(
        request,
        "search.html",
        status=status,
        params=params,
        res=res,
        cards=cards,
        error=err,
        home=home,
        examples=EXAMPLES,
        window=page_window(res.page, res.pages) if res else [],
        start=(res.page - 1) * res.per_page if res else 0,
        hints=render.fewer_hints(params.q) if res is not None and not res.hits and params.q else [],
        save_params={k: v for k, v in saving.items() if v},
    )


def _cards(request: Request, res: Result) -> list[dict[str, Any]]:
    """The hits' cards, with "why this matched" unless the search listed the newest papers or looked an id up."""
    pl = res.plan
    explain = pl is not None and bool(pl.q) and res.mode != "lookup"
    # a looked-up id is not parsed: only its filters ask for categories
    wanted = render.asked_categories(pl.hard if pl.ref is None else pl.nodes()) if pl is not None else []
    return [
        {
            **render.card(h.paper, h, highlight=res.highlight, wanted=wanted, plan=pl, explain=explain),
            "tier": h.tier,
        }
        for h in res.hits
    ]

"""The documented JSON API (/api/search, /api/papers/…, /api/daily, /api/days), its reference
page, the search box's suggestions and the health check. Endpoints build their JSON themselves:
FastAPI's generic encoder would cost more than the search on a large result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field
from pydantic.config import JsonDict

from paperdex import service
from paperdex.discover import summaries
from paperdex.search import Result
from paperdex.service import SearchParams
from paperdex.web import i18n, render, schemas
from paperdex.web.links import safe_paper
from paperdex.web.suggest import suggest
from paperdex.web.views.base import SafeJSON, lang_of, page, paged_json, pool_of

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {400: schemas.BAD_REQUEST, 503: schemas.BUSY}
PAPER_ERRORS: dict[int | str, dict[str, Any]] = {**ERROR_RESPONSES, 404: schemas.NOT_FOUND}
# The dates the spec admits (the service checks them itself, with a message that says what is
# wrong); an empty value is the parameter left out (a form's empty field), as the service takes it.
DATE_SPEC: JsonDict = {"pattern": f"^(?:{service.DATE_PREFIX[1:-1]})?$"}
DAY_SPEC: JsonDict = {"pattern": f"^(?:{service.DAY[1:-1]})?$"}
FAVICON = Path(__file__).parent.parent / "static" / "favicon.svg"

router = APIRouter()


class SearchQuery(BaseModel):
    """The parameters of /api/search, checked as its spec says (the service checks them again)."""

    q: str = Field(
        "", max_length=service.MAX_QUERY, description="Query in the paperdex query language; empty lists newest"
    )
    mode: Literal["hybrid", "lexical", "dense"] = Field("hybrid", description="Ranking")
    sort: Literal["relevance", "newest"] = Field("relevance", description="Order of the hits")
    page: int = Field(1, ge=1, le=service.MAX_PAGE, description="1-based page number")
    per_page: int = Field(20, ge=1, le=service.MAX_PER_PAGE, description="Hits per page")
    category: str | None = Field(
        None, max_length=service.MAX_CATEGORY, description="A category (cs.LG) or archive (cs)"
    )
    date_from: str | None = Field(
        None, alias="from", json_schema_extra=DATE_SPEC, description="Earliest date, YYYY[-MM[-DD]]"
    )
    date_to: str | None = Field(
        None, alias="to", json_schema_extra=DATE_SPEC, description="Latest date, YYYY[-MM[-DD]]"
    )
    venue: str | None = Field(None, max_length=service.MAX_FILTER, description="Substring of the venue")
    area: str | None = Field(None, max_length=service.MAX_FILTER, description="Substring of the venue area")
    author: str | None = Field(None, max_length=service.MAX_FILTER, description="An author name")


def api(path: str, summary: str, model: type, description: str, errors: dict[int | str, Any] = ERROR_RESPONSES):
    """An endpoint of the documented API: its answer's model and the errors it can answer with."""
    responses = {200: {"model": model, "description": description}, **errors}
    return router.get(path, tags=["api"], summary=summary, response_class=SafeJSON, responses=responses)


@api("/api/search", "Search papers", schemas.SearchOut, "One page of hits")
def api_search(request: Request, query: Annotated[SearchQuery, Query()]) -> Response:
    """Hits carry title_html and snippet_html (escaped, query words in <mark>), and why (ranks per side)."""
    return search_json(request, service.search(pool_of(request), SearchParams(**query.model_dump())))


def search_json(request: Request, res: Result) -> Response:
    """A search's page as /api/search and /search.json answer it, its hits with their HTML."""
    return paged_json(request, res, "hits", hits=[render.hit_json(h) for h in res.hits])


@api("/api/papers/{pid:path}/similar", "Similar papers", schemas.SimilarOut, "Nearest neighbours", PAPER_ERRORS)
def api_similar(
    request: Request,
    pid: str,
    k: Annotated[int, Query(ge=1, le=service.MAX_SIMILAR, description="How many neighbours")] = 10,
) -> Response:
    """Nearest neighbours of a paper by embedding (title words when it has no vector)."""
    paper, hits = service.similar(pool_of(request), pid, k)
    return SafeJSON(
        {"id": paper.id, "similar": [safe_paper({**h.paper.to_dict(), "score": round(h.score, 6)}) for h in hits]}
    )


@api("/api/papers/{pid:path}", "One paper", schemas.PaperDetail, "The paper", PAPER_ERRORS)
def api_paper(request: Request, pid: str) -> Response:
    """One paper with every field, its links and a BibTeX entry. Ids may contain `/`
    (hep-th/9901002) and may carry an `arXiv:` prefix or a version suffix."""
    pool = pool_of(request)
    p = service.get_paper(pool, pid)
    return SafeJSON(summaries.attach_json(pool, [safe_paper({**p.to_dict(), "bibtex": render.bibtex(p)})])[0])


@api("/api/daily", "Daily papers", schemas.DailyOut, "One day's papers")
def api_daily(
    request: Request,
    day: Annotated[
        str | None,
        Query(json_schema_extra=DAY_SPEC, description="YYYY-MM-DD; default: the latest day in the store"),
    ] = None,
    category: Annotated[
        str | None,
        Query(max_length=service.MAX_CATEGORY, description="Only papers in this category or archive"),
    ] = None,
    page: Annotated[int, Query(ge=1, le=service.MAX_PAGE, description="1-based page number")] = 1,
    per_page: Annotated[int, Query(ge=1, le=service.MAX_PER_PAGE, description="Papers per page")] = 50,
) -> Response:
    """Papers listed on one day, with per-category counts and the previous/next days."""
    return paged_json(request, service.daily(pool_of(request), day, category, page, per_page), "papers")


@api("/api/days", "Days with papers", schemas.DaysOut, "Days, newest first")
def api_days(
    request: Request, limit: Annotated[int, Query(ge=1, le=service.MAX_DAYS, description="How many days")] = 60
) -> Response:
    """Days that have papers, newest first, with counts."""
    return SafeJSON({"days": [{"day": d, "count": n} for d, n in service.days(pool_of(request), limit)]})


@router.get("/healthz", include_in_schema=False)
def healthz(request: Request) -> Response:
    """200 when this server can answer (its store and the backend it searches), else 503."""
    return SafeJSON(service.health(pool_of(request)))


@api("/api/suggest", "Completions of a query being typed", schemas.SuggestOut, "Up to a few completions")
def api_suggest(
    request: Request,
    q: Annotated[str, Query(max_length=500, description="The query typed so far")] = "",
    lang: Annotated[str | None, Query(description="en or zh (the notes' language); default: the request's")] = None,
) -> Response:
    """Completions of the query typed so far: title words and phrases, Chinese words, authors,
    categories, venues and the query syntax, from this store."""
    with pool_of(request).reader() as st:
        found = suggest(st, q, lang if lang in i18n.LANGS else lang_of(request))
    return SafeJSON({"q": q, "suggestions": [s.to_dict() for s in found]})


@router.get(
    "/api/docs",
    response_class=HTMLResponse,
    tags=["api"],
    summary="This reference, as a page",
    responses={200: {"description": "The page (HTML)"}, **ERROR_RESPONSES},
)
def api_docs(request: Request) -> Response:
    """The API reference from the OpenAPI spec (offline, unlike Swagger UI), its examples for this server."""
    spec = request.app.openapi()
    ops = [(path, method.upper(), op) for path, item in spec["paths"].items() for method, op in item.items()]
    info = service.overview(pool_of(request))
    base = str(request.base_url).rstrip("/")
    return page(request, "api.html", ops=ops, base=base, example_id=info["example_id"] or "2501.00001")


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    return Response(FAVICON.read_bytes(), media_type="image/svg+xml")

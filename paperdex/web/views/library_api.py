"""The library's JSON API: tags, recommendations, saved searches, "not interested", related
work, the day's papers for you, export and import. Writes take a bearer token (views/auth.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from paperdex import service
from paperdex.discover import library
from paperdex.messages import message
from paperdex.service import ServiceError
from paperdex.web import render, schemas
from paperdex.web.views.api import DAY_SPEC
from paperdex.web.views.auth import json_of, require_writer, writer, written
from paperdex.web.views.base import csrf_for, pool_of, session_of
from paperdex.web.views.library import related

MAX_IDS = schemas.MAX_IDS  # paper ids in one write
# The errors each kind of route can answer with, as /openapi.json lists them
Errors = dict[int | str, dict[str, Any]]
READ_ERRORS: Errors = {400: schemas.BAD_REQUEST, 503: schemas.BUSY}
BODY_ERRORS: Errors = {413: schemas.TOO_LARGE, 415: schemas.NOT_JSON}
WRITE_ERRORS: Errors = {
    400: schemas.BAD_REQUEST,
    401: schemas.NEEDS_TOKEN,
    403: schemas.NOT_ALLOWED,
    503: schemas.CANNOT_WRITE,
}
IDS_ERRORS: Errors = {**WRITE_ERRORS, 404: schemas.IDS_MISSING}  # a write naming papers
SAVE_ERRORS: Errors = {**WRITE_ERRORS, **BODY_ERRORS, 409: schemas.NAME_TAKEN}
SAVED_IN = schemas.SavedIn.model_json_schema()
SAVED_KNOWN = "name, query, params (or " + ", ".join(library.SAVED_PARAMS) + "), replace"
IDS_EXAMPLE = '{"ids": ["2505.13738"]}'

router = APIRouter()
_K = {"minimum": 1, "maximum": service.MAX_K}  # the bounds the service checks, with its own message
_PAGE = {"minimum": 1, "maximum": service.MAX_PAGE}
FOR_YOU_API_PER_PAGE = 50  # /api/for-you's page when neither per_page nor k is given


def documented(
    method: str, path: str, summary: str, model: type, errors: Errors, body: type | None = None, status: int = 200
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A route of the library's JSON API as /openapi.json lists it: its answer's model, the errors
    it can answer with and the JSON body it reads (the route reads it itself: `auth.json_of`)."""
    extra = None
    if body is not None:
        extra = {
            "requestBody": {"required": True, "content": {"application/json": {"schema": schemas.body_schema(body)}}}
        }
    responses = {status: {"model": model, "description": "The answer"}, **errors}
    return router.api_route(
        path,
        methods=[method],
        tags=["library"],
        summary=summary,
        status_code=status,
        response_class=JSONResponse,
        responses=responses,
        openapi_extra=extra,
    )


@documented("GET", "/api/library/session", "Whether this browser may write", schemas.SessionOut, READ_ERRORS)
def api_session(request: Request) -> Response:
    """Whether this browser may write, the CSRF value of its sign-in and the tag names: what the
    cards' "save to a tag" control needs. Another site's page cannot read this answer (no CORS)."""
    sess = session_of(request)
    with pool_of(request).reader() as st:
        names = [t.name for t in library.tags(st)]
    out: dict[str, Any] = {"signed_in": sess is not None, "tags": names}
    if sess is not None:
        out.update(name=sess["name"], csrf=csrf_for(sess["hash"]))
    return JSONResponse(out, headers={"Cache-Control": "no-store"})


@documented("GET", "/api/for-you", "A day's papers for you", schemas.ForYouOut, READ_ERRORS)
def api_for_you(
    request: Request,
    day: Annotated[str | None, Query(json_schema_extra=DAY_SPEC, description="YYYY-MM-DD; default: the newest")] = None,
    per_page: Annotated[int | None, Query(json_schema_extra=_K, description="Papers per page; default 50")] = None,
    k: Annotated[
        int | None, Query(json_schema_extra=_K, deprecated=True, description="per_page's older name, still read")
    ] = None,
    page: Annotated[int, Query(json_schema_extra=_PAGE, description="1-based page number")] = 1,
) -> Response:
    """A page of a day's papers (default: the newest) by their best score over the user's tags,
    and that tag; `total` is how many the tags score, `pages` their pages (past the last: none).
    `per_page` as /api/search and /api/daily name it (and this answer reports it); `k`, its name
    before, is read too, and the two naming different sizes is a 400, not a silent pick."""
    if per_page is not None and k is not None and per_page != k:
        raise ServiceError(400, message("per_page_and_k_differ", per_page=per_page, k=k))
    size = next((n for n in (per_page, k) if n is not None), FOR_YOU_API_PER_PAGE)
    d, ranked = service.for_you(pool_of(request), day, size, page)
    papers = [{**render.brief(p), "score": round(sc, 4), "tag": t} for p, sc, t in ranked]
    counts = {"total": d.total, "day_total": d.day_total, "page": d.page, "pages": d.pages, "per_page": d.per_page}
    return JSONResponse({"day": d.day, "notices": d.notices, **counts, "papers": papers})


@documented(
    "POST",
    "/api/related",
    "Related work for a pasted text",
    schemas.RelatedOut,
    READ_ERRORS | BODY_ERRORS,
    schemas.RelatedIn,
)
async def api_related(request: Request) -> Response:
    """Related work for a pasted text: {"text": "...", "k": 20, "category", "from", "to"}."""
    data = await json_of(request)
    text = data.get("text")  # none, or not a string: the service's "paste a text"
    res = await run_in_threadpool(related, request, text if isinstance(text, str) else "", data.get("k", 20), data)
    hits = [{**render.brief(h.paper), "why": render.ranks(h)} for h in res.hits]
    return JSONResponse({**res.to_dict(), "hits": hits})


@documented("GET", "/api/tags", "Every tag", schemas.TagsOut, READ_ERRORS)
def api_tags(request: Request) -> Response:
    with pool_of(request).reader() as st:
        return JSONResponse({"tags": [t.to_dict() for t in library.tags(st)]})


@documented(
    "GET", "/api/tags/{name}", "One tag and its papers", schemas.TagDetail, {**READ_ERRORS, 404: schemas.NO_TAG}
)
def api_tag(request: Request, name: str) -> Response:
    with pool_of(request).reader() as st:
        tag = library.get_tag(st, name)
        return JSONResponse({**tag.to_dict(), "papers": library.tag_papers(st, tag.name)})


@documented(
    "GET",
    "/api/tags/{name}/recommendations",
    "A tag's recommendations",
    schemas.RecommendationsOut,
    {**READ_ERRORS, 404: schemas.NO_TAG},
)
def api_recommendations(
    request: Request,
    name: str,
    k: Annotated[int, Query(json_schema_extra=_K, description="Recommendations per page")] = 20,
    page: Annotated[
        int,
        Query(
            json_schema_extra={"minimum": 1, "maximum": service.MAX_RECOMMEND_PAGE}, description="1-based page number"
        ),
    ] = 1,
) -> Response:
    recs = service.recommend(pool_of(request), name, k, page)
    out = recs.to_dict()
    for r, d in zip(recs.items, out["recommendations"], strict=True):
        d["paper"] = render.brief(r.paper)
    return JSONResponse(out)


def _ids_of(data: dict[str, Any]) -> list[str]:
    ids = data.get("ids", [data["id"]] if "id" in data else None)
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids) or len(ids) > MAX_IDS:
        raise ServiceError(400, message("ids_list", example=IDS_EXAMPLE))
    return ids


# {name:path}: a name with "/" (the cards' save control sends a typed name as a%2Fb, which the
# router reads as a/b) reaches library.tag_name, which says why it is refused, not "Not Found"
@documented(
    "POST",
    "/api/tags/{name:path}/papers",
    "Save papers to a tag",
    schemas.TagAdded,
    IDS_ERRORS | BODY_ERRORS,
    schemas.IdsIn,
)
async def api_tag_add(request: Request, name: str) -> Response:
    data = await written(request, json_of)
    ids = _ids_of(data)
    with writer(request) as st:
        added = library.add_to_tag(st, name, ids)
        tag = library.get_tag(st, name)
    return JSONResponse({"added": added, **tag.to_dict()})


@documented("DELETE", "/api/tags/{name}/papers/{pid:path}", "Take a paper out of a tag", schemas.RemovedOut, IDS_ERRORS)
def api_tag_remove(request: Request, name: str, pid: str) -> Response:
    require_writer(request)
    with writer(request) as st:
        removed = library.remove_from_tag(st, name, [pid])
    return JSONResponse({"removed": removed})


@documented("DELETE", "/api/tags/{name}", "Delete a tag", schemas.DeletedOut, {**WRITE_ERRORS, 404: schemas.NO_TAG})
def api_tag_delete(request: Request, name: str) -> Response:
    require_writer(request)
    with writer(request) as st:
        if not library.delete_tag(st, name):
            raise ServiceError(404, message("no_tag", name=name[:80]))
    return JSONResponse({"deleted": True})


@documented(
    "POST",
    "/api/dismissed",
    "Mark papers not interesting",
    schemas.DismissedOut,
    IDS_ERRORS | BODY_ERRORS,
    schemas.IdsIn,
)
async def api_dismiss(request: Request) -> Response:
    data = await written(request, json_of)
    with writer(request) as st:
        return JSONResponse({"dismissed": library.dismiss(st, _ids_of(data))})


@documented("GET", "/api/saved", "Every saved search, with its new papers", schemas.SavedList, READ_ERRORS)
def api_saved(request: Request) -> Response:
    out = [
        {**ss.to_dict(), "new": nm and nm.count, "error": nm and nm.error}
        for ss, nm in service.saved_searches(pool_of(request))
    ]
    return JSONResponse({"saved_searches": out})


# POST /api/saved's fields (schemas.SavedIn documents them); `q` is `query`'s older name, and the
# fields GET /api/saved adds are let through, so one of its items can be posted back
SAVED_FIELDS = ("name", "query", "q", "params", "replace", *library.SAVED_PARAMS)
SAVED_READ_ONLY = ("id", "created", "seen_at", "new", "error")


@router.post(
    "/api/saved",
    tags=["library"],
    summary="Save a search",
    status_code=201,
    response_class=JSONResponse,
    responses={201: {"model": schemas.SavedOut, "description": "The saved search"}, **SAVE_ERRORS},
    openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": SAVED_IN}}}},
)
async def api_save(request: Request) -> Response:
    """Save a query with its filters under a name. A name taken by another search is a 409 unless
    `"replace": true`; the same search again is a 201 that changes nothing. Unknown fields are a
    400 naming them; the fields GET /api/saved adds (`id`, `created`, `seen_at`, `new`, `error`) are ignored,
    so one of its items can be posted back."""
    data = await written(request, json_of)
    name, query, params, replace = saved_body(data)
    with writer(request) as st:
        ss = library.save_search(st, name, query, params, replace=replace, how=message("saved_replace_api"))
    return JSONResponse(ss.to_dict(), status_code=201)


def saved_body(data: dict[str, Any]) -> tuple[str, str, dict[str, Any], bool]:
    """POST /api/saved's name, query, filters and replace flag, each checked: a field it does not
    know (`query` was one: only `q` was read, so a query was dropped silently) is a 400."""
    unknown = sorted(k for k in data if k not in SAVED_FIELDS + SAVED_READ_ONLY)
    if unknown:
        raise ServiceError(400, message("saved_body_unknown", names=", ".join(unknown)[:200], known=SAVED_KNOWN))
    if "query" in data and "q" in data:
        raise ServiceError(400, message("saved_query_twice"))
    query = _text(data, "query" if "query" in data else "q")
    params = data.get("params")
    beside = {k: data[k] for k in library.SAVED_PARAMS if k in data}
    if params is not None and beside:
        raise ServiceError(400, message("saved_filters_twice"))
    if not isinstance(params if params is not None else beside, dict):
        raise ServiceError(400, message("saved_params"))
    if not isinstance(data.get("replace", False), bool):
        raise ServiceError(400, message("saved_replace_flag"))
    return _text(data, "name") or query, query, params if params is not None else beside, data.get("replace", False)


def _text(data: dict[str, Any], key: str) -> str:
    v = data.get(key)
    if v is not None and not isinstance(v, str):
        raise ServiceError(400, message("param_not_text", name=key, value=repr(v)[:40]))
    return v or ""


@documented(
    "GET",
    "/api/saved/{key}/new",
    "A saved search's new papers",
    schemas.NewMatchesOut,
    {**READ_ERRORS, 404: schemas.NO_SAVED},
)
def api_saved_new(
    request: Request,
    key: Annotated[str, Path(description="Its name or id")],
    limit: Annotated[
        int,
        Query(
            json_schema_extra={"minimum": 0, "maximum": service.MAX_K}, description="How many of the new papers to list"
        ),
    ] = 20,
) -> Response:
    nm = service.new_matches(pool_of(request), key, limit)
    return JSONResponse({**nm.to_dict(), "papers": [render.brief(p) for p in nm.papers]})


@documented(
    "POST",
    "/api/saved/{key}/seen",
    "Mark a saved search seen",
    schemas.SavedOut,
    {**WRITE_ERRORS, 404: schemas.NO_SAVED},
)
def api_saved_seen(request: Request, key: Annotated[str, Path(description="Its name or id")]) -> Response:
    require_writer(request)
    with writer(request) as st:
        return JSONResponse(library.mark_seen(st, key).to_dict())


EXPORTS = {  # format: (media type, file extension)
    "json": ("application/json", "json"),
    "bibtex": ("application/x-bibtex; charset=utf-8", "bib"),
}


@router.get(
    "/api/library/export",
    tags=["library"],
    summary="The library, to keep or to import elsewhere",
    responses={
        200: {
            "description": "JSON: the whole library (tokens excepted); BibTeX: a tag's papers, or every tagged paper",
            "content": {
                "application/json": {"schema": schemas.body_schema(schemas.LibraryExport)},
                "application/x-bibtex": {"schema": {"type": "string"}},
            },
        },
        **READ_ERRORS,
        404: schemas.NO_TAG,  # BibTeX of a tag that does not exist
    },
)
def api_export(
    request: Request,
    format: Annotated[str, Query(json_schema_extra={"enum": list(EXPORTS)}, description="json or bibtex")] = "json",
    tag: Annotated[str | None, Query(description="BibTeX: only this tag's papers")] = None,
) -> Response:
    if format not in EXPORTS:
        raise ServiceError(400, message("export_format"))
    with pool_of(request).reader() as st:
        if format == "json":
            body = json.dumps(library.export_json(st), ensure_ascii=False, indent=1)
        else:
            body = library.export_bibtex(st, tag)
    kind, ext = EXPORTS[format]
    disposition = f'attachment; filename="paperdex-library.{ext}"'
    return Response(body, media_type=kind, headers={"Content-Disposition": disposition})


@documented(
    "POST",
    "/api/library/import",
    "Merge an exported library into this one",
    schemas.ImportOut,
    WRITE_ERRORS | BODY_ERRORS,
    schemas.LibraryExport,
)
async def api_import(request: Request) -> Response:
    data = await written(request, json_of)
    with writer(request) as st:
        return JSONResponse(library.import_json(st, data))

"""The ASGI app: server-rendered pages and a JSON API over the same service functions.

Pages work without JavaScript (forms, links and <details>); ``static/app.js`` only adds a
copy button and a keyboard shortcut. All assets are served from ``static/``: no CDN, the UI
works offline. Every page carries a strict Content-Security-Policy, a second line of defence
behind escaping for paper text that contains markup.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..paper import Paper
from ..search import Hit, Result
from . import i18n, render, service
from .service import SearcherPool, SearchParams, ServiceError

log = logging.getLogger("paperdex.web")
HERE = Path(__file__).parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"description": 'A bad request, e.g. a query syntax error: `{"error": {"status", "message"}}`'},
    404: {"description": 'Unknown paper id: `{"error": {"status", "message"}}`'},
}


def _env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["plain_tex"] = render.plain_tex
    return env


class SecurityHeaders:
    """CSP and friends on every response (plain ASGI: no per-request task overhead)."""

    HEADERS = [
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    ]

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in self.HEADERS if k not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


# --- view models ----------------------------------------------------------------------


def _label(p: Paper) -> str:
    """What the seed products print above a title: venue area, else primary category."""
    if p.venue_area and p.venue:
        return f"{p.venue} · {p.venue_area}"
    return p.venue_area or p.venue or p.primary_category or ""


def _stars(p: Paper) -> str | None:
    """GitHub stars of the code link, compact (1.2k), when the source recorded them."""
    n = p.extra.get("code_stars")
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0 or not p.code_url:
        return None
    return f"{n / 1000:.1f}k".replace(".0k", "k") if n >= 1000 else str(n)


def card(p: Paper, lang: str, hit: Hit | None = None, stems: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Everything a result card shows, with paper text already escaped."""
    if hit is not None:
        stems = render.matched_stems(hit.title_marked, hit.snippet)
    return {
        "id": p.id,
        "title_html": render.tex_html(p.title, stems),
        "title_text": render.plain_tex(p.title),
        "label": _label(p),
        "categories": p.categories,
        "authors": render.authors_line(p, i18n.t(lang, "et_al")),
        "date": p.date or "",
        "snippet_html": render.snippet_html(p.abstract, stems),
        "abstract_html": render.tex_html(p.abstract, stems),
        "long": len(p.abstract) > 320,
        "links": render.safe_links(p),
        "stars": _stars(p),
        "comment": p.comment,
        "why": None
        if hit is None
        else {
            "lexical_rank": hit.lexical_rank,
            "lexical_score": hit.lexical_score,
            "dense_rank": hit.dense_rank,
            "dense_score": hit.dense_score,
            "score": hit.score,
        },
    }


def _page_window(page: int, pages: int, width: int = 2) -> list[int | None]:
    """1 … 4 5 [6] 7 8 … 20: numbered links around the current page, None for a gap."""
    keep = {1, pages, *range(max(1, page - width), min(pages, page + width) + 1)}
    out: list[int | None] = []
    last = 0
    for n in sorted(keep):
        if n - last > 1:
            out.append(None)
        out.append(n)
        last = n
    return out


# --- app ------------------------------------------------------------------------------


def create_app(data_dir: str | Path, pool_size: int | None = None, warm: bool = False) -> FastAPI:
    """The paperdex web app over one data directory."""
    pool = SearcherPool(data_dir, pool_size)
    if warm:
        pool.warm()
    env = _env()
    app = FastAPI(
        title="paperdex",
        summary="Search research papers: hybrid keyword + semantic search, paper details, daily feeds.",
        version="0.1.0",
        docs_url=None,  # Swagger UI loads from a CDN; /api/docs is a local page instead
        redoc_url=None,
    )
    app.state.pool = pool
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    # --- plumbing -----------------------------------------------------------------------
    def lang_of(request: Request) -> str:
        return i18n.negotiate(
            request.query_params.get("lang"), request.cookies.get(i18n.COOKIE), request.headers.get("accept-language")
        )

    def url_with(request: Request, path: str | None = None, **changes: Any) -> str:
        params = {k: v for k, v in request.query_params.items() if k != "lang"}
        for k, v in changes.items():
            k = {"date_from": "from", "date_to": "to"}.get(k, k)
            if v is None or v == "":
                params.pop(k, None)
            else:
                params[k] = str(v)
        qs = urlencode({k: v for k, v in params.items() if v != ""})
        path = "/" + (path or request.url.path).lstrip("/")  # never a protocol-relative //host link
        return path + (f"?{qs}" if qs else "")

    def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        lang = lang_of(request)

        def tr(key: str, **kw: Any) -> str:
            return i18n.t(lang, key, **kw)

        other = "en" if lang == "zh" else "zh"
        here = url_with(request)
        switch = here + ("&" if "?" in here else "?") + f"lang={other}"
        body = env.get_template(template).render(
            request=request,
            lang=lang,
            t=tr,
            switch_url=switch,
            url_with=lambda **kw: url_with(request, **kw),
            path=request.url.path,
            **ctx,
        )
        resp = HTMLResponse(body, status_code=status)
        q_lang = request.query_params.get("lang", "")[:2].lower()
        if q_lang in i18n.LANGS:
            resp.set_cookie(i18n.COOKIE, q_lang, max_age=365 * 86400, samesite="lax")
        return resp

    def is_api(request: Request) -> bool:
        return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"

    def error(request: Request, status: int, message: str) -> Response:
        if is_api(request):
            return JSONResponse({"error": {"status": status, "message": message}}, status_code=status)
        return page(request, "error.html", status=status, status_code=status, message=message)

    app.add_middleware(SecurityHeaders)

    @app.exception_handler(ServiceError)
    async def on_service_error(request: Request, exc: ServiceError) -> Response:
        return error(request, exc.status, exc.message)

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> Response:
        parts = []
        for e in exc.errors()[:5]:
            where = ".".join(str(x) for x in e.get("loc", ())[1:]) or "request"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        return error(request, 400, "; ".join(parts) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> Response:
        msg = exc.detail if isinstance(exc.detail, str) else "error"
        return error(request, exc.status_code, msg)

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s", request.url.path)
        return error(request, 500, "internal error; the server log has the details")

    # --- JSON API -------------------------------------------------------------------------
    # Endpoints build their JSONResponse themselves: FastAPI's generic encoder would cost more
    # than the search on a large result.
    @app.get("/api/search", tags=["api"], summary="Search papers", responses=ERROR_RESPONSES)
    def api_search(
        q: Annotated[str, Query(description="Query in the paperdex query language; empty lists newest papers")] = "",
        mode: Annotated[str, Query(description="hybrid, lexical or dense")] = "hybrid",
        sort: Annotated[str, Query(description="relevance or newest")] = "relevance",
        page: Annotated[int, Query(description="1-based page number")] = 1,
        per_page: Annotated[int, Query(description="Hits per page (1-100)")] = 20,
        category: Annotated[str | None, Query(description="A category (cs.LG) or archive (cs)")] = None,
        date_from: Annotated[str | None, Query(alias="from", description="Earliest date, YYYY[-MM[-DD]]")] = None,
        date_to: Annotated[str | None, Query(alias="to", description="Latest date, YYYY[-MM[-DD]]")] = None,
        venue: Annotated[str | None, Query(description="Substring of the venue")] = None,
        area: Annotated[str | None, Query(description="Substring of the venue area")] = None,
        author: Annotated[str | None, Query(description="An author name")] = None,
    ) -> JSONResponse:
        """Hits carry title_html and snippet_html (escaped, query words in <mark>), and why (ranks per side)."""
        params = SearchParams(q, mode, sort, page, per_page, category, date_from, date_to, venue, area, author)
        res = service.search(pool, params)
        d = res.to_dict()
        d["pages"] = res.pages
        return JSONResponse(d)

    @app.get("/api/papers/{pid:path}/similar", tags=["api"], summary="Similar papers", responses=ERROR_RESPONSES)
    def api_similar(pid: str, k: Annotated[int, Query(description="How many neighbours (1-50)")] = 10) -> JSONResponse:
        """Nearest neighbours of a paper by embedding (title words when it has no vector)."""
        paper, hits = service.similar(pool, pid, k)
        return JSONResponse(
            {"id": paper.id, "similar": [{**h.paper.to_dict(), "score": round(h.score, 6)} for h in hits]}
        )

    @app.get("/api/papers/{pid:path}", tags=["api"], summary="One paper", responses=ERROR_RESPONSES)
    def api_paper(pid: str) -> JSONResponse:
        """One paper with every field, its links and a BibTeX entry."""
        p = service.get_paper(pool, pid)
        return JSONResponse({**p.to_dict(), "bibtex": render.bibtex(p)})

    @app.get("/api/daily", tags=["api"], summary="Daily papers", responses=ERROR_RESPONSES)
    def api_daily(
        day: Annotated[str | None, Query(description="YYYY-MM-DD; default: the latest day in the store")] = None,
        category: Annotated[str | None, Query(description="Only papers in this category or archive")] = None,
        page: int = 1,
        per_page: int = 50,
    ) -> JSONResponse:
        """Papers listed on one day, with per-category counts and the previous/next days."""
        d = service.daily(pool, day, category, page, per_page)
        out = d.to_dict()
        out["pages"] = d.pages
        return JSONResponse(out)

    @app.get("/api/days", tags=["api"], summary="Days with papers")
    def api_days(limit: Annotated[int, Query(ge=1, le=1000)] = 60) -> JSONResponse:
        """Days that have papers, newest first, with counts."""
        return JSONResponse({"days": [{"day": d, "count": n} for d, n in service.days(pool, limit)]})

    # --- HTML views -------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def search_page(
        request: Request,
        q: str = "",
        mode: str = "hybrid",
        sort: str = "relevance",
        page_: Annotated[int, Query(alias="page")] = 1,
        category: str | None = None,
        date_from: Annotated[str | None, Query(alias="from")] = None,
        date_to: Annotated[str | None, Query(alias="to")] = None,
        venue: str | None = None,
        area: str | None = None,
    ) -> Response:
        lang = lang_of(request)
        params = SearchParams(q, mode, sort, page_, 20, category, date_from, date_to, venue, area)
        res: Result | None = None
        err: str | None = None
        try:
            params = service.normalise(params)
            res = service.search(pool, params)
        except ServiceError as e:
            err = e.message
        cards = [card(h.paper, lang, h) for h in res.hits] if res else []
        return page(
            request,
            "search.html",
            status=400 if err else 200,
            params=params,
            res=res,
            cards=cards,
            error=err,
            window=_page_window(res.page, res.pages) if res else [],
            start=(res.page - 1) * res.per_page if res else 0,
        )

    @app.get("/paper/{pid:path}", response_class=HTMLResponse, include_in_schema=False)
    def paper_page(request: Request, pid: str, q: str = "") -> Response:
        lang = lang_of(request)
        paper, hits = service.similar(pool, pid, 8)
        return page(
            request,
            "paper.html",
            paper=paper,
            c=card(paper, lang),
            similar=[card(h.paper, lang) for h in hits],
            bibtex=render.bibtex(paper),
            q=q,
        )

    @app.get("/daily", response_class=HTMLResponse, include_in_schema=False)
    def daily_page(
        request: Request,
        day: str | None = None,
        category: str | None = None,
        page_: Annotated[int, Query(alias="page")] = 1,
    ) -> Response:
        lang = lang_of(request)
        d = service.daily(pool, day or None, category, page_, 30)
        return page(
            request,
            "daily.html",
            d=d,
            cards=[card(p, lang) for p in d.papers],
            window=_page_window(d.page, d.pages),
        )

    @app.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request) -> Response:
        """The API reference, rendered from the OpenAPI spec (offline, unlike Swagger UI)."""
        spec = app.openapi()
        ops = [(path, method.upper(), op) for path, item in spec["paths"].items() for method, op in item.items()]
        return page(request, "api.html", ops=ops)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response((HERE / "static" / "favicon.svg").read_bytes(), media_type="image/svg+xml")

    return app

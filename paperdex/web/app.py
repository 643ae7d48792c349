"""The ASGI app: server-rendered pages and a JSON API over the same service functions.

Pages work without JavaScript (forms, links and <details>); ``static/app.js`` only adds a
copy button and a keyboard shortcut. All assets are served from ``static/``: no CDN, the UI
works offline. Every page carries a strict Content-Security-Policy, a second line of defence
behind escaping for paper text that contains markup.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote, urlencode

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from paperdex import service
from paperdex.discover import library, summaries
from paperdex.messages import message
from paperdex.paper import CATEGORY_TYPED, finite
from paperdex.search.engine import URL_NAMES, Result, lex_index, plan
from paperdex.service import MAX_WAITING, SearcherPool, SearchParams, ServiceError
from paperdex.settings import Settings
from paperdex.web import discover, i18n, render, schemas, summary_api
from paperdex.web.assets import StaticAssets
from paperdex.web.discover import lang_of, related_view, render_page, session_of
from paperdex.web.limits import admit, check_path, header, host_name
from paperdex.web.links import safe_paper
from paperdex.web.suggest import suggest

log = logging.getLogger("paperdex.web")
HERE = Path(__file__).parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {400: schemas.BAD_REQUEST, 503: schemas.BUSY}
PAPER_ERRORS: dict[int | str, dict[str, Any]] = {**ERROR_RESPONSES, 404: schemas.NOT_FOUND}
# Query parameters a page link may carry over from the request; anything else is dropped.
LINK_PARAMS = (
    "q", "mode", "sort", "page", "per_page", "category", "from", "to", "venue", "area", "author", "day", "view", "src",
    "layout",
)  # fmt: skip
LAYOUTS = ("cards", "compact")  # the daily page: a card per paper, or one line per paper
LAYOUT_COOKIE = "layout"
# Queries the home page offers to try: English, Chinese, fielded.
EXAMPLES = (
    ("en", "diffusion models for image editing"),
    ("en", "weight decay"),
    ("zh", "扩散模型 图像编辑"),
    ("zh", "大语言模型 推理"),
    ("fielded", 'ti:"reinforcement learning" cat:cs.LG'),
    ("fielded", "abs:(robot OR robotic) date:2025"),
)
MAX_LINK_VALUE = 1000
# The dates the spec admits (service.DATE_PREFIX, DAY); the service checks them itself, with a
# message that says what is wrong, instead of a 400 that quotes the pattern.
DATE_SPEC = {"pattern": service.DATE_PREFIX}
DAY_SPEC = {"pattern": service.DAY}
# Longer text in the search box is a pasted abstract or paragraph: it finds related work (the
# whole text embedded, BM25 over its key terms; recommend.related), not a query-language query.
# Titles and one-sentence summaries, the longest queries people type, stay well under it.
PASTED_TEXT_AT = 500
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


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


class PageQuery(BaseModel):
    """The parameters of the search page and /search.json, as sent: the service checks them,
    and the page says what is wrong with them."""

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


class SafeJSON(JSONResponse):
    """Valid JSON whatever is stored: a NaN that reached the store before records were
    validated becomes null instead of a 500 for every answer that includes it."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:
            return json.dumps(finite(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class Guard:
    """The outermost layer, around FastAPI's own error handling, so that every response
    (a 500 included) carries the security headers. It also refuses a Host header that is not
    an allowed name, or not a name and a port at all (limits.host_name; a DNS-rebinding page
    could otherwise read the API), answers HEAD as GET without the body, and lets in what
    limits.admit admits. Plain ASGI: no per-request task overhead."""

    HEADERS = [
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
    ]

    def __init__(self, app, allowed_hosts: list[str]) -> None:
        self.app = app
        self.any_host = "*" in allowed_hosts
        self.allowed = {host_name(h) or h.strip().lower() for h in allowed_hosts}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        head = scope["method"] == "HEAD"

        async def guarded_send(message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in self.HEADERS if k not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            elif head and message["type"] == "http.response.body" and message.get("body"):
                message = {**message, "body": b""}
            await send(message)

        if not self.any_host:
            name = host_name(header(scope, b"host") or "")
            if name is None or name not in self.allowed:
                body = json.dumps({"error": {"status": 400, "message": "this Host is not allowed (see --allow-host)"}})
                headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                await guarded_send({"type": "http.response.start", "status": 400, "headers": headers})
                await guarded_send({"type": "http.response.body", "body": body.encode()})
                return
        if head:
            scope = {**scope, "method": "GET"}
        await admit(self.app, scope, receive, guarded_send)  # cross-site requests, tokens in URLs, body sizes


class App(FastAPI):
    """FastAPI with the Guard outside its error middleware."""

    guard_hosts: list[str] = list(LOOPBACK_HOSTS)

    def build_middleware_stack(self):
        return Guard(super().build_middleware_stack(), self.guard_hosts)


# --- view models ----------------------------------------------------------------------


_CAT_IN_QUERY = re.compile(rf"(?:^|[\s(])cat:\"?({CATEGORY_TYPED})", re.IGNORECASE)


def matched_categories(q: str, category: str | None) -> list[str]:
    """The categories a search asked for (`cat:` in the query, the category filter): a card
    lists these first, so a hit found by cat:cs.LG shows cs.LG, not only its primary."""
    out = [m.lower() for m in _CAT_IN_QUERY.findall(q or "")]
    if category:
        out.append(category.lower())
    return out


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


def create_app(
    data_dir: str | Path,
    pool_size: int | None = None,
    warm: bool = False,
    allowed_hosts: list[str] | None = None,
    pool_wait: float | None = None,
    *,
    time_budget: float | None = None,
    settings: Settings | None = None,
    client_queue: int = MAX_WAITING,
) -> FastAPI:
    """The paperdex web app over one data directory. `allowed_hosts`: the Host names it
    answers ("*" for any); it, `pool_wait` and `time_budget` default to `settings`' (loopback
    names plus Settings.allowed_hosts), and `settings` to one built from the environment, so
    an app made without them behaves as `paperdex serve` would."""
    st = settings if settings is not None else Settings.from_env(data_dir=data_dir)
    pool = SearcherPool(
        data_dir,
        pool_size,
        wait=st.pool_wait if pool_wait is None else pool_wait,
        budget=st.time_budget if time_budget is None else time_budget,
        backend=st.backend,
        client_queue=client_queue,
        embed_options=st.embedding,
    )
    if warm:
        pool.warm()
    app = App(
        title="paperdex",
        summary="Search research papers: hybrid keyword + semantic search, paper details, daily feeds.",
        version="0.1.0",
        docs_url=None,  # Swagger UI loads from a CDN; /api/docs is a local page instead
        redoc_url=None,
        dependencies=[Depends(check_path)],  # every route's path parameters, checked once
    )
    # the Host names it answers: as told, else loopback plus the configured ones
    app.guard_hosts = list(allowed_hosts) if allowed_hosts is not None else [*LOOPBACK_HOSTS, *st.allowed_hosts]
    app.state.pool = pool
    app.state.settings = st  # what on-demand writes (web/summary_api.py) are configured with
    # every answer over 1 KB compressed: a results page is mostly text and KaTeX's script
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=6)
    app.mount("/static", StaticAssets(directory=HERE / "static"), name="static")  # cached: web/assets.py

    # --- plumbing -----------------------------------------------------------------------
    def state_of(request: Request) -> dict[str, str]:
        """The parameters of this request the pages know, each at most MAX_LINK_VALUE long:
        junk in a URL is not copied into every link of the page."""
        return {k: v for k, v in request.query_params.items() if k in LINK_PARAMS and len(v) <= MAX_LINK_VALUE}

    def url_with(request: Request, **changes: Any) -> str:
        """A link to this page with some parameters changed (only those of state_of carried over)."""
        params = state_of(request)
        for k, v in changes.items():
            k = URL_NAMES.get(k, k)
            if v is None or v == "":
                params.pop(k, None)
            else:
                params[k] = str(v)
        qs = urlencode({k: v for k, v in params.items() if v != ""})
        # the decoded path quoted again (an id may hold % ? #), never a protocol-relative //host link
        path = "/" + quote(request.scope["path"].lstrip("/"), safe="/:@!$&'()*+,;=")
        return path + (f"?{qs}" if qs else "")

    def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        lang = lang_of(request)
        summaries.attach_cards(pool, ctx, lang)  # the optional layer's TL;DRs on the cards
        # the page's state (query, filters, sort, page), carried by links to a paper so that its
        # "Back" link returns here
        state = state_of(request)
        if request.url.path == "/daily":
            state["src"] = "daily"
        here = url_with(request)
        try:
            sess = session_of(request)
        except Exception:  # an error page must render even when the store cannot be read
            sess = None
        resp = render_page(
            request,
            template,
            status,
            sess,
            here=here,
            switch_url=here + ("&" if "?" in here else "?") + f"lang={'en' if lang == 'zh' else 'zh'}",
            url_with=lambda **kw: url_with(request, **kw),
            state_qs=urlencode(state),
            **ctx,
        )
        q_lang = request.query_params.get("lang", "")[:2].lower()
        if q_lang in i18n.LANGS:
            resp.set_cookie(i18n.COOKIE, q_lang, max_age=365 * 86400, samesite="lax")
        return resp

    def error(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        headers = dict(headers or {})
        if status == 405:  # HEAD is answered wherever GET is
            allow = [m.strip() for m in headers.get("Allow", headers.get("allow", "GET")).split(",")]
            if "GET" in allow and "HEAD" not in allow:
                allow.append("HEAD")
            headers.pop("allow", None)
            headers["Allow"] = ", ".join(allow)
        # /api itself too: a client folds /api/tags/.. into /api, and an API client reads JSON
        path = request.url.path
        if path.startswith("/api/") or path in ("/api", "/openapi.json", "/search.json", "/daily.json"):
            return SafeJSON({"error": {"status": status, "message": message}}, status_code=status, headers=headers)
        try:
            resp = page(request, "error.html", status=status, status_code=status, message=message)
        except Exception:  # a page that cannot render must still answer
            log.exception("error page failed")
            resp = Response(f"{status}: {message}", status_code=status, media_type="text/plain")
        resp.headers.update(headers)
        return resp

    @app.exception_handler(ServiceError)
    @app.exception_handler(library.LibraryError)  # a library request that cannot be done (web/discover.py)
    async def on_refused(request: Request, exc: ServiceError | library.LibraryError) -> Response:
        return error(request, exc.status, exc.message, getattr(exc, "headers", None))

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
        return error(request, exc.status_code, msg, exc.headers)

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s", request.url.path)
        return error(request, 500, message("internal_error"))

    # --- JSON API -------------------------------------------------------------------------
    # Endpoints build their JSONResponse themselves: FastAPI's generic encoder would cost more
    # than the search on a large result.
    def api(path: str, summary: str, model: type, description: str, errors: dict = ERROR_RESPONSES):
        """An endpoint of the documented API: its answer's model and the errors it can answer with."""
        responses = {200: {"model": model, "description": description}, **errors}
        return app.get(path, tags=["api"], summary=summary, response_class=SafeJSON, responses=responses)

    def paged_json(found: Any, rows: str, **more: Any) -> Response:
        """One page of a search (rows "hits") or a listing ("papers") as the API and the .json
        views answer: with its page count, links filtered as the pages do, machine summaries
        (and `more` fields: a day's completeness)."""
        d = {**found.to_dict(), **more}
        d["pages"] = found.pages
        d[rows] = summaries.attach_json(pool, [safe_paper(x) for x in d[rows]])
        return SafeJSON(d)

    @api("/api/search", "Search papers", schemas.SearchOut, "One page of hits")
    def api_search(query: Annotated[SearchQuery, Query()]) -> Response:
        """Hits carry title_html and snippet_html (escaped, query words in <mark>), and why (ranks per side)."""
        return paged_json(service.search(pool, SearchParams(**query.model_dump())), "hits")

    @api("/api/papers/{pid:path}/similar", "Similar papers", schemas.SimilarOut, "Nearest neighbours", PAPER_ERRORS)
    def api_similar(
        pid: str,
        k: Annotated[int, Query(ge=1, le=service.MAX_SIMILAR, description="How many neighbours")] = 10,
    ) -> Response:
        """Nearest neighbours of a paper by embedding (title words when it has no vector)."""
        paper, hits = service.similar(pool, pid, k)
        return SafeJSON(
            {"id": paper.id, "similar": [safe_paper({**h.paper.to_dict(), "score": round(h.score, 6)}) for h in hits]}
        )

    @api("/api/papers/{pid:path}", "One paper", schemas.PaperDetail, "The paper", PAPER_ERRORS)
    def api_paper(pid: str) -> Response:
        """One paper with every field, its links and a BibTeX entry. Ids may contain `/`
        (hep-th/9901002) and may carry an `arXiv:` prefix or a version suffix."""
        p = service.get_paper(pool, pid)
        return SafeJSON(summaries.attach_json(pool, [safe_paper({**p.to_dict(), "bibtex": render.bibtex(p)})])[0])

    @api("/api/daily", "Daily papers", schemas.DailyOut, "One day's papers")
    def api_daily(
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
        return paged_json(service.daily(pool, day, category, page, per_page), "papers")

    @api("/api/days", "Days with papers", schemas.DaysOut, "Days, newest first")
    def api_days(limit: Annotated[int, Query(ge=1, le=service.MAX_DAYS, description="How many days")] = 60) -> Response:
        """Days that have papers, newest first, with counts."""
        return SafeJSON({"days": [{"day": d, "count": n} for d, n in service.days(pool, limit)]})

    def _plan_and_index(params: SearchParams):
        """The query's plan (for "why this matched") and the lexical snapshot (for which words
        are everyday words); either None when it cannot be had."""
        try:
            pl = plan(params.q, mode=params.mode)
        except Exception:  # the search itself said what is wrong with the query
            pl = None
        try:
            with pool.reader() as st:
                ix = lex_index(st)
        except Exception:
            ix = None
        return pl, ix

    def mark_saved(cards: list[dict[str, Any]]) -> None:
        """Each card's tags (the library's), so a saved paper says so after a reload."""
        if not cards:
            return
        with pool.reader() as st:
            for c in cards:
                c["in_tags"] = library.tags_of(st, c["id"])

    # --- HTML views -------------------------------------------------------------------------
    # One view per feature, as datasette does: the page and its .json twin are the same handler,
    # so what the page shows and what the JSON says cannot drift apart.
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    @app.get("/search.json", include_in_schema=False)
    def search_page(request: Request, query: Annotated[PageQuery, Query()]) -> Response:
        """Search results; with no query and no filter, the home page (what this is, the store's
        size and dates, queries to try) above the newest papers."""
        etal = i18n.t(lang_of(request), "et_al")  # the cards' "et al." (等)
        params = SearchParams(**query.model_dump())
        if len(params.q.strip()) > PASTED_TEXT_AT and not request.url.path.endswith(".json"):
            return related_view(  # a pasted abstract or paragraph: related work
                request, params.q.strip(), {"category": params.category, "from": params.date_from, "to": params.date_to}
            )
        if request.url.path.endswith(".json"):
            return paged_json(service.search(pool, params), "hits")
        res: Result | None = None
        err: str | None = None
        try:
            params = service.normalise(params)
            res = service.search(pool, params)
        except ServiceError as e:
            err, status = e.message, e.status  # 503: over the time budget, or busy
        wanted = matched_categories(params.q, params.category)
        cards = []
        if res:
            explain = bool(params.q.strip()) and res.mode != "lookup"  # not for the newest papers or an id
            plan_, ix = _plan_and_index(params) if res.hits else (None, None)
            cards = [render.card(h.paper, etal, h, wanted=wanted, plan=plan_, ix=ix, explain=explain) for h in res.hits]
            mark_saved(cards)
        home = service.overview(pool) if not params.q and not params.has_filters() and params.page == 1 else None
        # what "Save this search" keeps, under the form's names
        saving = {"mode": params.mode if params.mode != "hybrid" else None, **params.url_params()}
        return page(
            request,
            "search.html",
            status=status if err else 200,
            params=params,
            res=res,
            cards=cards,
            error=err,
            home=home,
            examples=EXAMPLES,
            window=_page_window(res.page, res.pages) if res else [],
            start=(res.page - 1) * res.per_page if res else 0,
            hints=render.fewer_hints(params.q) if res is not None and not res.hits and params.q else [],
            save_params={k: v for k, v in saving.items() if v},
        )

    @app.get("/paper/{pid:path}", response_class=HTMLResponse, include_in_schema=False)
    def paper_page(request: Request, pid: str, q: str = "", category: str | None = None) -> Response:
        """One paper; the search or daily state it was opened from rides along in the query
        string, so "Back" returns to the same query, filters, sort and page."""
        etal = i18n.t(lang_of(request), "et_al")
        paper, hits = service.similar(pool, pid, 8)
        back = state_of(request)
        src = back.pop("src", "")
        back_url = ("/daily" if src == "daily" else "/") + (f"?{urlencode(back)}" if back else "")
        back_url += "#p-" + paper.id.replace("/", "-")  # back to the card it was opened from
        c = render.card(paper, etal, wanted=matched_categories(q, category))
        similar = [render.card(h.paper, etal) for h in hits]
        mark_saved([c, *similar])
        return page(
            request,
            "paper.html",
            paper=paper,
            c=c,
            similar=similar,
            bibtex=render.bibtex(paper),
            q=q,
            back_url=back_url,
            back_daily=src == "daily",
        )

    @app.get("/daily", response_class=HTMLResponse, include_in_schema=False)
    @app.get("/daily.json", include_in_schema=False)
    def daily_page(
        request: Request,
        day: str | None = None,
        category: str | None = None,
        view: str = "day",
        sort: str = "top",
        page_: Annotated[int, Query(alias="page")] = 1,
        layout: str | None = None,
    ) -> Response:
        """A day, week or month of papers, or the trending week: by default a digest (the
        community's signal, then the user's tags; feed.listing "top"), else by date, upvotes,
        stars or the tags alone; as cards or one line per paper (`layout`, remembered)."""
        etal = i18n.t(lang_of(request), "et_al")
        json_view = request.url.path.endswith(".json")
        chosen = layout if layout in LAYOUTS else None
        current = chosen or (
            request.cookies.get(LAYOUT_COOKIE) if request.cookies.get(LAYOUT_COOKIE) in LAYOUTS else "cards"
        )
        per_page = discover.COMPACT_PER_PAGE if current == "compact" and not json_view else 30
        d = discover.daily_listing(pool, view, day or None, category, sort, page_, per_page)
        done, feed_line = discover.day_completeness(pool, d)
        if json_view:
            return paged_json(d, "papers", completeness=done)
        cards = [render.card(p, etal, wanted=[d.category] if d.category else []) for p in d.papers]
        mark_saved(cards)
        for c in cards:
            if c["id"] in d.scores:
                c["for_you"] = d.scores[c["id"]]
        resp = page(
            request,
            "daily.html",
            d=d,
            cards=cards,
            window=_page_window(d.page, d.pages),
            layout=current,
            trending=[render.card(p, etal) for p in d.trending],
            completeness=done,
            notices=[n for n in d.notices if n != feed_line],  # the completeness line replaces the feed's
        )
        if chosen:
            resp.set_cookie(LAYOUT_COOKIE, chosen, max_age=365 * 86400, samesite="lax")
        return resp

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> Response:
        """200 when this server can answer (its store and the backend it searches), else 503."""
        return SafeJSON(service.health(pool))

    @app.get("/api/suggest", include_in_schema=False)
    def api_suggest(
        request: Request, q: Annotated[str, Query(max_length=500)] = "", lang: str | None = None
    ) -> Response:
        """Completions of the query typed so far (web/suggest.py): authors, categories, venues
        and the query syntax, from this store."""
        with pool.reader() as st:
            found = suggest(st, q, lang if lang in i18n.LANGS else lang_of(request))
        return SafeJSON({"q": q, "suggestions": [s.to_dict() for s in found]})

    @app.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request) -> Response:
        """The API reference, rendered from the OpenAPI spec (offline, unlike Swagger UI), with
        examples addressed to this server and a paper this store has."""
        spec = app.openapi()
        ops = [(path, method.upper(), op) for path, item in spec["paths"].items() for method, op in item.items()]
        info = service.overview(pool)
        base = str(request.base_url).rstrip("/")
        return page(request, "api.html", ops=ops, base=base, example_id=info["example_id"] or "2501.00001")

    def openapi() -> dict[str, Any]:
        """The spec as the API behaves: validation failures are 400 (FastAPI's default 422 is
        never sent), and every operation lists the errors it can answer with."""
        if app.openapi_schema:
            return app.openapi_schema
        spec = FastAPI.openapi(app)
        for item in spec.get("paths", {}).values():
            for op in item.values():
                op.get("responses", {}).pop("422", None)
        schemas_ = spec.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas_.pop(name, None)
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response((HERE / "static" / "favicon.svg").read_bytes(), media_type="image/svg+xml")

    app.include_router(discover.router)  # library, recommendations, feeds: web/discover.py
    app.include_router(summary_api.router)  # on-demand machine summaries (optional layer)
    return app

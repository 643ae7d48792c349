"""The ASGI app: server-rendered pages and a JSON API over the same service functions, one view
module per resource (web/views/). Pages work without JavaScript, every asset is served from
``static/`` (no CDN: the UI works offline), and a strict Content-Security-Policy backs up the
escaping of paper text.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from paperdex.discover import library
from paperdex.messages import message, param, typed
from paperdex.service import MAX_WAITING, SearcherPool, ServiceError
from paperdex.settings import Settings
from paperdex.web.assets import StaticAssets
from paperdex.web.limits import admit, check_path, host_name
from paperdex.web.views import api, daily, feeds, library_api, paper, search, summary
from paperdex.web.views import library as library_views
from paperdex.web.views.base import TEMPLATES, SafeJSON, load_templates, page

log = logging.getLogger("paperdex.web")
HERE = Path(__file__).parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
# The routers in the order they are matched (a path two of them share: the first one's Allow header)
ROUTERS = (api, search, paper, daily, library_views, library_api, feeds, summary)
JSON_PATHS = ("/api", "/openapi.json", "/search.json", "/daily.json")  # and every /api/… path


class Guard:
    """The outermost layer, around FastAPI's error handling, so that every response (a 500
    included) carries the security headers; HEAD is answered as GET without the body, and only
    what limits.admit admits gets in. Plain ASGI: no per-request task overhead."""

    HEADERS = [
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
    ]

    def __init__(self, app: ASGIApp, allowed_hosts: list[str]) -> None:
        self.app = app
        names = {host_name(h) or h.strip().lower() for h in allowed_hosts}
        self.hosts = None if "*" in names else names  # None: any Host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        head = scope["method"] == "HEAD"

        async def guarded_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in self.HEADERS if k not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            elif head and message["type"] == "http.response.body" and message.get("body"):
                message = {**message, "body": b""}
            await send(message)

        if head:
            scope = {**scope, "method": "GET"}
        await admit(self.app, scope, receive, guarded_send, self.hosts)  # Host, cross-site, tokens in URLs, body sizes


class App(FastAPI):
    """FastAPI with the Guard outside its error middleware, and the spec as the API behaves:
    validation failures are 400 (FastAPI's default 422 is never sent), and every operation
    lists the errors it can answer with."""

    guard_hosts: list[str] = list(LOOPBACK_HOSTS)

    def build_middleware_stack(self) -> ASGIApp:
        return Guard(super().build_middleware_stack(), self.guard_hosts)

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema:
            return self.openapi_schema
        spec = super().openapi()
        for item in spec.get("paths", {}).values():
            for op in item.values():
                op.get("responses", {}).pop("422", None)
        for name in ("HTTPValidationError", "ValidationError"):
            spec.get("components", {}).get("schemas", {}).pop(name, None)
        self.openapi_schema = spec
        return spec


def create_app(
    data_dir: str | Path,
    pool_size: int | None = None,
    *,
    settings: Settings | None = None,
    client_queue: int = MAX_WAITING,
    templates: Path = TEMPLATES,
) -> FastAPI:
    """The paperdex web app over one data directory, configured by `settings` (else the
    environment's, as `paperdex serve` would be): it answers the loopback names and allowed_hosts.
    Its pages are the `templates` read now (views/base.load_templates), not as they change later."""
    st = settings if settings is not None else Settings.from_env(data_dir=data_dir)
    app = App(
        title="paperdex",
        summary="Search research papers: hybrid keyword + semantic search, paper details, daily feeds.",
        version="0.1.0",
        docs_url=None,  # Swagger UI loads from a CDN; /api/docs is a local page instead
        redoc_url=None,
        dependencies=[Depends(check_path)],  # every route's path parameters, checked once
        exception_handlers=HANDLERS,
    )
    app.guard_hosts = [*LOOPBACK_HOSTS, *st.allowed_hosts]
    app.state.pool = SearcherPool.of(st, data_dir, pool_size, client_queue)  # what every view reads
    app.state.settings = st  # what on-demand writes (views/summary.py) are configured with
    app.state.templates = load_templates(templates)  # read and compiled once: a code change waits for the restart
    # every answer over 1 KB compressed: a results page is mostly text and KaTeX's script
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=6)
    app.mount("/static", StaticAssets(directory=HERE / "static"), name="static")  # cached: web/assets.py
    for view in ROUTERS:
        app.include_router(view.router)
    return app


# --- errors: JSON for the API, a page for the rest ------------------------------------------------
def error(request: Request, status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    headers = dict(headers or {})
    if status == 405:  # HEAD is answered wherever GET is
        allow = [m.strip() for m in headers.get("Allow", "GET").split(",")]  # Starlette's 405 names it so
        if "GET" in allow and "HEAD" not in allow:
            allow.append("HEAD")
        headers["Allow"] = ", ".join(allow)
    # /api itself too: a client folds /api/tags/.. into /api, and an API client reads JSON
    path = request.url.path
    if path.startswith("/api/") or path in JSON_PATHS:
        return SafeJSON({"error": {"status": status, "message": message}}, status_code=status, headers=headers)
    try:
        resp: Response = page(request, "error.html", status=status, status_code=status, message=message)
    except Exception:  # a page that cannot render must still answer
        log.exception("error page failed")
        resp = Response(f"{status}: {message}", status_code=status, media_type="text/plain")
    resp.headers.update(headers)
    return resp


async def on_refused(request: Request, exc: ServiceError | library.LibraryError) -> Response:
    return error(request, exc.status, exc.message, getattr(exc, "headers", None))


# pydantic's error types a parameter's message names: (message code, the context field of its limit)
_INVALID = {
    "int_parsing": ("param_not_integer", None),
    "int_from_float": ("param_not_integer", None),
    "int_type": ("param_not_integer", None),
    "bool_parsing": ("param_not_bool", None),
    "float_parsing": ("param_not_number", None),
    "greater_than_equal": ("param_at_least", "ge"),
    "less_than_equal": ("param_at_most", "le"),
}


def _invalid(e: Mapping[str, Any]) -> str:
    """One parameter's pydantic error as a Message, so a page shows it in its own language (a
    Chinese page said "page: Input should be a valid integer"); a type the table does not name
    keeps pydantic's English after the parameter's name. The API's JSON says the English."""
    name = param(".".join(str(x) for x in e.get("loc", ())[1:]) or "request")
    code, limit = _INVALID.get(str(e.get("type")), ("param_invalid", None))
    if code == "param_invalid":
        return message(code, name=name, detail=str(e.get("msg", "invalid")))
    if limit is not None:
        return message(code, name=name, limit=(e.get("ctx") or {}).get(limit))
    return message(code, name=name, value=typed(str(e.get("input"))))


async def on_validation(request: Request, exc: RequestValidationError) -> Response:
    parts = [_invalid(e) for e in exc.errors()[:5]]
    if not parts:
        return error(request, 400, "invalid request")
    return error(request, 400, functools.reduce(lambda a, b: message("messages_joined", first=a, rest=b), parts))


async def on_http(request: Request, exc: StarletteHTTPException) -> Response:
    msg = exc.detail if isinstance(exc.detail, str) else "error"
    return error(request, exc.status_code, msg, exc.headers)


async def on_crash(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s", request.url.path)
    return error(request, 500, message("internal_error"))


HANDLERS: dict[int | type[Exception], Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    ServiceError: on_refused,
    library.LibraryError: on_refused,  # a library request that cannot be done
    RequestValidationError: on_validation,
    StarletteHTTPException: on_http,
    Exception: on_crash,
}

"""What every view shares: the app's state (set by create_app), the templates, a page's links,
the signed-in session, and the two ways a page is rendered."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse
from jinja2 import DictLoader, Environment, select_autoescape

from paperdex.discover import library, summaries
from paperdex.paper import Paper, finite
from paperdex.search import URL_NAMES
from paperdex.service import Pool
from paperdex.web import assets, i18n, render
from paperdex.web.links import filterable, quoted, search_link

COOKIE = "paperdex_token"  # the sign-in cookie (views/library.py)
# Query parameters a page link may carry over from the request; anything else is dropped.
LINK_PARAMS = (
    "q", "mode", "sort", "page", "per_page", "category", "from", "to", "venue", "area", "author", "day", "view", "src",
    "layout",
)  # fmt: skip
MAX_LINK_VALUE = 1000
YEAR = 365 * 86400  # how long a remembered choice (language, layout) is kept


TEMPLATES = Path(__file__).parent.parent / "templates"


def load_templates(directory: Path = TEMPLATES) -> Environment:
    """Every template of ``directory``, read and compiled now and never read from disk again
    (create_app calls it once): a running server keeps the templates it started with, so code
    changed under it (a `git pull` deployment) takes effect at the restart. Read from
    disk as pages asked for them, a new template met the old code that fills it in (a 500 on
    every tag page: 'pages' is undefined). A template that does not compile stops the start."""
    sources = {p.relative_to(directory).as_posix(): p.read_text(encoding="utf-8") for p in directory.rglob("*.html")}
    env = Environment(
        loader=DictLoader(sources),
        autoescape=select_autoescape(["html"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
        cache_size=-1,  # every template stays compiled
    )
    env.filters["q"] = lambda s: quote(str(s), safe="")
    env.globals.update(
        plain_tex=render.plain_tex, filterable=filterable, quoted=quoted, search_link=search_link, static=assets.url
    )
    for name in sources:
        env.get_template(name)
    return env


def templates_of(request: Request) -> Environment:
    """The templates the app started with (create_app puts them on app.state)."""
    return cast(Environment, request.app.state.templates)


def pool_of(request: Request) -> Pool:
    """The app's searchers and readers (create_app puts them on app.state)."""
    return cast(Pool, request.app.state.pool)


def lang_of(request: Request) -> str:
    return i18n.negotiate(
        request.query_params.get("lang"), request.cookies.get(i18n.COOKIE), request.headers.get("accept-language")
    )


class SafeJSON(JSONResponse):
    """Valid JSON whatever is stored: a NaN that reached the store before records were
    validated becomes null instead of a 500 for every answer that includes it."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:
            return json.dumps(finite(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def paged_json(request: Request, found: Any, rows: str, **more: Any) -> SafeJSON:
    """One page of a search (rows "hits") or a listing ("papers") as the API and the .json views
    answer: its page count, links filtered as the pages do, machine summaries, and `more`."""
    return SafeJSON(render.paged_dict(pool_of(request), found, rows, **more))


# --- the signed-in session ------------------------------------------------------------------------
def csrf_for(token_hash: str) -> str:
    """A signed-in browser's CSRF value: an HMAC under its token's hash (the server recomputes it, no other site)."""
    return hmac.new(token_hash.encode(), b"paperdex-csrf", hashlib.sha256).hexdigest()


def presented(request: Request) -> tuple[str | None, str]:
    """The token this request carries and how: ("…", "bearer"), ("…", "cookie") or (None, "")."""
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip(), "bearer"
    tok = request.cookies.get(COOKIE)
    return (tok, "cookie") if tok else (None, "")


def session_of(request: Request) -> dict[str, Any] | None:
    """The token record of this request's bearer token or sign-in cookie, if valid."""
    tok, _ = presented(request)
    if not tok:
        return None
    with pool_of(request).reader() as st:
        return library.check_token(st, tok)


# --- pages ------------------------------------------------------------------------------------------
def render_page(request: Request, template: str, status: int, session: dict | None, **ctx: Any) -> HTMLResponse:
    """A page with what every template reads (language, path, session, CSRF value)."""
    lang = lang_of(request)
    tpl = templates_of(request).get_template(template)
    body = tpl.render(
        request=request,
        lang=lang,
        t=partial(i18n.t, lang),
        msg=partial(i18n.message, lang),
        path=request.url.path,
        session=session,
        csrf=csrf_for(session["hash"]) if session else "",
        **ctx,
    )
    return HTMLResponse(render.with_katex(body), status_code=status)


def state_of(request: Request) -> dict[str, str]:
    """This request's parameters the pages know, each at most MAX_LINK_VALUE long (junk is not copied into links)."""
    return {k: v for k, v in request.query_params.items() if k in LINK_PARAMS and len(v) <= MAX_LINK_VALUE}


def url_with(request: Request, **changes: Any) -> str:
    """A link to this page with some parameters changed (only those of state_of carried over)."""
    params = state_of(request) | {URL_NAMES.get(k, k): "" if v is None else str(v) for k, v in changes.items()}
    qs = urlencode({k: v for k, v in params.items() if v != ""})  # an empty or None change drops it
    # the decoded path quoted again (an id may hold % ? #), never a protocol-relative //host link
    path = "/" + quote(request.scope["path"].lstrip("/"), safe="/:@!$&'()*+,;=")
    return path + (f"?{qs}" if qs else "")


def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    """A page of the search views: its links carry the search's state (query, filters, sort,
    page), so a paper's "Back" link returns here; `?lang=` is remembered in a cookie."""
    lang = lang_of(request)
    mark_cards(request, ctx, lang)
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
        url_with=partial(url_with, request),
        state_qs=urlencode(state),
        **ctx,
    )
    return remember_lang(request, resp)


def remember_lang(request: Request, resp: HTMLResponse) -> HTMLResponse:
    """`?lang=` kept in a cookie, on every page: the library's pages did not, so a click from
    /library?lang=zh to a tag went back to English."""
    q_lang = request.query_params.get("lang", "")[:2].lower()
    if q_lang in i18n.LANGS:
        resp.set_cookie(i18n.COOKIE, q_lang, max_age=YEAR, samesite="lax")
    return resp


def discover_page(
    request: Request, template: str, status: int = 200, *, pinned: Mapping[str, str] | None = None, **ctx: Any
) -> HTMLResponse:
    """A page of the library views: its links keep the request's own query, and its template
    draws each paper's card with `cardof` (with the tags holding the paper and its summary).
    `pinned`: what the page's own links name beyond its query (/for-you's day, as its pager
    does), so the language switch shows the same page, not a newer day's."""
    lang = lang_of(request)
    qs = {**request.query_params, **(pinned or {})}
    qs["lang"] = "en" if lang == "zh" else "zh"
    known: dict[str, dict[str, Any]] = {}

    def cardof(p: Paper, note: str | None = None) -> dict[str, Any]:
        if p.id not in known:
            known[p.id] = render.card(p)
            mark_cards(request, {"cards": [known[p.id]]}, lang)
        return {**known[p.id], "note": note}

    resp = render_page(
        request,
        template,
        status,
        session_of(request),
        cardof=cardof,
        here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        switch_url=request.url.path + "?" + urlencode(qs),
        url_with=lambda **_: request.url.path,  # a link to this page with a change: the page itself
        state_qs="",
        **ctx,
    )
    return remember_lang(request, resp)


def mark_cards(request: Request, ctx: dict[str, Any], lang: str) -> None:
    """On the cards a page shows (ctx's `cards` and `similar`, and `c`, a paper page's paper), the
    tags holding each, so a saved paper says so after a reload, and its summary (`c`'s with every part)."""
    main, cards = ctx.get("c"), [*(ctx.get("cards") or []), *(ctx.get("similar") or [])]
    if not main and not cards:
        return
    with pool_of(request).reader() as st:
        for c in [*([main] if main else []), *cards]:
            c["in_tags"] = library.tags_of(st, c["id"])
        try:
            have = st.summaries([c["id"] for c in [*cards, *([main] if main else [])]])
        except Exception:  # an optional decoration never costs the reader the page
            summaries.log.exception("summaries not shown: the store could not be read")
            return
    for c in cards:
        c["summary"] = summaries.pick(have.get(c["id"], {}), lang)
    if main:
        main["summary"] = summaries.pick(have.get(main["id"], {}), lang, full=True)


def page_window(page: int, pages: int, width: int = 2) -> list[int | None]:
    """1 … 4 5 [6] 7 8 … 20: numbered links around the current page, None for a gap."""
    keep = sorted({1, pages, *range(max(1, page - width), min(pages, page + width) + 1)})
    return [x for a, b in zip([0, *keep], keep, strict=False) for x in ([None, b] if b - a > 1 else [b])]

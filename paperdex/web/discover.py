"""Discover: the library, recommendations, related work, saved searches and feeds on the web.

One APIRouter, included by ``app.py``. Reads are open to anyone who can reach the server;
every write (a tag, a "not interested", a saved search, an import) needs a token made by
``paperdex token create`` (stored hashed, :mod:`paperdex.discover.library`):

* the JSON API takes it as ``Authorization: Bearer TOKEN``;
* the browser signs in once on /library: the token goes into an HttpOnly, SameSite=Strict
  cookie, and every form carries a CSRF field derived from the token's hash (an HMAC), checked
  with the request's Origin: a page on another site cannot post a form with this cookie.

Writes open a writable store for the one request (the searchers' stores are read-only).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from paperdex import service
from paperdex.discover import digest, feed, library, summaries
from paperdex.discover import recommend as R
from paperdex.messages import message
from paperdex.paper import Paper
from paperdex.search.engine import Filters
from paperdex.service import ServiceError
from paperdex.sources import completeness
from paperdex.store import Store, StoreError
from paperdex.web import assets, i18n, render
from paperdex.web.limits import cross_site, parse_json
from paperdex.web.links import filterable, quoted, search_link  # the cards' links, as on the search pages

HERE = Path(__file__).parent
COOKIE = "paperdex_token"
FEED_ITEMS = 30
FEED_DAYS = 14  # a tag's feed: recommendations among the papers of the store's last days

router = APIRouter()


def _env() -> Environment:
    """The pages' templates, for app.py's pages and these alike."""
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["plain_tex"] = render.plain_tex
    env.filters["q"] = lambda s: quote(str(s), safe="")
    env.globals.update(filterable=filterable, quoted=quoted, search_link=search_link, static=assets.url)
    return env


ENV = _env()


# --- the daily page's listing ----------------------------------------------------------------------
# A compact line is ~38 px against a ~260 px card: a page of 30 lines is half a screen. The feed
# lists at most 200 a page, so a 530-paper day is 3 pages, not 18; each line carries its card
# (opened in place without script), ~2 KB of HTML, so 200 lines stay near a results page's weight.
COMPACT_PER_PAGE = 200


def daily_listing(pool: Any, view: str, day: str | None, category: str | None, sort: str, page: int, per_page: int):
    """service.listing, with two rules of the page's:

    * per_page up to the feed's own cap (the compact view's COMPACT_PER_PAGE), past the API's
      MAX_PER_PAGE: the page is one request of one reader, like the API's;
    * "Top" ranks by a community signal only when there is one: Hugging Face upvotes. A
      day without any used to be led by GitHub stars instead (a divertor paper's ★ 8 third, issue
      34): stars are counted on the code repository, whatever its age and topic, and a day-old
      paper's few stars say more about who linked a repository than about the paper. Such a day
      is ranked as "For you" (the user's tags) when there are tags, else kept in the listing's
      order, and says so (ranked_by starts with "no_upvotes"); the Stars sort stays one click
      away."""
    day, category = service._listing_args(day, category, page, 1)
    d = service._read_feed(pool, feed.listing, view, day, category, sort, page, per_page)
    if sort != "top" or view == "trending" or "upvotes" in d.ranked_by or "stars" not in d.ranked_by:
        return d
    instead = "foryou" if "tags" in d.ranked_by else "newest"
    alt = service._read_feed(pool, feed.listing, view, day, category, instead, page, per_page)
    alt.sort = "top"
    alt.ranked_by = ["no_upvotes", "tags" if instead == "foryou" else "listing"]
    return alt


def day_completeness(pool: Any, d: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Whether the store holds every paper the arXiv listings read for this day named, from the
    records `sync --check` reads (sources/completeness.py): "complete", or "missing" with the
    ids and whether a later sync still asks for them; and the feed's English notice saying the
    same, which the page replaces with a translated line of its own. (None, None) for a week,
    a month, trending, or a day no sync read a listing for: the page says nothing it does not
    know."""
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


# --- plumbing ------------------------------------------------------------------------------------


def _pool(request: Request):
    return request.app.state.pool


def lang_of(request: Request) -> str:
    return i18n.negotiate(
        request.query_params.get("lang"), request.cookies.get(i18n.COOKIE), request.headers.get("accept-language")
    )


def csrf_for(token_hash: str) -> str:
    """The CSRF value of a signed-in browser: an HMAC of a fixed label under the token's hash
    (the server can recompute it; a page on another site cannot)."""
    return hmac.new(token_hash.encode(), b"paperdex-csrf", hashlib.sha256).hexdigest()


def _presented(request: Request) -> tuple[str | None, str]:
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip(), "bearer"
    tok = request.cookies.get(COOKIE)
    return (tok, "cookie") if tok else (None, "")


def session_of(request: Request) -> dict[str, Any] | None:
    """The token record of this request's bearer token or sign-in cookie, if valid (every
    page's nav, and "Save this search", need to know)."""
    tok, _ = _presented(request)
    if not tok:
        return None
    with _pool(request).reader() as st:
        return library.check_token(st, tok)


def require_writer(request: Request, form: dict[str, Any] | None = None) -> dict[str, Any]:
    """The token allowing this write, or ServiceError 401 (none, or not valid) / 403 (a
    cookie-signed form without its CSRF value, or from another origin)."""
    rec = _token(request)
    _check_csrf(request, rec, form)
    return rec


def _token(request: Request) -> dict[str, Any]:
    """The valid token this request presents, or ServiceError 401: checked before the body
    of a write is read, so a request without one costs nothing but its headers."""
    if not _presented(request)[0]:
        raise ServiceError(
            401,
            "writing needs a token: make one with `paperdex token create`, then sign in on /library "
            "or send Authorization: Bearer TOKEN",
            {"WWW-Authenticate": "Bearer"},
        )
    rec = session_of(request)
    if rec is None:
        raise ServiceError(401, "this token is not valid (revoked or mistyped)", {"WWW-Authenticate": "Bearer"})
    return rec


def _check_csrf(request: Request, rec: dict[str, Any], form: dict[str, Any] | None) -> None:
    if _presented(request)[1] == "cookie":
        sent = (form or {}).get("csrf") or request.headers.get("x-csrf-token") or ""
        # cross_site: what limits.admit refused already (a write is never a navigation), checked
        # again with the token it guards
        if not hmac.compare_digest(str(sent), csrf_for(rec["hash"])) or cross_site(request.scope):
            raise ServiceError(403, "this form is not from this site (CSRF check failed); reload the page and retry")


async def _written(request: Request, read=None) -> dict[str, Any]:
    """The body of a write (`read`: _json; default _form): the token checked before the body is
    read, the CSRF value after."""
    rec = _token(request)
    body = await (read or _form)(request)
    _check_csrf(request, rec, body)
    return body


@contextmanager
def _writer(request: Request) -> Iterator[Store]:
    """A writable store for one request."""
    try:
        store = Store(_pool(request).data_dir)
    except StoreError as e:
        raise ServiceError(503, f"this server cannot write its library: {e}") from None
    with store:
        yield store


async def _form(request: Request) -> dict[str, Any]:
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def _json(request: Request) -> dict[str, Any]:
    """A JSON object body, sent as application/json: a no-cors `text/plain` POST from another
    site's page (which needs no CORS preflight) is refused before its body is read, and a body
    nested too deep before it is parsed (limits.parse_json)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json" and not (ctype.startswith("application/") and ctype.endswith("+json")):
        raise ServiceError(415, "the body must be JSON, sent with Content-Type: application/json")
    try:
        data = parse_json(await request.body())  # its depth checked before it is parsed
    except ValueError as e:
        raise ServiceError(400, f"the body must be a JSON object: {e}") from None
    if not isinstance(data, dict):
        raise ServiceError(400, "the body must be a JSON object")
    return data


def render_page(request: Request, template: str, status: int, session: dict | None, **ctx: Any) -> HTMLResponse:
    """A page with what every template reads: the interface language and its text, the path,
    the signed-in session and its CSRF value."""
    lang = lang_of(request)
    body = ENV.get_template(template).render(
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


def _page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    lang = lang_of(request)
    qs = dict(request.query_params)
    qs["lang"] = "en" if lang == "zh" else "zh"
    etal = i18n.t(lang, "et_al")
    # per paper: the tags holding it, its machine summary (summaries.py) in the interface language
    known: dict[str, tuple[list[str], dict | None]] = {}

    def cardof(p: Paper, note: str | None = None) -> dict[str, Any]:
        """The one card every page draws (render.card), with the tags that hold the paper."""
        if p.id not in known:
            with _pool(request).reader() as st:
                known[p.id] = library.tags_of(st, p.id), summaries.pick(st.summaries([p.id]).get(p.id, {}), lang)
        c = render.card(p, etal)
        c["in_tags"], c["summary"] = known[p.id]
        c["note"] = note
        return c

    return render_page(
        request,
        template,
        status,
        session_of(request),
        cardof=cardof,
        here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        switch_url=request.url.path + "?" + urlencode(qs),
        url_with=lambda **kw: request.url.path,
        state_qs="",
        **ctx,
    )


def _back(form: dict[str, Any], default: str) -> str:
    """Where a form returns to: a path on this site only."""
    nxt = str(form.get("next") or "")
    if nxt.startswith("/") and not nxt.startswith("//") and "\\" not in nxt:
        return nxt
    return default


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


# --- the library page, sign-in -------------------------------------------------------------------


@router.get("/library", response_class=HTMLResponse, include_in_schema=False)
def library_page(request: Request) -> Response:
    pool = _pool(request)
    saved = [(ss, nm and nm.count) for ss, nm in service.saved_searches(pool)]
    with pool.reader() as st:
        tags = library.tags(st)
        n_dismissed = len(library.dismissed(st))
    nxt = _back({"next": request.query_params.get("next", "")}, "")
    return _page(request, "discover_library.html", tags=tags, saved=saved, n_dismissed=n_dismissed, next=nxt)


@router.post("/library/login", include_in_schema=False)
async def login(request: Request) -> Response:
    form = await _form(request)
    tok = (form.get("token") or "").strip()
    with _pool(request).reader() as st:
        rec = library.check_token(st, tok)
    if rec is None:
        raise ServiceError(401, "this token is not valid (revoked or mistyped)")
    resp = RedirectResponse(_back(form, "/library"), status_code=303)
    secure = request.url.scheme == "https"
    resp.set_cookie(COOKIE, tok, max_age=180 * 86400, httponly=True, samesite="strict", secure=secure, path="/")
    return resp


@router.post("/library/logout", include_in_schema=False)
async def logout(request: Request) -> Response:
    await _written(request)
    resp = RedirectResponse("/library", status_code=303)
    resp.delete_cookie(COOKIE, path="/")
    return resp


# --- tags ----------------------------------------------------------------------------------------


@router.get("/tag/{name}", response_class=HTMLResponse, include_in_schema=False)
def tag_page(request: Request, name: str, page: int = 1) -> Response:
    pool = _pool(request)
    page = max(1, min(int(page), 10))
    with pool.reader() as st:
        tag = library.get_tag(st, name)
        ids = library.tag_papers(st, tag.name)
        papers = [p for p in (st.get(i) for i in ids) if p is not None]
    recs = service.recommend(pool, tag.name, 20, page)
    return _page(request, "discover_tag.html", tag=tag, papers=papers, recs=recs, page=page)


@router.get("/save/{pid:path}", response_class=HTMLResponse, include_in_schema=False)
def save_page(request: Request, pid: str, next: str = "") -> Response:
    """The "save to a tag" form of one paper (the cards' save link without script); `next` is
    where the form returns to, a path on this site."""
    with _pool(request).reader() as st:
        found, _ = library.paper_ids(st, [pid])
        if not found:
            raise ServiceError(404, f"no paper {pid[:80]!r} in this store")
        p = st.get(found[0])
        tags, paper_tags = library.tags(st), library.tags_of(st, p.id)
    back = _back({"next": next}, "")
    return _page(request, "discover_save.html", paper=p, tags=tags, paper_tags=paper_tags, next=back)


@router.get("/api/library/session", include_in_schema=False)
def api_session(request: Request) -> Response:
    """What the cards' "save to a tag" control needs: whether this browser may write, the CSRF
    value of its sign-in and the tag names. Another site's page cannot read this answer (no
    CORS), so handing the CSRF value to this site's script is safe."""
    sess = session_of(request)
    with _pool(request).reader() as st:
        names = [t.name for t in library.tags(st)]
    out: dict[str, Any] = {"signed_in": sess is not None, "tags": names}
    if sess is not None:
        out.update(name=sess["name"], csrf=csrf_for(sess["hash"]))
    return JSONResponse(out, headers={"Cache-Control": "no-store"})


def _form_write(path: str):
    """A form that writes (POST `path`): the token and the CSRF value checked (_written), a
    writable store for the handler, which returns where the browser goes next (a 303)."""

    def register(write):
        @router.post(path, include_in_schema=False)
        async def handle(request: Request) -> Response:
            form = await _written(request)
            with _writer(request) as st:
                to = write(st, form, request)
            return RedirectResponse(to, status_code=303)

        return write

    return register


@_form_write("/library/tags/add")
def form_add(st: Store, form: dict[str, str], request: Request) -> str:
    name = (form.get("new_tag") or "").strip() or (form.get("tag") or "")
    library.add_to_tag(st, name, [form.get("id") or ""])
    return _back(form, f"/tag/{quote(library.tag_name(name), safe='')}")


@_form_write("/library/tags/remove")
def form_remove(st: Store, form: dict[str, str], request: Request) -> str:
    library.remove_from_tag(st, form.get("tag") or "", [form.get("id") or ""])
    return _back(form, "/library")


@_form_write("/library/tags/delete")
def form_delete_tag(st: Store, form: dict[str, str], request: Request) -> str:
    library.delete_tag(st, form.get("tag") or "")
    return "/library"


@_form_write("/library/dismiss")
def form_dismiss(st: Store, form: dict[str, str], request: Request) -> str:
    pid = form.get("id") or ""
    library.dismiss(st, [pid])
    back = _back(form, "")
    # the page it came from offers to undo it
    return f"{back}{'&' if '?' in back else '?'}dismissed={quote(pid, safe='')}" if back else "/library"


@_form_write("/library/undismiss")
def form_undismiss(st: Store, form: dict[str, str], request: Request) -> str:
    """Undo "Not interested": the paper may be recommended again."""
    library.undismiss(st, [form.get("id") or ""])
    back = _back(form, "/library")
    return f"{back}{'&' if '?' in back else '?'}undone=1"


@_form_write("/library/tags/rename")
def form_rename_tag(st: Store, form: dict[str, str], request: Request) -> str:
    new = (form.get("new_name") or "").strip()
    library.rename_tag(st, form.get("tag") or "", new)
    return f"/tag/{quote(library.tag_name(new), safe='')}"


# --- saved searches ------------------------------------------------------------------------------


def _search_url(ss: library.SavedSearch) -> str:
    qs = {"q": ss.query, **{k: v for k, v in ss.params.items() if k != "lang"}}
    return "/?" + urlencode(qs)


@_form_write("/library/saved")
def form_save_search(st: Store, form: dict[str, str], request: Request) -> str:
    params = {k: form.get(k) for k in library.SAVED_PARAMS}
    params["lang"] = params.get("lang") or lang_of(request)
    ss = library.save_search(st, form.get("name") or form.get("q") or "", form.get("q") or "", params)
    back = _back(form, "")
    return f"{back}{'&' if '?' in back else '?'}saved_search={ss.id}" if back else f"/saved/{ss.id}"


@router.get("/saved/{key}", response_class=HTMLResponse, include_in_schema=False)
def saved_page(request: Request, key: str) -> Response:
    nm = service.new_matches(_pool(request), key, 50)
    return _page(request, "discover_saved.html", ss=nm.saved, nm=nm, search_url=_search_url(nm.saved))


@_form_write("/library/saved/{key}/seen")
def form_seen(st: Store, form: dict[str, str], request: Request) -> str:
    return _back(form, f"/saved/{library.mark_seen(st, request.path_params['key']).id}")


@_form_write("/library/saved/{key}/delete")
def form_delete_saved(st: Store, form: dict[str, str], request: Request) -> str:
    library.delete_saved(st, request.path_params["key"])
    return "/library"


# --- related work --------------------------------------------------------------------------------


def _related(request: Request, text: str, k: int, params: dict[str, Any]) -> R.Related:
    filters = Filters(
        category=params.get("category") or None,
        date_from=params.get("from") or None,
        date_to=params.get("to") or None,
    )
    return service.related(_pool(request), text, k, filters)


@router.get("/related", response_class=HTMLResponse, include_in_schema=False)
def related_form(request: Request) -> Response:
    return _page(request, "discover_related.html", res=None, text="")


@router.post("/related", response_class=HTMLResponse, include_in_schema=False)
async def related_page(request: Request) -> Response:
    form = await _form(request)
    # the model and the searcher block: in a worker thread, never on the event loop (which
    # would stall every other request of this worker, and wait for a searcher while holding it)
    return await run_in_threadpool(related_view, request, form.get("text") or "", form)


def related_view(request: Request, text: str, params: dict[str, Any]) -> Response:
    """Related work for a pasted text: this page, and what the search box shows for a passage
    (web/app.py, PASTED_TEXT_AT)."""
    res = _related(request, text, 20, params) if text.strip() else None
    return _page(request, "discover_related.html", res=res, text=text)


# --- "for you": a day's papers by the user's tags -----------------------------------------------


@router.get("/for-you", response_class=HTMLResponse, include_in_schema=False)
def for_you_page(request: Request, day: str | None = None) -> Response:
    d, ranked = service.for_you(_pool(request), day, 50)
    return _page(request, "discover_foryou.html", d=d, ranked=ranked)


@router.get("/api/for-you", include_in_schema=False)
def api_for_you(request: Request, day: str | None = None, k: int = 50) -> Response:
    """A day's papers (default: the newest day) ordered by the user's tags: each paper's best
    recommendation score over the tags, and that tag."""
    d, ranked = service.for_you(_pool(request), day, k)
    return JSONResponse(
        {"day": d.day, "papers": [{**render.brief(p), "score": round(sc, 4), "tag": t} for p, sc, t in ranked]}
    )


# --- feeds ---------------------------------------------------------------------------------------


def _feed(request: Request, fmt: str, title: str, page_url: str, items: list[digest.Item]) -> Response:
    if fmt not in digest.FORMATS:
        raise ServiceError(404, "a feed is .rss or .atom")
    with _pool(request).reader() as st:  # machine TL;DRs, when the optional layer made any
        summaries.attach_items(st, items)
    body = digest.render_feed(fmt, title, str(request.url), page_url, items, _base(request))
    return Response(body, media_type=digest.media_type(fmt) + "; charset=utf-8")


@router.get("/feeds/tag/{name}.{fmt}", include_in_schema=False)
def tag_feed(request: Request, name: str, fmt: str) -> Response:
    with _pool(request).reader() as st:
        tag = library.get_tag(st, name)
        last = feed.latest_day(st)
        within = None
        if last:
            first = (date.fromisoformat(last[:10]) - timedelta(days=FEED_DAYS - 1)).isoformat()
            within = st.rowids_since(first)
    recs = service.recommend(_pool(request), tag.name, FEED_ITEMS, within=within or None)
    items = [digest.Item(r.paper, digest.reason_note(r)) for r in recs.items]
    return _feed(
        request, fmt, f"paperdex: recommended for {tag.name}", f"{_base(request)}/tag/{quote(tag.name)}", items
    )


@router.get("/feeds/saved/{key}.{fmt}", include_in_schema=False)
def saved_feed(request: Request, key: str, fmt: str) -> Response:
    ss, res = service.run_saved(_pool(request), key, FEED_ITEMS)
    items = [digest.Item(h.paper) for h in res.hits]
    return _feed(request, fmt, f"paperdex: {ss.name}", _base(request) + _search_url(ss), items)


@router.get("/feeds/category/{category}.{fmt}", include_in_schema=False)
def category_feed(request: Request, category: str, fmt: str) -> Response:
    newest = service.SearchParams(mode="lexical", sort="newest", per_page=FEED_ITEMS, category=category)
    res = service.search(_pool(request), newest, facets=False)
    items = [digest.Item(h.paper) for h in res.hits]
    return _feed(request, fmt, f"paperdex: {category}", f"{_base(request)}/?q=cat:{quote(category)}", items)


@router.get("/feeds/daily.{fmt}", include_in_schema=False)
def daily_feed(request: Request, fmt: str, category: str | None = None) -> Response:
    with _pool(request).reader() as st:
        try:
            d = feed.daily(st, None, category, 1, 200)
        except feed.FeedError as e:
            raise ServiceError(400, str(e)) from None
    items = [digest.Item(p) for p in d.papers]
    title = f"paperdex: papers of {d.day}" + (f" in {category}" if category else "")
    return _feed(request, fmt, title, f"{_base(request)}/daily", items)


# --- JSON API ------------------------------------------------------------------------------------


@router.post("/api/related", include_in_schema=False)
async def api_related(request: Request) -> Response:
    """Related work for a pasted text: {"text": "...", "k": 20, "category", "from", "to"}."""
    data = await _json(request)
    text = data.get("text")  # none, or not a string: the service's "paste a text"
    res = await run_in_threadpool(_related, request, text if isinstance(text, str) else "", data.get("k", 20), data)
    out = res.to_dict()
    out["hits"] = [
        {
            **render.brief(h.paper),
            "why": {"lexical_rank": h.lexical_rank, "dense_rank": h.dense_rank, "score": round(h.score, 6)},
        }
        for h in res.hits
    ]
    return JSONResponse(out)


@router.get("/api/tags", include_in_schema=False)
def api_tags(request: Request) -> Response:
    with _pool(request).reader() as st:
        return JSONResponse({"tags": [t.to_dict() for t in library.tags(st)]})


@router.get("/api/tags/{name}", include_in_schema=False)
def api_tag(request: Request, name: str) -> Response:
    with _pool(request).reader() as st:
        tag = library.get_tag(st, name)
        return JSONResponse({**tag.to_dict(), "papers": library.tag_papers(st, tag.name)})


@router.get("/api/tags/{name}/recommendations", include_in_schema=False)
def api_recommendations(request: Request, name: str, k: int = 20, page: int = 1) -> Response:
    recs = service.recommend(_pool(request), name, k, page)
    out = recs.to_dict()
    for r, d in zip(recs.items, out["recommendations"], strict=True):
        d["paper"] = render.brief(r.paper)
    return JSONResponse(out)


def _ids_of(data: dict[str, Any]) -> list[str]:
    ids = data.get("ids", [data["id"]] if "id" in data else None)
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids) or len(ids) > 1000:
        raise ServiceError(400, 'ids: a list of paper ids ({"ids": ["2505.13738"]})')
    return ids


@router.post("/api/tags/{name}/papers", include_in_schema=False)
async def api_tag_add(request: Request, name: str) -> Response:
    data = await _written(request, _json)
    ids = _ids_of(data)
    with _writer(request) as st:
        added = library.add_to_tag(st, name, ids)
        tag = library.get_tag(st, name)
    return JSONResponse({"added": added, **tag.to_dict()})


@router.delete("/api/tags/{name}/papers/{pid:path}", include_in_schema=False)
def api_tag_remove(request: Request, name: str, pid: str) -> Response:
    require_writer(request)
    with _writer(request) as st:
        removed = library.remove_from_tag(st, name, [pid])
    return JSONResponse({"removed": removed})


@router.delete("/api/tags/{name}", include_in_schema=False)
def api_tag_delete(request: Request, name: str) -> Response:
    require_writer(request)
    with _writer(request) as st:
        if not library.delete_tag(st, name):
            raise ServiceError(404, message("no_tag", name=name[:80]))
    return JSONResponse({"deleted": True})


@router.post("/api/dismissed", include_in_schema=False)
async def api_dismiss(request: Request) -> Response:
    data = await _written(request, _json)
    with _writer(request) as st:
        return JSONResponse({"dismissed": library.dismiss(st, _ids_of(data))})


@router.get("/api/saved", include_in_schema=False)
def api_saved(request: Request) -> Response:
    out = [
        {**ss.to_dict(), "new": nm and nm.count, "error": nm and nm.error}
        for ss, nm in service.saved_searches(_pool(request))
    ]
    return JSONResponse({"saved_searches": out})


@router.post("/api/saved", include_in_schema=False)
async def api_save(request: Request) -> Response:
    data = await _written(request, _json)
    params = data.get("params") or {k: data.get(k) for k in library.SAVED_PARAMS}
    if not isinstance(params, dict):
        raise ServiceError(400, "params: an object (mode, category, from, to, venue, area, author, lang)")
    with _writer(request) as st:
        ss = library.save_search(st, str(data.get("name") or data.get("q") or ""), str(data.get("q") or ""), params)
    return JSONResponse(ss.to_dict(), status_code=201)


@router.get("/api/saved/{key}/new", include_in_schema=False)
def api_saved_new(request: Request, key: str, limit: int = 20) -> Response:
    nm = service.new_matches(_pool(request), key, limit)
    return JSONResponse({**nm.to_dict(), "papers": [render.brief(p) for p in nm.papers]})


@router.post("/api/saved/{key}/seen", include_in_schema=False)
def api_saved_seen(request: Request, key: str) -> Response:
    require_writer(request)
    with _writer(request) as st:
        return JSONResponse(library.mark_seen(st, key).to_dict())


@router.get("/api/library/export", include_in_schema=False)
def api_export(request: Request, format: str = "json", tag: str | None = None) -> Response:
    with _pool(request).reader() as st:
        if format == "json":
            body, kind, ext = (
                json.dumps(library.export_json(st), ensure_ascii=False, indent=1),
                "application/json",
                "json",
            )
        elif format == "bibtex":
            body, kind, ext = library.export_bibtex(st, tag), "application/x-bibtex; charset=utf-8", "bib"
        else:
            raise ServiceError(400, "format: json or bibtex")
    disposition = f'attachment; filename="paperdex-library.{ext}"'
    return Response(body, media_type=kind, headers={"Content-Disposition": disposition})


@router.post("/api/library/import", include_in_schema=False)
async def api_import(request: Request) -> Response:
    data = await _written(request, _json)
    with _writer(request) as st:
        return JSONResponse(library.import_json(st, data))

"""The library on the web: sign-in, tags, saved searches, "not interested", related work and
the "for you" page; every write goes through :mod:`paperdex.web.views.auth`. Their JSON API is
views/library_api.py, their feeds views/feeds.py."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from paperdex import service
from paperdex.discover import library
from paperdex.discover import recommend as R
from paperdex.messages import message
from paperdex.search import URL_NAMES, Filters
from paperdex.service import ServiceError
from paperdex.store import Store
from paperdex.web.views.auth import form_of, writer, written
from paperdex.web.views.base import COOKIE, discover_page, lang_of, page_window, pool_of, url_with

RECS_PER_PAGE = 20  # a tag page's recommendations
FOR_YOU_PER_PAGE = 50  # papers a page of /for-you lists

router = APIRouter()


def back_to(form: dict[str, Any], default: str) -> str:
    """Where a form returns to: a path on this site only."""
    nxt = str(form.get("next") or "")
    return nxt if nxt.startswith("/") and not nxt.startswith("//") and "\\" not in nxt else default


def search_url(ss: library.SavedSearch) -> str:
    return "/?" + urlencode({"q": ss.query, **{k: v for k, v in ss.params.items() if k != "lang"}})


# --- the library page, sign-in -------------------------------------------------------------------
@router.get("/library", response_class=HTMLResponse, include_in_schema=False)
def library_page(request: Request) -> Response:
    pool = pool_of(request)
    saved = [(ss, nm and nm.count) for ss, nm in service.saved_searches(pool)]
    with pool.reader() as st:
        tags = library.tags(st)
        n_dismissed = len(library.dismissed(st))
    nxt = back_to({"next": request.query_params.get("next", "")}, "")
    return discover_page(request, "discover_library.html", tags=tags, saved=saved, n_dismissed=n_dismissed, next=nxt)


@router.post("/library/login", include_in_schema=False)
async def login(request: Request) -> Response:
    form = await form_of(request)
    tok = (form.get("token") or "").strip()
    with pool_of(request).reader() as st:
        rec = library.check_token(st, tok)
    if rec is None:
        raise ServiceError(401, message("token_not_valid"))
    resp = RedirectResponse(back_to(form, "/library"), status_code=303)
    secure = request.url.scheme == "https"
    resp.set_cookie(COOKIE, tok, max_age=180 * 86400, httponly=True, samesite="strict", secure=secure, path="/")
    return resp


@router.post("/library/logout", include_in_schema=False)
async def logout(request: Request) -> Response:
    await written(request)
    resp = RedirectResponse("/library", status_code=303)
    resp.delete_cookie(COOKIE, path="/")
    return resp


# --- tags ----------------------------------------------------------------------------------------
@router.get("/tag/{name}", response_class=HTMLResponse, include_in_schema=False)
def tag_page(request: Request, name: str, page: int = 1) -> Response:
    """A tag's papers and a page of its recommendations: page 0 is the service's 400, a page past
    the last says so with a link to it (it had been read as page 1, or as page 10)."""
    pool = pool_of(request)
    with pool.reader() as st:
        tag = library.get_tag(st, name)
        ids = library.tag_papers(st, tag.name)
        got = {i: st.get(i) for i in ids}
    papers = [p for p in got.values() if p is not None]
    missing = [i for i, p in got.items() if p is None]  # kept by an import until they are ingested
    recs = service.recommend(pool, tag.name, RECS_PER_PAGE, min(page, service.MAX_RECOMMEND_PAGE))
    pages = max(1, min(service.MAX_RECOMMEND_PAGE, -(-recs.candidates // RECS_PER_PAGE)))
    if page > pages:
        recs.items = []
    window = page_window(min(page, pages), pages)
    ctx: dict[str, Any] = {"tag": tag, "papers": papers, "missing": missing, "recs": recs, "page": page}
    ctx |= {"pages": pages, "window": window}
    return discover_page(request, "discover_tag.html", **ctx)


@router.get("/save/{pid:path}", response_class=HTMLResponse, include_in_schema=False)
def save_page(request: Request, pid: str, next: str = "") -> Response:
    """The "save to a tag" form of one paper (the cards' save link without script)."""
    with pool_of(request).reader() as st:
        found, _ = library.paper_ids(st, [pid])
        p = st.get(found[0]) if found else None
        if p is None:
            raise ServiceError(404, message("no_paper_in_store", id=pid[:80]))
        tags, paper_tags = library.tags(st), library.tags_of(st, p.id)
    back = back_to({"next": next}, "")
    return discover_page(request, "discover_save.html", paper=p, tags=tags, paper_tags=paper_tags, next=back)


FormWrite = Callable[[Store, dict[str, str], Request], str]


def form_write(path: str) -> Callable[[FormWrite], FormWrite]:
    """A form that writes (POST `path`): the token and the CSRF value checked, a writable store
    for the handler, which returns where the browser goes next (a 303)."""

    def register(write: FormWrite) -> FormWrite:
        @router.post(path, include_in_schema=False)
        async def handle(request: Request) -> Response:
            form = await written(request)
            with writer(request) as st:
                to = write(st, form, request)
            return RedirectResponse(to, status_code=303)

        return write

    return register


def _with(back: str, param: str) -> str:
    return f"{back}{'&' if '?' in back else '?'}{param}"


@form_write("/library/tags/add")
def form_add(st: Store, form: dict[str, str], request: Request) -> str:
    name = (form.get("new_tag") or "").strip() or (form.get("tag") or "")
    library.add_to_tag(st, name, [form.get("id") or ""])
    return back_to(form, f"/tag/{quote(library.tag_name(name), safe='')}")


@form_write("/library/tags/remove")
def form_remove(st: Store, form: dict[str, str], request: Request) -> str:
    library.remove_from_tag(st, form.get("tag") or "", [form.get("id") or ""])
    return back_to(form, "/library")


@form_write("/library/tags/delete")
def form_delete_tag(st: Store, form: dict[str, str], request: Request) -> str:
    library.delete_tag(st, form.get("tag") or "")
    return "/library"


@form_write("/library/dismiss")
def form_dismiss(st: Store, form: dict[str, str], request: Request) -> str:
    pid = form.get("id") or ""
    library.dismiss(st, [pid])
    back = back_to(form, "")  # the page it came from offers to undo it
    return _with(back, f"dismissed={quote(pid, safe='')}") if back else "/library"


@form_write("/library/undismiss")
def form_undismiss(st: Store, form: dict[str, str], request: Request) -> str:
    """Undo "Not interested": the paper may be recommended again."""
    library.undismiss(st, [form.get("id") or ""])
    return _with(back_to(form, "/library"), "undone=1")


@form_write("/library/tags/rename")
def form_rename_tag(st: Store, form: dict[str, str], request: Request) -> str:
    new = (form.get("new_name") or "").strip()
    library.rename_tag(st, form.get("tag") or "", new)
    return f"/tag/{quote(library.tag_name(new), safe='')}"


# --- saved searches ------------------------------------------------------------------------------
@form_write("/library/saved")
def form_save_search(st: Store, form: dict[str, str], request: Request) -> str:
    params: dict[str, Any] = {k: form.get(k) for k in library.SAVED_PARAMS}
    params["lang"] = params.get("lang") or lang_of(request)
    name, query = form.get("name") or form.get("q") or "", form.get("q") or ""
    ss = library.save_search(st, name, query, params, how=message("saved_replace_web"))
    back = back_to(form, "")
    return _with(back, f"saved_search={ss.id}") if back else f"/saved/{ss.id}"


@router.get("/saved/{key}", response_class=HTMLResponse, include_in_schema=False)
def saved_page(request: Request, key: str) -> Response:
    nm = service.new_matches(pool_of(request), key, 50)
    return discover_page(request, "discover_saved.html", ss=nm.saved, nm=nm, search_url=search_url(nm.saved))


@form_write("/library/saved/{key}/seen")
def form_seen(st: Store, form: dict[str, str], request: Request) -> str:
    return back_to(form, f"/saved/{library.mark_seen(st, request.path_params['key']).id}")


@form_write("/library/saved/{key}/delete")
def form_delete_saved(st: Store, form: dict[str, str], request: Request) -> str:
    library.delete_saved(st, request.path_params["key"])
    return "/library"


# --- related work --------------------------------------------------------------------------------
def related(request: Request, text: str, k: int, params: dict[str, Any]) -> R.Related:
    got = {f: params.get(URL_NAMES.get(f, f)) or None for f in ("category", "date_from", "date_to")}
    return service.related(pool_of(request), text, k, Filters(**got))


@router.get("/related", response_class=HTMLResponse, include_in_schema=False)
def related_form(request: Request) -> Response:
    return discover_page(request, "discover_related.html", res=None, text="")


@router.post("/related", response_class=HTMLResponse, include_in_schema=False)
async def related_page(request: Request) -> Response:
    form = await form_of(request)
    # the model and the searcher block: in a worker thread, never on the event loop (every request's)
    return await run_in_threadpool(related_view, request, form.get("text") or "", form)


def related_view(request: Request, text: str, params: dict[str, Any]) -> Response:
    """Related work for a pasted text: this page, and what the search box shows for a passage."""
    res = related(request, text, 20, params) if text.strip() else None
    return discover_page(request, "discover_related.html", res=res, text=text)


# --- "for you": a day's papers by the user's tags -----------------------------------------------
@router.get("/for-you", response_class=HTMLResponse, include_in_schema=False)
def for_you_page(request: Request, day: str | None = None, page: int = 1) -> Response:
    """A page of the day for you, with the daily page's pager; its links name the day, so page 2
    is of the day page 1 showed even after a newer day came in."""
    d, ranked = service.for_you(pool_of(request), day, FOR_YOU_PER_PAGE, page)
    window = page_window(min(d.page, d.pages), d.pages)
    links = partial(url_with, request, day=d.day)
    pinned = {"day": d.day} if d.day else None
    return discover_page(
        request, "discover_foryou.html", pinned=pinned, d=d, ranked=ranked, window=window, pages_url=links
    )

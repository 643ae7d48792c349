"""Who may write, and the body of a write: a bearer token, or the sign-in cookie with its CSRF
value (docs/recommendations.md). Writes open a writable store for the one request (the
searchers' stores are read-only).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import Request

from paperdex.messages import message
from paperdex.service import ServiceError
from paperdex.store import Store, StoreError
from paperdex.web.limits import cross_site, parse_json
from paperdex.web.views.base import csrf_for, pool_of, presented, session_of

BEARER = {"WWW-Authenticate": "Bearer"}


def require_writer(request: Request, form: dict[str, Any] | None = None) -> dict[str, Any]:
    """The token allowing this write, or ServiceError 401 (none, or not valid) / 403 (no CSRF value, cross-site)."""
    rec = _token(request)
    _check_csrf(request, rec, form)
    return rec


def _token(request: Request) -> dict[str, Any]:
    """The valid token this request presents, or ServiceError 401: checked before the body
    of a write is read, so a request without one costs nothing but its headers."""
    if not presented(request)[0]:
        raise ServiceError(401, message("write_needs_token"), BEARER)
    rec = session_of(request)
    if rec is None:
        raise ServiceError(401, message("token_not_valid"), BEARER)
    return rec


def _check_csrf(request: Request, rec: dict[str, Any], form: dict[str, Any] | None) -> None:
    if presented(request)[1] == "cookie":
        sent = (form or {}).get("csrf") or request.headers.get("x-csrf-token") or ""
        # cross_site: refused by limits.admit already, checked again with the token it guards
        if not hmac.compare_digest(str(sent), csrf_for(rec["hash"])) or cross_site(request.scope):
            raise ServiceError(403, message("csrf_failed"))


async def form_of(request: Request) -> dict[str, Any]:
    return {k: v for k, v in (await request.form()).items() if isinstance(v, str)}


async def json_of(request: Request) -> dict[str, Any]:
    """A JSON object body, sent as application/json: a no-cors `text/plain` POST from another
    site's page (which needs no CORS preflight) is refused before its body is read."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json" and not (ctype.startswith("application/") and ctype.endswith("+json")):
        raise ServiceError(415, message("body_not_json"))
    try:
        data = parse_json(await request.body())
    except ValueError as e:
        raise ServiceError(400, message("body_not_object_because", reason=str(e))) from None
    if not isinstance(data, dict):
        raise ServiceError(400, message("body_not_object"))
    return data


async def written(request: Request, read: Callable[[Request], Awaitable[dict[str, Any]]] = form_of) -> dict[str, Any]:
    """The body of a write (`read`: json_of or form_of): the token checked before it is read, the CSRF after."""
    rec = _token(request)
    body = await read(request)
    _check_csrf(request, rec, body)
    return body


@contextmanager
def writer(request: Request, library: bool = True) -> Iterator[Store]:
    """A writable store for one request (for the `library`, or another write); a 503 when it cannot be opened."""
    try:
        store = Store(pool_of(request).data_dir)
    except StoreError as e:
        raise ServiceError(503, message("cannot_write_library" if library else "cannot_write", reason=str(e))) from None
    with store:
        yield store

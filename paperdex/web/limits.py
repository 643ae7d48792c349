"""What a request may cost before the app does any work for it: :func:`admit` (the outer ASGI
layer) answers only the allowed Host names, refuses cross-site requests, tokens in URLs and
bodies over their limit before a byte is read, and records the client's address for the
searchers' queue; :func:`check_path` bounds path parameters, :func:`parse_json` a JSON body's
depth before it is parsed. The bounds and why: docs/request-costs.md.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request

from paperdex.discover.library import row_number
from paperdex.messages import message
from paperdex.paper import MAX_ID
from paperdex.service import CLIENT
from paperdex.web.redact import secret_in_query

MAX_BODY = 1 << 20  # bytes of a request body: a pasted text (20,000 characters), a form, a list of ids
BODY_LIMITS = {"/api/library/import": 32 << 20}  # a library export being imported back
EXEMPT = ("/static/", "/favicon.ico")  # what a page on another site may embed: it costs nothing
# The longest path parameter: well over the longest paper id (with `arXiv:` and a version), tag or category
MAX_PATH_PARAM = 2 * MAX_ID + 100
ROW_PARAMS = ("key",)  # path parameters naming a row (a saved search) by number when all digits (row_number)
MAX_JSON_DEPTH = 32  # of a request body; the deepest a view takes is a library import's, 4
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
# A Host header (RFC 9110 7.2): a reg-name or an IPv4 address, or an IPv6 address in brackets,
# and an optional port. Nothing else: no user info, path, second port or spaces.
_HOST = re.compile(r"(?:\[(?P<ip6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_](?:[a-z0-9_.\-]*)))(?::(?P<port>[0-9]{1,5}))?")


def header(scope, name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == name), None)


def cross_site(scope) -> bool:
    """True when a browser says this request comes from another site (``same-site`` too: another origin)
    and it is not a plain navigation to a page (a link followed, a URL typed)."""
    site = header(scope, b"sec-fetch-site")
    method = scope.get("method", "GET")
    if site is not None:
        if site in ("same-origin", "none"):
            return False
        dest = header(scope, b"sec-fetch-dest")
        navigation = header(scope, b"sec-fetch-mode") == "navigate" and dest in ("document", None)
        return not (navigation and method in ("GET", "HEAD"))
    origin = header(scope, b"origin")
    if not origin or origin == "null":  # no-referrer pages send "null" for their own forms
        return False
    return urlsplit(origin).netloc.lower() != (header(scope, b"host") or "").lower()


def host_name(value: str) -> str | None:
    """The name of a Host header without its port (`[::1]:8000` -> `::1`), lower-cased; None
    when it is anything but a name and a port (`localhost:80@evil.example` is not `localhost`)."""
    m = _HOST.fullmatch(value.strip().lower())
    if m is None or (m["port"] is not None and int(m["port"]) > 65535):
        return None
    return m["ip6"] or m["name"]


async def check_path(request: Request) -> None:
    """Every route's path parameters, checked before the endpoint runs: at most MAX_PATH_PARAM
    characters (400), a row number a row can carry (else 404). Async: a thread would cost more."""
    for name, value in request.path_params.items():
        if not isinstance(value, str):
            continue
        if len(value) > MAX_PATH_PARAM:
            raise HTTPException(400, message("path_param_long", name=name, limit=MAX_PATH_PARAM))
        number = value.strip()
        if name in ROW_PARAMS and row_number(number) == 0:
            raise HTTPException(404, message("no_saved_search", key=number[:80]))


def parse_json(body: bytes) -> Any:
    """A request body's JSON, or ValueError (a 400's message) when it is not UTF-8, is nested
    deeper than MAX_JSON_DEPTH (counted before parsing: in UTF-8 no byte of a multi-byte
    character is a quote or a bracket), is not JSON, or holds NaN or Infinity."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(message("body_not_utf8")) from None
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKET)  # outside strings only
    if brackets and max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) > MAX_JSON_DEPTH:
        raise ValueError(message("body_too_deep", limit=MAX_JSON_DEPTH))

    def constant(name: str) -> Any:
        raise ValueError(message("not_json_value", name=name))

    try:
        return json.loads(text, parse_constant=constant)
    except RecursionError:  # not within MAX_JSON_DEPTH; a 400 all the same
        raise ValueError(message("body_nested_deep")) from None
    except ValueError as e:
        raise ValueError(message("body_not_valid_json", reason=str(e))) from None


async def admit(app, scope, receive, send, hosts: set[str] | None = None) -> None:
    """Run the ASGI `app` on an HTTP request that passes the module docstring's checks, else
    answer it here (outside FastAPI). `hosts`: the Host names answered (None: any)."""
    if hosts is not None and host_name(header(scope, b"host") or "") not in hosts:
        return await _refuse(scope, send, 400, message("host_not_allowed"), True)
    client = scope.get("client")
    CLIENT.set(client[0] if client else "local")
    path = scope.get("path", "")
    api = path.startswith("/api/") or path.endswith(".json")
    if secret_in_query(scope.get("query_string", b"")):
        return await _refuse(scope, send, 400, message("token_in_url"), api)
    if not path.startswith(EXEMPT) and cross_site(scope):
        return await _refuse(scope, send, 403, message("cross_site"), api)
    limit = BODY_LIMITS.get(path, MAX_BODY)
    declared = header(scope, b"content-length")
    if declared is not None:
        try:
            too_large = int(declared) > limit
        except ValueError:
            return await _refuse(scope, send, 400, message("content_length_nan"), api)
        if too_large:
            return await _refuse(scope, send, 413, message("body_too_large", limit=limit), api)
    seen = 0

    async def bounded_receive():
        nonlocal seen
        event = await receive()
        if event["type"] == "http.request":
            seen += len(event.get("body", b""))
            if seen > limit:  # FastAPI's handler turns it into the 413 page or JSON
                raise HTTPException(413, message("body_too_large", limit=limit))
        return event

    await app(scope, bounded_receive, send)


async def _refuse(scope, send, status: int, message: str, api: bool) -> None:
    """A short answer without the app: JSON for the API, plain text for pages."""
    body = (json.dumps({"error": {"status": status, "message": message}}) if api else f"{status}: {message}\n").encode()
    ctype = b"application/json" if api else b"text/plain; charset=utf-8"
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

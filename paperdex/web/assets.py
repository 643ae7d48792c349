"""The static files' URLs and how long a browser keeps them.

Every page links its stylesheet and scripts as ``/static/NAME?v=VERSION``, the version being the
first hex digits of the file's SHA-256. A URL that carries the file's current version can never
name other bytes, so it is answered with ``Cache-Control: public, max-age=31536000, immutable``:
a researcher's browser asks for style.css, app.js and KaTeX (75 KB gzipped) once per release
and not again on each of the dozens of pages of a morning, not even for a 304. A new release
changes the version, hence the URL, so nobody keeps an old stylesheet against new markup.

A URL without the version, or with another one (a page cached before an upgrade, a bookmark,
another tool), gets ``no-cache``: the browser may store it but must revalidate with the ETag
each time, which is a 304 without a body while the file is unchanged. Marking those immutable
would pin an old file for a year; serving them with no cache header at all (as before) left
the choice to each browser's heuristics, which keep a file for a tenth of its age unasked.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

STATIC = Path(__file__).parent / "static"
FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@cache
def version(name: str) -> str:
    """The first 10 hex digits of the SHA-256 of static/NAME (read once per process: the files
    change with a release, which restarts the server)."""
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:10]


def url(name: str) -> str:
    """The versioned URL of static/NAME, which the browser may keep for a year."""
    return f"/static/{name}?v={version(name)}"


class StaticAssets(StaticFiles):
    """StaticFiles (ETag, Last-Modified, 304s) with a Cache-Control header: a year and
    immutable for a URL carrying the file's current version, revalidation otherwise."""

    def file_response(self, full_path, stat_result, scope: Scope, status_code: int = 200) -> Response:
        resp = super().file_response(full_path, stat_result, scope, status_code)
        name = self.get_path(scope).replace("\\", "/")  # relative to static/, as served
        wanted = ""
        for pair in scope.get("query_string", b"").decode("latin-1").split("&"):
            if pair.startswith("v="):
                wanted = pair[2:]
        try:
            current = version(name)
        except (OSError, ValueError):
            current = None
        resp.headers["cache-control"] = FOREVER if wanted and wanted == current else REVALIDATE
        return resp

"""The static files' URLs and how long a browser keeps them: a URL carrying the file's current
version is immutable for a year, any other is revalidated; why: docs/web.md.
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
    """The first 10 hex digits of static/NAME's SHA-256, read once per process (a release restarts the server)."""
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:10]


def url(name: str) -> str:
    """The versioned URL of static/NAME, which the browser may keep for a year."""
    return f"/static/{name}?v={version(name)}"


class StaticAssets(StaticFiles):
    """StaticFiles (ETag, Last-Modified, 304s) with the Cache-Control header the module docstring says."""

    def file_response(self, full_path, stat_result, scope: Scope, status_code: int = 200) -> Response:
        resp = super().file_response(full_path, stat_result, scope, status_code)
        name = self.get_path(scope).replace("\\", "/")  # relative to static/, as served
        pairs = scope.get("query_string", b"").decode("latin-1").split("&")
        wanted = next((p[2:] for p in reversed(pairs) if p.startswith("v=")), "")
        try:
            current = version(name)
        except (OSError, ValueError):
            current = None
        resp.headers["cache-control"] = FOREVER if wanted and wanted == current else REVALIDATE
        return resp

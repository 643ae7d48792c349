"""The one rule for a secret in a URL, and the access-log filter that applies it: every part of
a URL is decoded (percent-escapes and ``+`` until nothing changes, then NFKC) before it is
matched without regard to case, since uvicorn logs the query string as the client sent it; a
part still changing after :data:`ROUNDS` decodings is secret. Why: docs/request-costs.md.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from urllib.parse import unquote_plus

# Query parameter names that carry a credential, whatever their value (compared decoded, lower case)
TOKEN_PARAMS = frozenset({"token", "access_token", "api_key", "apikey", "auth", "authorization", "bearer"})
# library.TOKEN_PREFIX + secrets.token_urlsafe, in any case (one typed or folded to upper case)
TOKEN_VALUE = re.compile(r"pdx_[A-Za-z0-9_\-]{16,}", re.IGNORECASE)
ROUNDS = 8  # decodings of one part at most; one still changing after them is redacted whole
REDACTED = "REDACTED"
_SEPARATORS = re.compile(r"([&;])")  # between query parameters (';' too: some servers split there)


def decoded(text: str) -> str | None:
    """`text` with percent-escapes and '+' undone until stable, in NFKC; None if still changing after ROUNDS."""
    for _ in range(ROUNDS):
        plain = unquote_plus(text)
        if plain == text:
            return unicodedata.normalize("NFKC", text)
        text = plain
    return None


def secret(name: str, value: str = "") -> bool:
    """True when a query parameter (or a path segment, as `name`) carries a secret."""
    key, val = decoded(name), decoded(value)
    if key is None or val is None:
        return True
    return key.strip().lower() in TOKEN_PARAMS or bool(TOKEN_VALUE.search(key) or TOKEN_VALUE.search(val))


def secret_in_query(query: str | bytes) -> bool:
    """True when any parameter of a raw query string carries a secret (the refusal's test)."""
    text = query.decode("latin-1") if isinstance(query, bytes) else query
    return any(secret(*item.partition("=")[::2]) for item in _SEPARATORS.split(text) if item not in ("&", ";"))


def redact(target: str) -> str:
    """A request target (path, '?', query string) with every secret part replaced: a path
    segment whole, a parameter's value (or the parameter whole when its name is the secret)."""
    path, q, query = target.partition("?")
    segments = [REDACTED if secret(s) else s for s in path.split("/")]
    items = []
    for item in _SEPARATORS.split(query) if q else ():
        name, eq, value = item.partition("=")
        if item in ("&", ";") or not secret(name, value):
            items.append(item)
        elif (key := decoded(name)) is None or TOKEN_VALUE.search(key):  # a token as a parameter's name
            items.append(REDACTED)
        else:  # a credential's name (kept: it says what was sent), or a value holding a token
            items.append(name + eq + REDACTED)
    return "/".join(segments) + q + "".join(items)


class RedactTokens(logging.Filter):
    """Access-log lines without a secret: uvicorn logs each request's target (args: client,
    method, target, version, status); every secret part of it is replaced by REDACTED."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact(args[2]), *args[3:])
        return True

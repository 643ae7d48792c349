"""The links a card or a paper page makes to other searches, and the one rule for links to other
sites in the JSON answers, as in the pages: only http(s) URLs leave (:func:`safe_url`)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from paperdex.paper import CATEGORY_TYPED
from paperdex.text.latex import safe_url

# What the query language's cat: accepts (cs, cs.LG); a stored category outside it (an ACM
# class list, junk from a source) is shown as text, not as a filter link that would be a 400.
_FILTERABLE = re.compile(CATEGORY_TYPED)
# The keys of a source's extra fields whose values are links (url, project_page, github_repo...)
_URL_KEY = re.compile(
    r"(?:^|[_\-])(?:url|uri|href|link|links|page|repo|homepage|website|site|thumbnail|image|src|pdf)$", re.IGNORECASE
)
# A string under any other key that a browser would run as a link: what is left out of free text.
_SCRIPT = re.compile(r"(?:javascript|vbscript):", re.IGNORECASE)
# What a browser removes from a URL before it reads its scheme: tabs and newlines anywhere, C0
# controls and spaces around it (the URL Standard's basic URL parser).
_BROWSER_DROPS = re.compile(r"[\t\n\r]")
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_DROP = object()  # what safe_extra leaves out


def filterable(category: str) -> bool:
    return bool(_FILTERABLE.fullmatch(category or ""))


def search_link(query: str) -> str:
    return "/?" + urlencode({"q": query})


def quoted(field: str, value: str) -> str:
    """A fielded query for a name or label: au:"Ada Lovelace" (quotes inside dropped)."""
    return f'{field}:"{value.replace(chr(34), " ").strip()}"'


def _script(value: str) -> bool:
    return bool(_SCRIPT.match(_BROWSER_DROPS.sub("", value).lstrip(_C0_AND_SPACE)))


def safe_extra(value: Any, url: bool = False) -> Any:
    """A paper's `extra` (a source's own fields, any JSON) without links that are not http(s): a
    string under a link key (_URL_KEY) must pass safe_url, a `javascript:` one goes under any key."""
    if isinstance(value, dict):
        kept = {k: safe_extra(v, bool(_URL_KEY.search(str(k)))) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not _DROP}
    if isinstance(value, list):
        return [x for x in (safe_extra(v, url) for v in value) if x is not _DROP]
    if isinstance(value, str) and ((url and not safe_url(value)) or _script(value)):
        return _DROP
    return value


def safe_paper(d: dict[str, Any]) -> dict[str, Any]:
    """A paper's JSON (Paper.to_dict) with its links filtered exactly as the HTML pages filter
    them: only http(s) URLs, in `links`, in the url fields and in `extra` alike."""
    d["links"] = {k: v for k, v in (d.get("links") or {}).items() if safe_url(v)}
    for k in ("abs_url", "pdf_url", "code_url"):
        if d.get(k) and not safe_url(d[k]):
            d[k] = None
    if isinstance(d.get("extra"), dict):
        d["extra"] = safe_extra(d["extra"])
    return d

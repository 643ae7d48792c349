"""The links a card or a paper page makes to other searches, for web/app.py and web/discover.py alike
(both render the same card macros)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

# What the query language's cat: accepts (cs, cs.LG); a stored category outside it (an ACM
# class list, junk from a source) is shown as text, not as a filter link that would be a 400.
_FILTERABLE = re.compile(r"[A-Za-z\-]+(\.[A-Za-z\-]+)?")


def filterable(category: str) -> bool:
    return bool(_FILTERABLE.fullmatch(category or ""))


def search_link(query: str) -> str:
    return "/?" + urlencode({"q": query})


def quoted(field: str, value: str) -> str:
    """A fielded query for a name or label: au:"Ada Lovelace" (quotes inside dropped)."""
    return f'{field}:"{value.replace(chr(34), " ").strip()}"'

"""A Zotero library as papers and tags, for the library's tag import: its CSL-JSON export and
its web API (v3), both read by one CSL reader (BibTeX exports go through ``sources.bibtex``).
The API is read through paperdex's HttpClient, not pyzotero, which cannot be installed beside
bibtexparser 2 (docs/sources.md, "Zotero").
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from paperdex.paper import ARXIV_ID_SHAPE, Paper, RecordError, paper_from_dict
from paperdex.sources.http import HttpClient, parse_retry_after
from paperdex.sources.registry import Parsed

SOURCE = "zotero"
API = "https://api.zotero.org"
PAGE = 100  # the API's largest page
# where Zotero writes a preprint's arXiv id: number/archive_location "arXiv:2306.13455", note
# "arXiv:2306.13455 [cs]" (older "arXiv: 1706.03762"), DOI 10.48550/arXiv.2306.13455, the URL
_ARXIV = re.compile(rf"(?:arxiv\.org/(?:abs|pdf)/|(?i:arxiv)[.:]\s*)({ARXIV_ID_SHAPE})(?:v\d+)?(?![\d.])")
_ARXIV_FIELDS = ("number", "archive_location", "DOI", "URL", "note", "container-title")
_NOT_A_VENUE = re.compile(r"^\s*(?:arxiv|corr\s*$)", re.I)  # "arXiv:1706.03762 [cs]" (old Zotero)
_TAG = re.compile(r"</?(?:i|b|sup|sub|sc|span)\b[^>]*>")  # Zotero's rich-text title markup
_LIBRARY = re.compile(r"^(users|groups)/(\d+)$")
SKIPPED_TYPES = ("attachment", "note", "annotation")


class ZoteroError(ValueError):
    """A library that cannot be read; the message is one line fit to show (never the key)."""


def _s(item: dict[str, Any], key: str) -> str:
    v = item.get(key)
    return " ".join(str(v).split()) if isinstance(v, str | int) and not isinstance(v, bool) else ""


def _name(n: Any) -> str:
    if not isinstance(n, dict):
        return ""
    if lit := _s(n, "literal"):
        return lit
    parts = ("given", "dropping-particle", "non-dropping-particle", "family", "suffix")
    return " ".join(p for p in (_s(n, k) for k in parts) if p)


def _date(issued: Any) -> tuple[str | None, str | None]:
    """(first day of what is known, its precision "year"/"month" as BibTeX's): date-parts
    ``[[2024, "3", 5]]``, ``{"raw": "2024-03"}``, ``{"literal": "2024"}`` or a bare string."""
    parts: list[Any] = []
    if isinstance(issued, dict) and isinstance(dp := issued.get("date-parts"), list) and dp:
        parts = dp[0] if isinstance(dp[0], list) else []
    else:
        text = issued.get("raw") or issued.get("literal") if isinstance(issued, dict) else issued
        m = re.match(r"^\s*(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?", text) if isinstance(text, str) else None
        parts = [g for g in m.groups() if g] if m else []
    try:
        nums = [int(str(p)) for p in parts[:3]]
    except ValueError:
        return None, None
    if not nums or not 1000 <= nums[0] <= 2999:
        return None, None
    y, mo, d = (nums + [0, 0])[:3]
    if not 1 <= mo <= 12:
        return f"{y}-01-01", "year"
    try:
        return dt.date(y, mo, d).isoformat(), None
    except ValueError:  # no day, or none that exists (a 31 in February): the month is known
        return f"{y}-{mo:02d}-01", "month"


def _key(item: dict[str, Any]) -> str:
    """The item's Zotero key (its URI's last part) or Better BibTeX's citation key, fit for a link."""
    raw = _s(item, "id").rstrip("/").rsplit("/", 1)[-1]
    key = re.sub(r"[^\w.:\-]", "_", raw)[:100].strip("._:")
    return key or hashlib.sha1(_s(item, "title").encode()).hexdigest()[:12]


def csl_to_paper(item: Any) -> Paper:
    """One CSL-JSON item as a Paper under its arXiv id, else ``doi:DOI``, else ``zotero:KEY``;
    RecordError for no title or a field of the wrong shape."""
    if not isinstance(item, dict):
        raise RecordError("an item is not a JSON object")
    found = (_ARXIV.search(_s(item, f)) for f in _ARXIV_FIELDS)
    arxiv_id = next((m.group(1) for m in found if m), None)
    doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", _s(item, "DOI"), flags=re.I) or None
    if doi and arxiv_id and doi.lower().startswith("10.48550/"):
        doi = None  # arXiv's own DOI names the preprint, which the id already does
    venue = _s(item, "container-title") or _s(item, "event-title") or _s(item, "event")
    published, precision = _date(item.get("issued"))
    url = _s(item, "URL") or (f"https://doi.org/{doi}" if doi else "")
    authors = a if isinstance(a := item.get("author"), list) else []
    meta = {"key": _key(item), "type": _s(item, "type"), "date_precision": precision, "doi": doi}
    rec = {
        "id": arxiv_id or (f"doi:{doi.lower()}" if doi else f"{SOURCE}:{meta['key']}"),
        "title": _TAG.sub("", _s(item, "title")),
        "authors": [a for a in map(_name, authors) if a],
        "abstract": str(item.get("abstract") or "").strip(),
        "venue": None if _NOT_A_VENUE.match(venue) else venue or None,
        "published": published,
        "abs_url": None if arxiv_id else url or None,
        "extra": {SOURCE: {k: v for k, v in meta.items() if v}, **({"doi": doi} if doi else {})},
    }
    return paper_from_dict(rec, SOURCE)


def parse_csl(text: str, name: str = "<csl-json>") -> Parsed:
    """A CSL-JSON file: a list of items, or ``{"items": [...]}`` (the API's ``format=csljson``);
    ZoteroError for a file that is not one, an unreadable item skipped with its place and why."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ZoteroError(f"{name}: not JSON ({e})") from None
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ZoteroError(f"{name}: not CSL-JSON (expected a list of items, each an object)")
    out = Parsed()
    for i, item in enumerate(items, 1):
        try:
            out.papers.append(csl_to_paper(item))
        except RecordError as e:
            out.errors.append(f"{name}: item {i}: {e}; skipped")
    return out


def read_csl(path: str | Path) -> Parsed:
    path = Path(path)
    return parse_csl(path.read_text(encoding="utf-8"), path.name)


def is_csl_item(rec: Any) -> bool:
    """One JSON object that is a CSL-JSON item, not a paperdex record: CSL's `author` list of
    name objects, its `issued` date or its `container-title`, and no paperdex `authors`."""
    if not isinstance(rec, dict) or "authors" in rec:
        return False
    author = rec.get("author")
    named = isinstance(author, list) and any(isinstance(a, dict) for a in author)
    return named or isinstance(rec.get("issued"), dict) or "container-title" in rec


def is_csl(data: Any) -> bool:
    """A parsed JSON document that is CSL-JSON rather than a paperdex library export."""
    return isinstance(data, list) or (isinstance(data, dict) and isinstance(data.get("items"), list))


# --- the web API ------------------------------------------------------------------------------


class WebLibrary:
    """A user's or group's library on zotero.org, read page by page. The key goes in a header,
    never in a URL, so no error message or log line can carry it."""

    def __init__(self, library: str, api_key: str | None = None, http: HttpClient | None = None) -> None:
        m = _LIBRARY.match(library.strip().strip("/"))
        if not m:
            raise ZoteroError(f"a Zotero library is users/ID or groups/ID (the numeric ID), not {library[:60]!r}")
        self.prefix = f"{API}/{m.group(1)}/{m.group(2)}"
        self.http = http or HttpClient(min_interval=1.0)
        self.headers = {"Zotero-API-Version": "3", **({"Zotero-API-Key": api_key} if api_key else {})}

    def _pages(self, path: str, params: dict[str, Any]) -> Iterator[list[Any]]:
        url: str | None = f"{self.prefix}/{path}"
        query: dict[str, Any] | None = {**params, "limit": PAGE, "start": 0}
        while url:
            resp = self.http.get(url, query, headers=self.headers, accept=(401, 403, 404))
            if resp.status_code in (401, 403):
                raise ZoteroError(
                    f"Zotero refused to read {self.prefix[len(API) + 1 :]} (HTTP {resp.status_code}): "
                    "check the API key's access to this library"
                )
            if resp.status_code == 404:
                raise ZoteroError(f"Zotero has no {self.prefix[len(API) + 1 :]}/{path} (HTTP 404)")
            try:
                page = resp.json()
            except ValueError:
                raise ZoteroError(f"Zotero answered {path} with something not JSON") from None
            if not isinstance(page, list):
                raise ZoteroError(f"Zotero answered {path} with a {type(page).__name__}, not a list")
            yield page
            if wait := parse_retry_after(resp.headers.get("Backoff")):  # a pause the API asks for
                self.http.sleep(wait)
            url = resp.links.get("next", {}).get("url")  # followed only to the API: the key goes with it
            url = url if isinstance(url, str) and url.startswith(API + "/") else None
            query = None

    def collections(self) -> dict[str, str]:
        """Every collection's key -> name (subcollections too)."""
        rows = [c for page in self._pages("collections", {}) for c in page if isinstance(c, dict)]
        return {str(c.get("key")): _s(c.get("data") or {}, "name") or str(c.get("key")) for c in rows}

    def items(self, collection: str | None = None) -> Iterator[dict[str, Any]]:
        """Top-level items with their CSL-JSON and Zotero data, but attachments and notes."""
        path = f"collections/{collection}/items/top" if collection else "items/top"
        for page in self._pages(path, {"format": "json", "include": "data,csljson", "itemType": "-attachment"}):
            for item in page:
                data = item.get("data") if isinstance(item, dict) else None
                if isinstance(data, dict) and data.get("itemType") not in SKIPPED_TYPES:
                    yield item


def read_library(
    lib: WebLibrary, collection: str | None = None, tag: str | None = None
) -> tuple[list[tuple[Paper, list[str]]], list[str]]:
    """(paper, its tags) for each item of the library or of one collection (key or name), and
    the items skipped: each collection is a tag (no collection: ``zotero``), or all go in ``tag``."""
    names = lib.collections()
    key = None
    if collection:
        low = collection.lower()
        key = collection if collection in names else next((k for k, n in names.items() if n.lower() == low), None)
        if key is None:
            raise ZoteroError(f"no collection {collection[:60]!r} in this library ({len(names)} collections)")
    out, errors = [], []
    for i, item in enumerate(lib.items(key)):
        try:
            paper = csl_to_paper(item.get("csljson"))
        except RecordError as e:
            errors.append(f"zotero item {str(item.get('key'))[:20]} (#{i + 1}): {e}; skipped")
            continue
        keys = [key] if key else item["data"].get("collections") or []
        # a collection's name as a tag name can be: no / or \, at most 64 characters
        tags = [re.sub(r"[/\\]", "-", names.get(k, k))[:64] for k in keys]
        out.append((paper, [tag] if tag else tags or [SOURCE]))
    return out, errors


def api_key(variable: str | None, environ: Mapping[str, str]) -> str | None:
    """The key in the variable the user named (the command's `environ`); None: a public library."""
    if not variable:
        return None
    key = environ.get(variable, "").strip()
    if not key:
        raise ZoteroError(f"${variable} is empty or unset: put a Zotero API key in it (zotero.org/settings/keys)")
    return key

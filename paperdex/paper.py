"""The one paper record every source produces and every interface shows.

Text is kept exactly as the source gave it (LaTeX and all); :func:`index_text` is the only
place it is normalised, and only for the search index.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

# Plain words for the tokenizer (`$\beta$-VAE` -> `beta -VAE`): the index's callers import it by this name
from paperdex.messages import message
from paperdex.text.latex import index_text as index_text

OPENREVIEW_SITE = "https://openreview.net"
# An arXiv id without its version: new style (2501.00001) or old (hep-th/9901002, math.GT/0309136)
ARXIV_ID_SHAPE = r"\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7}"
ARXIV_ID = re.compile(rf"^({ARXIV_ID_SHAPE})(v\d+)?$")
# The category grammar, in one place: an arXiv category as a record carries it, an archive in lower
# case (cs, hep-th, q-bio), optionally a subject class (cs.LG, cond-mat.mes-hall). What BibTeX import,
# facets, daily chips and completions take; the MSC (68T10) and ACM (I.2.6) classes are not of it.
CATEGORY = re.compile(r"^[a-z][a-z\-]*(?:\.[A-Za-z][A-Za-z\-]*)?$")
# The same as typed after `cat:` (a pattern to embed; also web/links.py's and sources/arxiv.py's):
# any case, and wider (a part may begin with "-"): a value that names no category matches no paper.
CATEGORY_TYPED = r"[A-Za-z\-]+(?:\.[A-Za-z\-]+)?"


def category_asked(category: str, asked: str) -> bool:
    """Whether a paper's `category` is one `cat:ASKED` asks for, the rule in one place (the index's
    `category_docs`, the cards' order): ASKED itself in any case (cs.LG); for an archive (cs) any
    of its categories; for a prefix (cs.C*, c*) any category beginning with it, as arXiv expands
    one. An archive and a prefix read arXiv categories (CATEGORY) only: `cat:c*` matched the ACM
    classes "C.3; C.4" some records carry, and `cat:cs.C*` nothing."""
    c, a = category.lower(), asked.strip().lower()
    if "." in a and not a.endswith("*"):
        return c == a
    if CATEGORY.match(category) is None:
        return False
    return c.startswith(a[:-1]) if a.endswith("*") else c == a or c.startswith(a + ".")


class RecordError(ValueError):
    """A record cannot become a Paper; the message says which field and why."""


@dataclass
class Paper:
    id: str
    title: str
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    categories: list[str] = field(default_factory=list)
    venue: str | None = None
    venue_area: str | None = None
    published: str | None = None
    listed: str | None = None
    updated: str | None = None
    abs_url: str | None = None
    pdf_url: str | None = None
    code_url: str | None = None
    comment: str | None = None
    authors_truncated: bool = False
    sources: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def date(self) -> str | None:
        """The date a reader would call the paper's date: first listed, else published."""
        return self.listed or self.published or self.updated

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    @property
    def is_arxiv(self) -> bool:
        return bool(ARXIV_ID.match(self.id))

    def slot(self, name: str) -> dict[str, Any]:
        """``extra[name]`` when it is an object (a source's fields, the merge's), else {}."""
        return found if isinstance(found := self.extra.get(name), dict) else {}

    def links(self) -> dict[str, str]:
        """abs, pdf, code, and the OpenReview forum of a paper OpenReview knows: a preprint
        merged with its venue record keeps arXiv's abstract and PDF links (merge.py), and the
        forum (``extra["openreview"]``'s ``url``, else its ``forum`` id) is a link of its own."""
        arxiv = self.is_arxiv
        o = self.slot("openreview")
        url, forum = o.get("url"), o.get("forum")
        if not (isinstance(url, str) and url.startswith(OPENREVIEW_SITE + "/forum?id=")):
            ok = isinstance(forum, str) and re.fullmatch(r"[A-Za-z0-9_\-]+", forum)
            url = f"{OPENREVIEW_SITE}/forum?id={forum}" if ok else None
        links = {
            "abs": self.abs_url or (f"https://arxiv.org/abs/{self.id}" if arxiv else None),
            "pdf": self.pdf_url or (f"https://arxiv.org/pdf/{self.id}" if arxiv else None),
            "code": self.code_url,
            "openreview": url,
        }
        return {k: v for k, v in links.items() if v}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["date"] = self.date
        d["links"] = self.links()
        return d

    def content_hash(self) -> str:
        """Changes whenever anything a user could see changes; drives upsert accounting."""
        blob = json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)
        return hashlib.sha1(blob.encode()).hexdigest()

    def text_hash(self) -> str:
        """Changes only when the embedded text changes, so a vector is kept across edits of
        other fields (a new venue, a comment) and dropped when title or abstract change."""
        return hashlib.sha1(f"{self.title}\n{self.abstract}".encode()).hexdigest()


_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.+\-Z]*)?$")  # a time after the day is dropped
_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?$")  # a year or a month: "published" only
_NOT_EXTRA = {*Paper.__dataclass_fields__, "date", "links", "summary"}  # to_dict's and the corpus format's

# Bounds for what one record may hold, far above real metadata (docs/code-notes.md): text over a
# bound is cut with a note, structure over one refused, except an author list (real ones run to
# thousands): up to MAX_AUTHORS all are kept, every one searchable with au:; past it, cut and marked.
MAX_ID = 200
MAX_TITLE = 1_000
MAX_ABSTRACT = 20_000
MAX_SHORT = 1_000  # venue, area, comment, an author name, a source name
MAX_URL = 2_000
MAX_LIST = 2_000  # categories, sources
MAX_AUTHORS = 20_000  # four times the longest real list
MAX_CATEGORY = 300  # real ones include ACM class lists: "I.2.6; C.1.4; D.1.3"
MAX_EXTRA_BYTES = 100_000
MAX_DEPTH = 8
MAX_INT = 2**53  # beyond this a JSON number is not exact in JavaScript (or in a float)
_CONTROL_IN_ID = re.compile(r"[\x00-\x20\x7f-\x9f]")


def _check_json_value(v: Any, where: str, depth: int = 0) -> None:
    """NaN/Infinity, numbers no client can read exactly, unpaired surrogates and deep nesting are
    refused: each would make every later answer that includes the record fail or lie."""
    if depth > MAX_DEPTH:
        raise RecordError(f"'{where}' is nested more than {MAX_DEPTH} levels deep")
    if isinstance(v, bool) or v is None:
        return
    if isinstance(v, int):
        if abs(v) > MAX_INT:
            raise RecordError(f"'{where}' is a number out of range ({str(v)[:20]}…)")
    elif isinstance(v, float):
        if not math.isfinite(v):
            raise RecordError(f"'{where}' is {v!r}, not a number JSON allows")
    elif isinstance(v, str):
        _check_str(v, where)
    elif isinstance(v, dict):
        for k, x in v.items():
            _check_str(k, where)
            _check_json_value(x, f"{where}.{k}"[:200], depth + 1)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _check_json_value(x, f"{where}[{i}]"[:200], depth + 1)
    else:
        raise RecordError(f"'{where}' has a value of type {type(v).__name__}")


def _check_str(s: str, where: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise RecordError(f"'{where}' contains an unpaired surrogate ({s[e.start]!r})") from None


def _kind(v: Any) -> str:
    kinds = {bool: "true/false", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}
    return "null" if v is None else kinds.get(type(v), type(v).__name__)


def _text(
    v: Any, key: str, limit: int, notes: list[str] | None, required: bool = False, strip: bool = True
) -> str | None:
    """A string field: numbers are taken as their digits (a numeric title is still a title),
    anything else is refused with its type; over `limit` it is cut at a word with a note."""
    if v is None or (isinstance(v, str) and not v.strip()):
        if required:
            raise RecordError(f"missing or empty '{key}'")
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str):
        raise RecordError(f"'{key}' must be a string, got {_kind(v)}")
    _check_str(v, key)
    if strip:
        v = v.strip()
    if len(v) > limit:
        cut = v[:limit]
        space = cut.rfind(" ")
        cut = cut[:space] if space > limit // 2 else cut
        if notes is not None:
            notes.append(f"'{key}' has {len(v):,} characters; kept the first {len(cut):,}")
        v = cut.rstrip() + "…"
    return v


# Where one string of names is a list: no name holds a semicolon or the Chinese list mark 、
_AUTHOR_SEP = re.compile(r"[;；、]")
# ...and where it may be one name or several: "Smith, John" or "John Smith, Jane Doe"?
_AUTHOR_AMBIGUOUS = re.compile(r"[,，]|\s(?:and|&)\s", re.I)


def _one_string(v: Any, key: str) -> Any:
    """A field that holds a list given as one string, read where that is safe. Categories are
    split on spaces and commas (arXiv's own "cs.LG cs.AI"), every part an arXiv category, else
    the record is refused: "Machine Learning" is no list of categories. Authors are split on ";"
    (and "；", "、"), which no name holds; a string with a comma or "and" but no ";" is refused, as
    "Smith, John" is one name and "Alice Smith, Bob Jones" two, and a wrong guess would split or
    join people silently. A string with neither is one author."""
    if not isinstance(v, str):
        return v
    if key == "categories":
        parts = [c for c in re.split(r"[\s,]+", v) if c]
        if bad := next((c for c in parts if not CATEGORY.match(c)), None):
            raise RecordError(message("categories_one_string", bad=bad[:40]))
        return parts
    if key == "authors":
        if _AUTHOR_SEP.search(v):
            return _AUTHOR_SEP.split(v)
        if _AUTHOR_AMBIGUOUS.search(v):
            raise RecordError(message("authors_one_string", value=v[:80]))
    return [v]


def _str_list(rec: dict[str, Any], key: str, limit: int = MAX_SHORT, notes: list[str] | None = None) -> list[str]:
    v = _one_string(rec.get(key), key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise RecordError(f"'{key}' must be a list of strings, got {_kind(v)}")
    if key == "authors":
        if len(v) > MAX_AUTHORS:
            if notes is not None:
                notes.append(f"'authors' has {len(v):,} names; kept the first {MAX_AUTHORS:,}")
            v = v[:MAX_AUTHORS]
    elif len(v) > MAX_LIST:
        raise RecordError(f"'{key}' has {len(v):,} entries; the limit is {MAX_LIST:,}")
    out = []
    for i, x in enumerate(v):
        if not isinstance(x, str):
            raise RecordError(f"'{key}[{i}]' must be a string, got {_kind(x)}")
        s = _text(x, f"{key}[{i}]", limit, notes)
        if s:
            out.append(s)
    return out


def _date(v: Any, key: str) -> str | None:
    if v is None or v == "":
        return None
    if not (m := _DATE.match(v) if isinstance(v, str) else None):
        raise RecordError(f"'{key}' must be a date YYYY-MM-DD, got {v!r}"[:200])
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3])).isoformat()  # 2025-13-45 is refused
    except ValueError:
        raise RecordError(f"'{key}' is not a real date: {v[:10]!r}") from None


def _published(v: Any, key: str = "published") -> tuple[str | None, str | None]:
    """(date, precision) of a record's ``published``: a day, or a month or year alone ("2025-07",
    "2025") dated its first day with the precision "month" or "year", as the BibTeX and Zotero
    readers date a month or a year (merge.py never lets such a date replace a day it agrees with,
    and the BibTeX export writes no day for it)."""
    m = _PARTIAL_DATE.match(v) if isinstance(v, str) else None
    if m is None:
        if v not in (None, "") and not (isinstance(v, str) and _DATE.match(v)):
            raise RecordError(f"'{key}' must be a date YYYY-MM-DD, YYYY-MM or YYYY, got {v!r}"[:200])
        return _date(v, key), None
    try:
        day = dt.date(int(m[1]), int(m[2] or 1), 1).isoformat()
    except ValueError:
        raise RecordError(f"'{key}' is not a real date: {v!r}") from None
    return day, "month" if m[2] else "year"


_DATES = ("published", "listed", "updated")


def _published_or_date(rec: dict[str, Any], notes: list[str] | None) -> tuple[str | None, str | None]:
    """``published`` as :func:`_published` reads it; a record with no date but ``date`` (a user's
    own, or ``show --json``'s) has that as its published date, checked the same way, rather than
    losing it. With a date of its own, ``date`` is to_dict's derived one (listed, else published,
    else updated): ignored, with a note when it names another day than those give."""
    given = {k: rec.get(k) for k in _DATES if rec.get(k) not in (None, "")}
    date = rec.get("date")
    if date in (None, "") or given:
        if date not in (None, "") and notes is not None:
            derived = [given[k] for k in ("listed", "published", "updated") if k in given][0]
            if not (isinstance(date, str) and isinstance(derived, str) and date[:10].startswith(derived[:10])):
                notes.append(f"'date' {str(date)[:40]!r} ignored: the record's published/listed/updated date it")
        return _published(rec.get("published"))
    return _published(date, "date")


def _with_precision(extra: dict[str, Any], source: str, precision: str | None) -> dict[str, Any]:
    """``extra`` with the precision of a month or year ``published`` under the record's source's
    slot (``extra["file"]["date_precision"]``), where merge.py and the BibTeX export read a
    BibTeX entry's; a slot that is not an object (a record's own "file": "x.pdf") is left alone."""
    slot = extra.get(key := source.split(":", 1)[0])
    if precision and (slot is None or isinstance(slot, dict)):
        return {**extra, key: {**(slot or {}), "date_precision": precision}}
    return extra


def _url(v: Any, key: str, notes: list[str] | None) -> str | None:
    if v is None or v == "":
        return None
    if not isinstance(v, str):
        raise RecordError(f"'{key}' must be a string, got {_kind(v)}")
    _check_str(v, key)
    if len(v) > MAX_URL:
        if notes is not None:
            notes.append(f"'{key}' is {len(v):,} characters long; dropped it")
        return None
    return v if v.strip() else None


def record_id(raw_id: Any) -> str:
    """An id usable in a link, without an arXiv id's version: the one check of an id a file
    gives, a record's (ingest) or a library export's (discover/library.import_json)."""
    if isinstance(raw_id, float):
        raise RecordError(f"'id' is a number ({raw_id!r}); write ids as strings, e.g. \"2501.00001\"")
    pid = _text(raw_id, "id", MAX_ID + 1, None, required=True)
    assert pid is not None
    if len(pid) > MAX_ID:
        raise RecordError(f"'id' is longer than {MAX_ID} characters")
    if _CONTROL_IN_ID.search(pid):
        raise RecordError(f"'id' contains spaces or control characters: {pid[:60]!r}")
    if _URL.match(pid):
        return _url_id(pid)
    if any(seg in ("", ".", "..") for seg in pid.split("/")) or "\\" in pid:
        raise RecordError(f"'id' is not usable in a link (an empty, '.' or '..' part, or a backslash): {pid[:60]!r}")
    return unversioned(pid)


_URL = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.IGNORECASE)


def _url_id(pid: str) -> str:
    """An id written as a URL: a doi.org one is the DOI's id, `doi:` and the DOI in lower case
    (Zotero's, so both records of a paper share one id); any other is refused, saying what an
    id is, where the link check's "an empty part" had told a user nothing."""
    if (doi := doi_of(pid)) is not None:
        return f"doi:{doi}"
    raise RecordError(message("id_is_url", value=pid[:60]))


def is_stale_copy(p: Paper, stored_updated: str | None) -> bool:
    """A record dated before the stored one is a stale copy (an old dump), not an update: both
    backends' upserts keep what they hold."""
    return bool(p.updated and stored_updated and p.updated < stored_updated)


def unversioned(pid: str) -> str:
    """An arXiv id without its version (arXiv papers are stored once, under the bare id)."""
    return re.sub(r"v\d+$", "", pid) if ARXIV_ID.match(pid) else pid


# A pasted arXiv reference: an id, with an `arXiv:` prefix, a version, as an abs/pdf/html URL or
# arXiv's DOI (10.48550/arXiv.ID); group 1 is the id (search/query.paper_ref reads the same)
ARXIV_REF = re.compile(
    r"^(?:https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/|arxiv:|(?:https?://doi\.org/)?10\.48550/arxiv\.)?"
    r"(\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[a-z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?/?$",
    re.IGNORECASE,
)


# A DOI as a record or a user writes it: bare, after `doi:` or in a doi.org URL; group 1 is the DOI
DOI_REF = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)


def doi_of(text: Any) -> str | None:
    """The DOI a text names (`DOI_REF`), in lower case: a DOI is case-insensitive, and one form
    is what the store keeps (`dois`) and a look-up compares; None for anything else."""
    m = DOI_REF.match(text.strip()) if isinstance(text, str) else None
    return m.group(1).lower() if m else None


def dois(pid: str, extra: dict[str, Any]) -> list[str]:
    """Every DOI a record carries, wherever its source keeps it: its id (`doi:…`, Zotero's and a
    user's own), its `doi` field (extra.doi) and each source's (extra.bibtex.doi, extra.zotero.doi,
    extra.arxiv.doi). A pasted DOI must find the paper whichever source brought it; the store
    keeps these at write time (store.paper_dois), so a look-up reads an index, not every record."""
    slots = (v.get("doi") for v in extra.values() if isinstance(v, dict))
    return list(dict.fromkeys(d for d in map(doi_of, (pid, extra.get("doi"), *slots)) if d))


def typed_id(text: str) -> str:
    """The stored id a user means by what they typed: spaces, an `arXiv:` prefix (any case), an
    arXiv version suffix and an arXiv URL around it dropped; a DOI (bare, `doi:` or a doi.org
    URL) as `doi:` and the DOI in lower case, which the store finds by any of its papers' DOIs
    (Store.resolve). The one rule for every place that looks a typed id up
    (/paper/https://arxiv.org/abs/2504.18989 is 2504.18989, /paper/10.1109/X is doi:10.1109/x)."""
    pid = (text or "").strip()
    if (m := ARXIV_REF.match(pid)) is not None:
        return m.group(1).lower() if "/" in m.group(1) else m.group(1)
    if doi := doi_of(pid):
        return f"doi:{doi}"
    return unversioned(pid[6:] if pid[:6].lower() == "arxiv:" else pid)


def _extra(rec: dict[str, Any]) -> dict[str, Any]:
    """``extra`` with every field the record has that Paper does not (e.g. code_stars: never
    dropped), checked for what JSON clients can read back."""
    given = rec.get("extra")
    if given is not None and not isinstance(given, dict):
        raise RecordError(f"'extra' must be a JSON object, got {_kind(given)}")
    extra = {**(given or {}), **{k: v for k, v in rec.items() if k not in _NOT_EXTRA}}
    _check_json_value(extra, "extra")
    stars = extra.get("code_stars")
    if stars is not None and (isinstance(stars, bool) or not isinstance(stars, int) or stars < 0):
        raise RecordError(f"'code_stars' must be a whole number >= 0, got {stars!r}"[:200])
    size = len(json.dumps(extra, ensure_ascii=False))
    if size > MAX_EXTRA_BYTES:
        raise RecordError(f"'extra' fields take {size:,} characters; the limit is {MAX_EXTRA_BYTES:,}")
    return extra


def paper_from_dict(rec: Any, source: str = "file", notes: list[str] | None = None) -> Paper:
    """A JSON object (the corpus format, or Paper.to_dict's) as a Paper, every field checked:
    a record that cannot be stored faithfully raises RecordError naming the field; over-long
    text is cut, and what was cut appended to ``notes`` (the record is kept)."""
    if not isinstance(rec, dict):
        raise RecordError(f"expected a JSON object, got {_kind(rec)}")
    pid = record_id(rec.get("id"))
    title = _text(rec.get("title"), "title", MAX_TITLE, notes, required=True)
    assert title is not None
    raw_abstract = rec["abstract"] if rec.get("abstract") is not None else rec.get("summary")
    abstract = _text(raw_abstract, "abstract", MAX_ABSTRACT, notes) or ""
    published, precision = _published_or_date(rec, notes)
    dates = {key: _date(rec.get(key), key) for key in ("listed", "updated")}
    truncated = rec.get("authors_truncated")
    if truncated is not None and not isinstance(truncated, bool):
        raise RecordError(f"'authors_truncated' must be true or false, got {_kind(truncated)}")
    raw_authors = rec.get("authors")
    truncated = bool(truncated) or (isinstance(raw_authors, list) and len(raw_authors) > MAX_AUTHORS)
    sources = _str_list(rec, "sources", 100) or [source]
    extra = _with_precision(_extra(rec), sources[0], precision)
    categories = _str_list(rec, "categories")
    for c in categories:
        if len(c) > MAX_CATEGORY:
            raise RecordError(f"a category is longer than {MAX_CATEGORY} characters: {c[:40]!r}…")
    return Paper(
        id=pid,
        title=title,
        authors=_str_list(rec, "authors", MAX_SHORT, notes),
        abstract=abstract,
        categories=categories,
        venue=_text(rec.get("venue"), "venue", MAX_SHORT, notes, strip=False),
        venue_area=_text(rec.get("venue_area"), "venue_area", MAX_SHORT, notes, strip=False),
        abs_url=_url(rec.get("abs_url"), "abs_url", notes),
        pdf_url=_url(rec.get("pdf_url"), "pdf_url", notes),
        code_url=_url(rec.get("code_url"), "code_url", notes),
        comment=_text(rec.get("comment"), "comment", MAX_SHORT, notes, strip=False),
        authors_truncated=truncated,
        sources=sources,
        extra=extra,
        published=published,
        **dates,
    )


def finite(v: Any) -> Any:
    """A record's data as JSON can hold it: NaN and infinities (stored before records were
    validated) become null, in nested dicts and lists too. Every JSON output uses this."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return v

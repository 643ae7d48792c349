"""The library: what a user keeps. Papers saved into named tags (collections), papers marked
"not interested", saved searches, and the tokens that allow writing through the web; in the
store's database, keyed by paper id, so it survives re-ingests (docs/recommendations.md).

Each write is one transaction of a writable store. Every function raises :class:`LibraryError`
with a message fit to show a user.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from paperdex.index.publish import publish
from paperdex.messages import LANGS, message, typed
from paperdex.paper import Paper, RecordError, record_id, typed_id
from paperdex.search import MAX_WINDOW, URL_NAMES, Filters
from paperdex.search.query import QueryError, parse
from paperdex.store import Store
from paperdex.text import HIDDEN

MAX_TAG = 64  # characters of a tag name
MAX_TAGS = 1000
MAX_TAG_PAPERS = 10_000
MAX_SAVED = 500
MAX_QUERY = 2000
FORMAT = "paperdex-library"
FORMAT_VERSION = 1
TOKEN_PREFIX = "pdx_"
SAVED_PARAMS = ("mode", "category", "from", "to", "venue", "area", "author", "lang")
MODES = ("hybrid", "lexical", "dense")
MAX_ROW_ID = 2**63 - 1  # SQLite's integers are 64-bit
PAGE = 200  # matches read per page of a saved search's new matches


class LibraryError(ValueError):
    """A library request that cannot be done; the message says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _unsafe(s: str) -> bool:
    """Whether a name or a value holds a hidden character (text.HIDDEN), a tab or a line break."""
    return HIDDEN.search(s) is not None or "\t" in s or "\n" in s


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# --- plumbing ---------------------------------------------------------------------------
@contextmanager
def _write(store: Store) -> Iterator[Store]:
    _writable(store)
    with store.write_transaction():
        yield store


def _writable(store: Store) -> None:
    if store.readonly:
        raise LibraryError(message("library_read_only"), 403)


def tag_name(name: str, *, saved: bool = False) -> str:
    """A tag's (or a `saved` search's) name as stored: trimmed, inner whitespace collapsed, 1 to
    MAX_TAG characters, no control characters, no `/` and not `.` or `..` (it is a path segment
    of the tag's page and feed, which a browser would resolve: /tag/.. is the home page)."""
    name = " ".join(str(name or "").split())
    if not name:
        raise LibraryError(message("saved_needs_name" if saved else "tag_needs_name"))
    if len(name) > MAX_TAG:
        raise LibraryError(message("saved_name_too_long" if saved else "tag_name_too_long", limit=MAX_TAG))
    if _unsafe(name) or "/" in name or "\\" in name or name in (".", ".."):
        raise LibraryError(message("saved_name_chars" if saved else "tag_name_chars"))
    return name


def paper_ids(store: Store, ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """The stored ids for user-typed ones (an `arXiv:` prefix and a version suffix are
    dropped when the bare id is the stored one; an id a merge moved gives the paper's id now,
    Store.resolve), and the ones not in the store, each once (an import kept a repeated one
    twice: a UNIQUE constraint failed halfway through)."""
    found, missing = [], []
    for pid in filter(None, (typed_id(str(raw)) for raw in ids)):
        if (stored := store.resolve(pid)) is None:
            missing.append(pid)
        else:
            found.append(stored)
    return list(dict.fromkeys(found)), list(dict.fromkeys(missing))


def kept_ids(store: Store, ids: Iterable[str]) -> list[str]:
    """The ids an import keeps: the stored ones, then the ones this store lacks, kept for when
    they are ingested (a library imported before the first sync loses nothing)."""
    found, missing = paper_ids(store, ids)
    return found + [m for m in missing if m not in found]


# --- tags -------------------------------------------------------------------------------
@dataclass
class Tag:
    name: str
    count: int
    created: str
    updated: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count, "created": self.created, "updated": self.updated}


def tags(store: Store) -> list[Tag]:
    """Every tag with how many papers it holds, by name."""
    return [Tag(r["name"], r["n"], r["created"], r["upd"]) for r in store.tags_with_counts()]


def get_tag(store: Store, name: str) -> Tag:
    name = tag_name(name)
    for t in tags(store):
        if t.name.lower() == name.lower():
            return t
    raise LibraryError(message("no_tag", name=name), 404)


def tag_papers(store: Store, name: str) -> list[str]:
    """Ids of the tag's papers, most recently added first."""
    return store.tag_paper_ids(tag_name(name))


def tags_of(store: Store, pid: str) -> list[str]:
    return store.tag_names_of(pid)


def _tag_id(c: Store, name: str, created: str | None = None) -> int:
    """The tag's id, the tag made if new (dated `created`, an import's, else now)."""
    tid = c.tag_id(name)
    if tid is not None:
        return tid
    if c.tag_count() >= MAX_TAGS:
        raise LibraryError(message("too_many_tags", limit=MAX_TAGS))
    return c.insert_tag(name, created or now())


def create_tag(store: Store, name: str) -> Tag:
    name = tag_name(name)
    with _write(store) as c:
        _tag_id(c, name)
    return get_tag(store, name)


def add_to_tag(store: Store, name: str, ids: Iterable[str]) -> int:
    """Save papers into a tag (made if new); returns how many were not in it yet. Ids not in the
    store are an error (an import keeps them: :func:`import_json`)."""
    name = tag_name(name)
    found, missing = paper_ids(store, ids)
    if missing:
        raise LibraryError(message("ids_not_in_store", ids=_listed(missing)), 404)
    with _write(store) as c:
        return _add(c, name, found)


def _add(c: Store, name: str, ids: list[str], created: str | None = None) -> int:
    """Inside a write: save `ids` (each once) into tag `name`, made if new; how many were new to it."""
    tid = _tag_id(c, name, created)
    have_ids = set(c.tag_paper_ids(name))
    fresh = [pid for pid in dict.fromkeys(ids) if pid not in have_ids]
    if len(have_ids) + len(fresh) > MAX_TAG_PAPERS:
        raise LibraryError(message("tag_too_full", limit=MAX_TAG_PAPERS))
    c.add_to_tag(tid, fresh, now())
    c.undismiss(ids)  # saving a paper takes back a "not interested"
    return len(fresh)


def held(
    ids: Iterable[str], have: Iterable[str], resolve: Callable[[str], str | None] = lambda _: None
) -> tuple[list[str], list[str]]:
    """The ids among `have` that user-typed ones mean, and the ones not there. An id is read as
    :func:`paper_ids` reads it (a version suffix taken off when adding is taken off when
    removing), else as typed (one stored so by an older version), else as the paper it names
    now (`resolve`: an id a merge moved; the library holds the new one)."""
    have = set(have)
    found: list[str] = []
    absent: list[str] = []
    for raw in (str(r).strip() for r in ids):
        if not (pid := typed_id(raw)):
            continue
        hit = next((x for x in (pid, raw, resolve(pid)) if x and x in have), None)
        (found if hit else absent).append(hit or pid)
    return list(dict.fromkeys(found)), list(dict.fromkeys(absent))


def _listed(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")


def remove_from_tag(store: Store, name: str, ids: Iterable[str]) -> int:
    """Take papers out of a tag; an id the tag does not hold refuses the whole request (a typo
    reported as "0 removed" looked like success)."""
    name = tag_name(name)
    with _write(store) as c:
        tid = c.tag_id(name)
        if tid is None:
            raise LibraryError(message("no_tag", name=name), 404)
        found, absent = held(ids, c.tag_paper_ids(name), c.resolve)
        if absent:
            raise LibraryError(message("not_in_tag", name=name, ids=_listed(absent)), 404)
        return sum(c.remove_from_tag(tid, pid) for pid in found)


def delete_tag(store: Store, name: str) -> bool:
    name = tag_name(name)
    with _write(store) as c:
        return c.delete_tag(name)


def rename_tag(store: Store, old: str, new: str) -> None:
    old, new = tag_name(old), tag_name(new)
    with _write(store) as c:
        if old.lower() != new.lower() and c.tag_id(new) is not None:
            raise LibraryError(message("tag_exists", name=new), 409)
        if not c.rename_tag(old, new):
            raise LibraryError(message("no_tag", name=old), 404)


# --- not interested -----------------------------------------------------------------------
def dismiss(store: Store, ids: Iterable[str]) -> int:
    """Mark papers "not interested": recommendations leave them out and learn from them."""
    found, missing = paper_ids(store, ids)
    if missing:
        raise LibraryError(message("ids_not_in_store", ids=", ".join(missing[:5])), 404)
    with _write(store) as c:
        return c.dismiss(found, now())


def undismiss(store: Store, ids: Iterable[str]) -> int:
    """Take back "not interested" marks; an id not marked refuses the whole request, as in
    :func:`remove_from_tag`."""
    with _write(store) as c:
        found, absent = held(ids, c.dismissed_ids(), c.resolve)
        if absent:
            raise LibraryError(message("not_dismissed", ids=_listed(absent)), 404)
        return c.undismiss(found)


def dismissed(store: Store) -> list[str]:
    return store.dismissed_ids()


# --- saved searches -------------------------------------------------------------------------
@dataclass
class SavedSearch:
    id: int
    name: str
    query: str
    params: dict[str, str] = field(default_factory=dict)
    created: str = ""
    seen_rowid: int = 0
    seen_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "seen_rowid"}

    @property
    def mode(self) -> str:
        return self.params.get("mode") or "hybrid"


def _saved(r: sqlite3.Row) -> SavedSearch:
    return SavedSearch(
        r["id"], r["name"], r["query"], json.loads(r["params"]), r["created"], r["seen_rowid"], r["seen_at"]
    )


def clean_params(params: dict[str, Any] | None) -> dict[str, str]:
    """What a saved search keeps of the search form's or API's parameters: mode, filters, page
    language; a name it does not know is refused (a mistyped filter was dropped silently)."""
    out: dict[str, str] = {}
    unknown = sorted(str(k) for k in (params or {}) if URL_NAMES.get(k, k) not in SAVED_PARAMS)
    if unknown:
        names, known = ", ".join(unknown)[:200], ", ".join(SAVED_PARAMS)
        raise LibraryError(message("saved_params_unknown", names=names, known=known))
    for k, v in (params or {}).items():
        k = URL_NAMES.get(k, k)
        if v is None or str(v).strip() == "":
            continue
        if not isinstance(v, str) or len(v) > 200 or _unsafe(v):
            raise LibraryError(message("search_value_bad", param=k))
        out[k] = v.strip()
    if out.get("mode", "hybrid") not in MODES:
        raise LibraryError(message("saved_mode", choices=", ".join(MODES)))
    if out.get("lang", LANGS[0]) not in LANGS:
        raise LibraryError(message("saved_lang", choices=", ".join(LANGS)))
    return out


def check_search(query: str, params: dict[str, str]) -> None:
    """Refuse what a search would refuse, when it is saved: a query that does not parse or a
    filter it cannot read (a category such as `nonsense!!`, a date that is not one) would
    otherwise fail, or match nothing, every later run (the list, the digest, the feeds)."""
    try:
        parse(query)
        search_filters(params).nodes()  # the filters as clauses: their categories, dates, authors checked
    except QueryError as e:
        raise LibraryError(message("saved_not_parsed", error=e.message)) from None


def search_filters(params: dict[str, str]) -> Filters:
    """A saved search's stored filters as the search takes them."""
    return Filters(**{f.name: params.get(URL_NAMES.get(f.name, f.name)) for f in fields(Filters)})


def _same(row: sqlite3.Row, query: str, params: dict[str, str]) -> bool:
    """Whether a stored search is this one (its page language aside): saving it again changes nothing."""
    stored = {k: v for k, v in json.loads(row["params"]).items() if k != "lang"}
    return row["query"] == query and stored == {k: v for k, v in params.items() if k != "lang"}


def save_search(
    store: Store,
    name: str,
    query: str,
    params: dict[str, Any] | None = None,
    *,
    replace: bool = False,
    how: str | None = None,
) -> SavedSearch:
    """Save a query with its filters, checked as a search would. A name taken by another search is
    refused (409; `how` says how to replace it in the caller's interface) unless `replace` (counted
    new from now): every interface had its own rule, and the API and the web replaced silently.
    The same search saved again under its name is kept as it is."""
    name, query, p = checked_search(name, query, params)
    with _write(store) as c:
        old = c.saved_search_row(name=name)
        if old is not None and not replace and _same(old, query, p):
            return _saved(old)
        if old is not None and not replace:
            how = how or message("saved_replace_cli")
            raise LibraryError(message("saved_exists", name=name, id=old["id"], query=old["query"][:80], how=how), 409)
        _put_search(c, name, query, p)
    return get_saved(store, name)


def checked_search(name: str, query: str, params: dict[str, Any] | None) -> tuple[str, str, dict[str, str]]:
    """A search to save, as stored (its name, query and filters), each checked as a search checks it."""
    name = tag_name(name, saved=True)
    query = str(query or "").strip()
    if len(query) > MAX_QUERY or _unsafe(query.replace("\n", " ")):
        raise LibraryError(message("saved_query_too_long", limit=MAX_QUERY))
    p = clean_params(params)
    if not query and not any(k in p for k in ("category", "from", "to", "venue", "area", "author")):
        raise LibraryError(message("saved_needs_query"))
    check_search(query, p)
    return name, query, p


def _put_search(c: Store, name: str, query: str, p: dict[str, str], created: str | None = None) -> None:
    """Inside a write: save a checked search, or replace the one of its name (which keeps its
    id and creation time); counted new from now. `created`: an import's, else now."""
    if c.saved_search_row(name=name) is None and c.saved_search_count() >= MAX_SAVED:
        raise LibraryError(message("too_many_saved", limit=MAX_SAVED))
    c.put_saved_search(name, query, json.dumps(p, sort_keys=True), created or now(), c.max_rowid(), now())


def saved_searches(store: Store) -> list[SavedSearch]:
    return [_saved(r) for r in store.saved_search_rows()]


def row_number(key: str) -> int | None:
    """The row id a key names when written in digits (None: it is a name). Digits no SQLite row
    can carry (past 64 bits; another script's, ``²``) give 0, which names no row: "not found"."""
    if not key.isdigit():
        return None
    return int(key) if key.isascii() and len(key) <= 19 and int(key) <= MAX_ROW_ID else 0


def get_saved(store: Store, key: str | int) -> SavedSearch:
    """A saved search by id or name."""
    k = str(key).strip()
    n = row_number(k)
    row = store.saved_search_row(id=n) if n is not None else store.saved_search_row(name=k)
    if row is None:
        raise LibraryError(message("no_saved_search", key=k[:80]), 404)
    return _saved(row)


def delete_saved(store: Store, key: str | int) -> bool:
    s = get_saved(store, key)
    with _write(store) as c:
        return c.delete_saved_search(s.id)


def mark_seen(store: Store, key: str | int, rowid: int | None = None) -> SavedSearch:
    """A visit: what is new is counted from the newest paper stored now (or `rowid`)."""
    s = get_saved(store, key)
    with _write(store) as c:
        c.set_saved_search_seen(s.id, rowid if rowid is not None else c.max_rowid(), now())
    return get_saved(store, s.id)


@dataclass
class NewMatches:
    """The papers a saved search matches that were stored after its last visit."""

    saved: SavedSearch
    count: int
    papers: list[Paper]  # newest first, at most the limit asked for
    complete: bool = True  # False: more matches than could be counted (MAX_WINDOW)
    notices: list[str] = field(default_factory=list)
    error: str | None = None  # the stored search no longer runs (saved before searches were checked)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.saved.to_dict(),
            "new": self.count,
            "complete": self.complete,
            "papers": [p.to_dict() for p in self.papers],
            "notices": self.notices,
            "error": self.error,
        }


def run_saved(searcher, saved, *, page: int = 1, per_page: int = 20, deadline: float | None = None):
    """A saved search as every reader runs it (new matches, the digest, its feed): its query
    and mode, its stored filters, newest first, no facets or highlights."""
    return searcher.search(
        saved.query,
        mode=saved.mode,
        sort="newest",
        page=page,
        per_page=per_page,
        filters=search_filters(saved.params),
        facets=False,
        highlight=False,
        deadline=deadline,
    )


def new_matches(searcher, saved: SavedSearch, limit: int = 20, *, deadline: float | None = None) -> NewMatches:
    """Count the matches of `saved` stored since its last visit, exactly, through the search
    itself (`sort=newest`), reading its pages only down to the oldest new paper's date."""
    rows = searcher.store.ids_and_dates_after_rowid(saved.seen_rowid)
    if not rows:
        return NewMatches(saved, 0, [])
    new_ids = {r[0] for r in rows}
    dated = [r[1] for r in rows if r[1]]
    oldest = min(dated) if dated and len(dated) == len(rows) else None
    count, notices = 0, []
    papers: list[Paper] = []
    for page in itertools.count(1):
        try:
            res = run_saved(searcher, saved, page=page, per_page=PAGE, deadline=deadline)
        except QueryError as e:  # stored before saving checked it, or by an older version
            return NewMatches(saved, 0, [], notices=[message("saved_search_broken", error=e.message)], error=str(e))
        if page == 1:
            notices = list(res.notices)
        new = [h.paper for h in res.hits if h.paper.id in new_ids]
        count += len(new)
        papers += new[: max(0, limit - len(papers))]
        last = res.hits[-1].paper.date if res.hits else None
        if len(res.hits) < PAGE or page * PAGE >= res.total:
            break
        if oldest is not None and last is not None and last < oldest:
            break
        if (page + 1) * PAGE > MAX_WINDOW:
            return NewMatches(saved, count, papers, False, notices)
    return NewMatches(saved, count, papers, True, notices)


# --- tokens (writing through the web) ---------------------------------------------------------
def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def create_token(store: Store, name: str = "") -> str:
    """A new token, returned once: only its sha256 is stored (256 random bits need no slow hash)."""
    name = " ".join(str(name or "").split())[:100] or "token"
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with _write(store) as c:
        c.insert_token(name, _hash(token), now())
    return token


def tokens(store: Store) -> list[dict[str, Any]]:
    return [{"id": r["id"], "name": r["name"], "created": r["created"]} for r in store.token_rows()]


def revoke_token(store: Store, key: str | int) -> int:
    k = str(key).strip()
    with _write(store) as c:
        n = row_number(k)
        return c.delete_token(id=n) if n is not None else c.delete_token(name=k)


def check_token(store: Store, token: str | None) -> dict[str, Any] | None:
    """The token's record if `token` is a live one. The look-up is by the hash of what was
    presented, so nothing is compared character by character against a secret."""
    if not token or len(token) > 200:
        return None
    h = _hash(token.strip())
    row = store.token_by_hash(h)
    if row is None or not hmac.compare_digest(row["hash"], h):
        return None
    return {"id": row["id"], "name": row["name"], "hash": h}


# --- export and import ------------------------------------------------------------------------
def export_json(store: Store) -> dict[str, Any]:
    """The whole library as one JSON object (tokens excepted)."""
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported": now(),
        "tags": [
            {"name": t.name, "created": t.created, "papers": list(reversed(tag_papers(store, t.name)))}
            for t in tags(store)
        ],
        "dismissed": dismissed(store),
        "saved_searches": [
            {"name": s.name, "query": s.query, "params": s.params, "created": s.created} for s in saved_searches(store)
        ],
    }


def import_json(store: Store, data: Any) -> dict[str, Any]:
    """Merge an exported library into this one: tags gain papers, "not interested" marks are
    added (ids this store lacks are kept for when they are ingested, both), saved searches are
    added or replace the one of their name; a new tag or search keeps its exported `created`.
    The whole file is checked before anything is written (a bad field is an error naming it),
    then written in one transaction: all of it or nothing."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LibraryError(message("not_library_export", format=FORMAT))
    try:
        lib = LibraryExport.model_validate(data)
    except ValidationError as e:
        raise _refusal(e) from None
    if lib.version > FORMAT_VERSION:
        raise LibraryError(message("export_newer"))
    names = [_named(("tags", i, "name"), t.name) for i, t in enumerate(lib.tags)]
    searches, refused = [], []
    for s in lib.saved_searches:
        try:
            searches.append((*checked_search(s.name, s.query, s.params), s.created))
        except LibraryError as e:  # one that no longer parses (saved by an older version): said, not fatal
            refused.append(message("import_saved_refused", name=s.name[:80], error=e.message))
    out = {"tags": len(names), "papers": 0, "dismissed": 0, "saved_searches": len(searches)}
    with _write(store) as c:
        for name, t in zip(names, lib.tags, strict=True):
            out["papers"] += _add(c, name, kept_ids(c, t.papers), t.created)
        out["dismissed"] = c.dismiss(kept_ids(c, lib.dismissed), now())
        for name, query, p, created in searches:
            _put_search(c, name, query, p, created)
    return {**out, "refused": refused} if refused else out


def _file_id(v: str) -> str:
    """A paper id in a library file, checked as ingest checks a record's (paper.record_id):
    `../etc` or an id with a space was kept as one."""
    try:
        record_id(v)
    except RecordError as e:
        raise ValueError(str(e)) from None
    return v


_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")  # as now() writes it


def _stamp(v: str) -> str:
    if not _STAMP.fullmatch(v):
        raise ValueError(message("import_must_be", kind=message("kind_time"), value=_shown(v)))
    return v


FileId = Annotated[str, AfterValidator(_file_id)]
Stamp = Annotated[str, AfterValidator(_stamp)]


class _Part(BaseModel):
    """Strict: a string where a list belongs was read letter by letter, "1" taken as a version."""

    model_config = ConfigDict(extra="allow", strict=True)


class ExportTag(_Part):
    name: str
    created: Stamp | None = None
    papers: list[FileId]


class ExportSaved(_Part):
    name: str
    query: str
    params: dict[str, Any] = {}
    created: Stamp | None = None


class LibraryExport(_Part):
    """The whole library (tokens excepted), as export_json writes it and import_json takes it;
    the API's schema (web/schemas.py), so `tag import` and POST /api/library/import refuse alike."""

    format: Literal["paperdex-library"]
    version: int = FORMAT_VERSION
    exported: str | None = None
    tags: list[ExportTag] = []
    dismissed: list[FileId] = []
    saved_searches: list[ExportSaved] = []


def _shown(v: Any) -> str:
    return typed(json.dumps(v, ensure_ascii=False, default=str))


def _field(loc: Sequence[int | str]) -> str:
    """A field's place as a user finds it in the file: tags[0].papers[1]."""
    return "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in loc).lstrip(".")


def _refusal(err: ValidationError) -> LibraryError:
    """The first field the check refused, named, with what it must be."""
    e = err.errors()[0]
    kinds = {
        "list_type": message("kind_list"),
        "string_type": message("kind_text"),
        "int_type": message("kind_number"),
        "dict_type": message("kind_object"),
        "model_type": message("kind_object"),
    }
    cause = (e.get("ctx") or {}).get("error")
    why: Any = e["msg"]
    if isinstance(cause, Exception) and cause.args:
        why = cause.args[0]
    elif e["type"] == "missing":
        why = message("import_missing")
    elif e["type"] in kinds:
        why = message("import_must_be", kind=kinds[e["type"]], value=_shown(e["input"]))
    return LibraryError(message("import_field", field=_field(e["loc"]), error=why))


def _named(loc: Sequence[int | str], name: str) -> str:
    """A tag name of the file, as stored; a bad one refuses the import, naming where it is."""
    try:
        return tag_name(name)
    except LibraryError as e:
        raise LibraryError(message("import_field", field=_field(loc), error=e.message)) from None


def export_bibtex(store: Store, name: str | None = None) -> str:
    """A tag's papers (or every tagged paper) as a .bib file, through the one BibTeX writer; a tag
    that does not exist is an error naming it (it was an empty file: a typo looked like a tag of
    papers this store lacks)."""
    from paperdex.sources.bibtex import to_bibtex

    ids = tag_papers(store, get_tag(store, name).name) if name else store.tagged_paper_ids()
    return to_bibtex([p for p in (store.get(i) for i in sorted(set(ids))) if p is not None])


def import_bibtex(store: Store, text: str, name: str) -> dict[str, Any]:
    """Save the entries of a .bib file into tag `name` (:func:`import_papers`)."""
    from paperdex.sources.bibtex import parse_bibtex

    res, name = parse_bibtex(text), tag_name(name)
    return import_papers(store, [(p, [name]) for p in res.papers], res.errors)


def import_papers(store: Store, entries: list[tuple[Paper, list[str]]], errors: Sequence[str] = ()) -> dict[str, Any]:
    """Save papers from a reference manager (.bib, CSL-JSON, Zotero) into tags (names checked first),
    each found as a sync finds it; the rest are added first, so recommendations work."""
    from paperdex.sources.merge import Matcher

    entries = [(p, [tag_name(t) for t in names]) for p, names in entries]
    matcher, ids, new, matched = Matcher(store), [], {}, 0
    for p, _ in entries:
        doi = p.extra.get("doi") or (p.extra.get("bibtex") or {}).get("doi")
        pid = store.resolve(p.id)
        pid = pid or (store.paper_id_by_doi(str(doi).lower()) if doi else None)
        if pid is None and (hit := matcher.find(p)):
            pid = hit[0]
        ids.append(pid or p.id)
        matched += pid is not None
        if pid is None:
            new[p.id] = p
    if new:
        _writable(store)
        store.upsert(new.values())
        publish(store)
    tagged: dict[str, list[str]] = {}
    for pid, (_, names) in zip(ids, entries, strict=True):
        for t in names:
            tagged.setdefault(t, []).append(pid)
    added = {t: add_to_tag(store, t, pids) for t, pids in tagged.items()}
    out: dict[str, Any] = {"entries": len(entries), "matched": matched, "ingested": len(new)}
    out |= {"added": sum(added.values()), "tags": added, "errors": len(errors)}
    return {**out, "refused": list(errors)} if errors else out

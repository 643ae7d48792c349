"""One record per paper, whichever sources it arrives from: a record matches a stored one by id,
by the arXiv id it links, by normalised title plus first author's surname, or (untitled seed
records) by abstract start plus that surname. The merge keeps the union of sources, categories
and ``extra``; each shown field comes from the source trusted most for it
(``registry.Source.ranks``), and ``extra["merge"]`` says which gave which and how they matched.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import islice
from typing import Any
from urllib.parse import urlparse

from paperdex.index.publish import publish
from paperdex.paper import ARXIV_ID, Paper, index_text, unversioned
from paperdex.sources import registry, venues
from paperdex.store import IngestSummary, Store

log = logging.getLogger("paperdex.sources")

# Higher rank wins; ties: the newest, so a source updating its own record always goes through.
FIELDS: dict[str, str] = {  # field -> the rank group it is judged by
    "title": "title",
    "abstract": "abstract",
    "authors": "authors",  # authors_truncated travels with authors
    "venue": "venue",
    "venue_area": "venue",
    "published": "dates",
    "listed": "dates",
    "updated": "dates",
    "comment": "dates",
    "abs_url": "links",
    "pdf_url": "links",
    "code_url": "code",
}
DEFAULT_RANK = 25


def _rank(source: str, group: str) -> int:
    return registry.ranks().get(source.split(":", 1)[0], {}).get(group, DEFAULT_RANK)


# --- normalisation for matching ----------------------------------------------------------


def _fold(text: str) -> str:
    text = index_text(text).lower()
    if text.isascii():
        return text
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text))


# "β" and LaTeX "\beta" agree: index_text gives "beta" for both (text.greek_names)
_COMBINING = re.compile(r"[\u0300-\u036f]")


def norm_title(title: str) -> str:
    """Case, accents, LaTeX and punctuation do not make two titles different."""
    return " ".join(re.findall(r"\w+", _fold(title)))


def surname(name: str) -> str:
    """The family name as matching sees it: "Vaswani, Ashish" and "Ashish Vaswani" agree."""
    name = name.strip()
    if "," in name:
        name = name.split(",", 1)[0]
    else:
        parts = name.split()
        while len(parts) > 1 and parts[-1].rstrip(".").lower() in ("jr", "sr", "ii", "iii", "iv"):
            parts.pop()
        name = parts[-1] if parts else ""
    return "".join(re.findall(r"\w+", _fold(name)))


def title_key(p: Paper) -> str | None:
    if _title_is_synthetic(p) or not p.authors:
        return None
    t = norm_title(p.title)
    return f"{t}|{surname(p.authors[0])}" if len(t) >= 8 else None


def abstract_key(p: Paper) -> str | None:
    a = "".join(re.findall(r"\w+", _fold(p.abstract)))[:200]
    if len(a) < 100 or not p.authors:
        return None
    return f"{a}|{surname(p.authors[0])}"


def _title_is_synthetic(p: Paper) -> bool:
    return bool(p.slot("seed").get("title_from_abstract"))


def linked_arxiv_id(p: Paper) -> str | None:
    """The arXiv id a record is or names (``extra[source]["arxiv_id"]``)."""
    if p.is_arxiv:
        return p.id
    linked = (v.get("arxiv_id") for v in p.extra.values() if isinstance(v, dict))
    return next((unversioned(a) for a in linked if isinstance(a, str) and ARXIV_ID.match(a)), None)


# --- merging two records ------------------------------------------------------------------


def _empty(v: Any) -> bool:
    return v is None or v == "" or v == [] or v is False


def _owner(p: Paper, name: str) -> str:
    if name == "venue" and venues.from_comment(p):
        return venues.SOURCE  # read from the arXiv comment: any source that states a venue wins
    return p.slot("merge").get("fields", {}).get(name) or (p.sources[0] if p.sources else "file")


KEPT = ("title", "abstract", "authors", "venue", "venue_area", "published", "code_url", "abs_url", "pdf_url")


def _stash(out: Paper, source: str, name: str, value: Any, origin: Paper) -> None:
    """Keep a value that lost to a more trusted source under ``extra[source]``: a merge loses nothing."""
    if name not in KEPT or _empty(value) or (name == "title" and _title_is_synthetic(origin)):
        return
    key = source.split(":", 1)[0]
    slot = out.extra.get(key)
    if slot is None or isinstance(slot, dict):
        out.extra[key] = {**(slot or {}), name: value}


def merge_papers(base: Paper, incoming: Paper, how: str = "same id", *, again: bool = False) -> Paper:
    """Fold ``incoming`` into ``base``; idempotent, so a re-run of a sync reports it unchanged.
    ``again``: ``incoming``'s id came earlier in the same run (an id given twice in one file), so
    the two are two records of the paper, merged as two sources' records are (the fuller author
    list of the same people stands; a value not shown is kept under the source's ``extra`` slot),
    not a source's update of its own record, which replaces what that source gave before."""
    src = incoming.sources[0] if incoming.sources else "file"
    out = replace(
        base,
        authors=list(base.authors),
        categories=list(base.categories),
        sources=list(base.sources),
        extra=json.loads(json.dumps(base.extra)),
    )
    merge_info = out.slot("merge")
    prov: dict[str, str] = dict(merge_info.get("fields", {}))
    _take_fields(out, base, incoming, src, prov, again)
    if incoming.categories:  # a union; the more trusted source's primary category comes first
        if _rank(src, "categories") > _rank(_owner(base, "categories"), "categories"):
            first, second = incoming.categories, base.categories
            prov["categories"] = src
        else:
            first, second = base.categories, incoming.categories
            prov.setdefault("categories", _owner(base, "categories"))
        out.categories = list(dict.fromkeys([*first, *second]))
    for name in [*FIELDS, "categories"]:  # every shown value names its source
        if not _empty(getattr(out, name)):
            prov.setdefault(name, _owner(base, name))
    for s in incoming.sources:
        if s not in out.sources:
            out.sources.append(s)
    for k, v in incoming.extra.items():
        if k != "merge":
            both = isinstance(v, dict) and isinstance(out.extra.get(k), dict)
            out.extra[k] = {**out.extra[k], **v} if both else v
    _settle_precision(out, base, incoming, src, prov.get("published"))
    out.id = base.id if base.is_arxiv or not incoming.is_arxiv else incoming.id
    if out.is_arxiv:  # an arXiv paper's "arXiv" and "PDF" links are arXiv's (Paper.links)
        for name in ("abs_url", "pdf_url"):
            url = getattr(out, name)
            if url and not on_arxiv(url):
                _stash(out, prov.get(name) or _owner(base, name), name, url, out)
                setattr(out, name, None)
                prov.pop(name, None)
    matched = list(merge_info.get("matched", []))
    if src not in base.sources and (note := f"{src} {incoming.id}: {how}") not in matched:
        matched.append(note)
    if len(out.sources) > 1:
        out.extra["merge"] = {"fields": dict(sorted(prov.items())), "matched": matched}
    return out


def _take_fields(out: Paper, base: Paper, incoming: Paper, src: str, prov: dict[str, str], again: bool) -> None:
    """Each field of FIELDS from the source trusted most for it (``prov`` says which); the value
    not taken is kept (``_stash``), but for a source's update of its own record."""
    for name, group in FIELDS.items():
        new_val = getattr(incoming, name)
        owner = _owner(base, name)
        if _empty(new_val):
            continue
        if name == "authors" and incoming.authors_truncated and not base.authors_truncated and base.authors:
            prov.setdefault(name, owner)
            continue  # a cut list never replaces a full one
        old_val = getattr(base, name)
        if not _empty(old_val) and (better := _better(name, base, incoming, src, again)):
            _take_better(out, base, incoming, src, prov, name, keep_old=better == "old")
            continue
        if _empty(old_val) or _rank(src, group) >= _rank(owner, group):
            setattr(out, name, new_val)
            if name == "authors":
                out.authors_truncated = incoming.authors_truncated
            prov[name] = src
            if (owner != src or again) and old_val != new_val:
                _stash(out, owner, name, old_val, base)
        else:
            prov.setdefault(name, owner)
            if new_val != old_val:
                _stash(out, src, name, new_val, incoming)


def _given_is_initials(name: str) -> bool:
    """Whether a name's given names are written as initials only ("King, C.", "C. King")."""
    given = name.split(",", 1)[1] if "," in name else " ".join(name.split()[:-1])
    words = re.findall(r"\w+", _fold(given))
    return bool(words) and all(len(w) == 1 for w in words)


def _poorer(short: list[str], full: list[str]) -> bool:
    """Whether ``short`` names only people of ``full`` (by surname) and drops some of them or
    abbreviates a name ``full`` writes out: the journal's "King, C." of arXiv's "Carol King",
    "Dan Brown"."""
    left = [surname(n) for n in full]
    abbreviated = False
    for name in short:
        key = surname(name)
        if key not in left:
            return False  # someone ``full`` does not name: another list, not a shorter one
        at = left.index(key)
        abbreviated |= _given_is_initials(name) and not _given_is_initials(full[at])
        left[at] = "\0"  # each of ``full`` answers for one name of ``short``
    return abbreviated or len(short) < len(full)


def _fuller_list(old: list[str], new: list[str]) -> str | None:
    """Which author list, "old" or "new", is a fuller list of the same people than the other;
    None when neither is (then the source trusted more for authors decides)."""
    if old and new and _poorer(new, old):
        return "old"
    if old and new and _poorer(old, new):
        return "new"
    return None


_PRECISION = {"year": 4, "month": 7}  # a date known to the year or month: the characters that hold


def _date_known(p: Paper, source: str) -> int:
    """How many characters of ``published`` the record ``source`` gave knew (10: the day): a
    BibTeX entry's or a Zotero item's year or month alone is dated its first day."""
    slot = p.extra.get(source.split(":", 1)[0])
    return _PRECISION.get(str(slot.get("date_precision")) if isinstance(slot, dict) else "", 10)


def _more_precise(base: Paper, incoming: Paper, src: str) -> str | None:
    """Which published date is more precise than the other and agrees with it, "old" or "new"
    (Hugging Face's 2026-02-26 over CVPR's ``year = {2026}``); None when they disagree."""
    old_known, new_known = _date_known(base, _owner(base, "published")), _date_known(incoming, src)
    old, new = base.published or "", incoming.published or ""
    if new_known < old_known and old[:new_known] == new[:new_known]:
        return "old"
    if old_known < new_known and old[:old_known] == new[:old_known]:
        return "new"
    return None


def _settle_precision(out: Paper, base: Paper, incoming: Paper, src: str, owner: str | None) -> None:
    """The shown date's source slot says that date's precision (``date_precision``, none for a
    day). Two records of one source share a slot, so the union of their ``extra`` could say
    "month" of the day the other one gave; a later record of that month then found the day
    "no more precise" and replaced it (a .bib of ``month = jul``, one of ``date = {2025-07-15}``,
    the first again: 2025-07-01)."""
    slot = out.extra.get(owner.split(":", 1)[0]) if owner and out.published else None
    if not isinstance(slot, dict):
        return
    new = _date_known(incoming, src) if owner == src and out.published == incoming.published else 0
    old = _date_known(base, _owner(base, "published")) if out.published == base.published else 0
    known = max(new, old)  # both, when they gave the same date: the better known (a day, over "2025-07")
    precision = next((name for name, n in _PRECISION.items() if n == known), None)
    if precision:
        slot["date_precision"] = precision
    else:
        slot.pop("date_precision", None)


def _better(name: str, base: Paper, incoming: Paper, src: str, again: bool) -> str | None:
    """Which record's value, "old" or "new", holds more of the same thing than the other's, so it
    wins whichever source sent it and whichever came first; None: the sources' trust decides.
    Authors: the fuller list of the same people (two records of one paper, or one id twice in a
    run; a source updating its own record goes by trust). Published: the more precise of two
    dates that agree."""
    if name == "authors" and (incoming.id != base.id or again):
        return _fuller_list(base.authors, incoming.authors)
    if name == "published":
        return _more_precise(base, incoming, src)
    return None


def _take_better(
    out: Paper, base: Paper, incoming: Paper, src: str, prov: dict[str, str], name: str, keep_old: bool
) -> None:
    """The better value (``_better``) is shown; the other is kept under its source's ``extra``
    slot, even when both records are of one source (two of the user's files): nothing is lost."""
    owner = _owner(base, name)
    if keep_old:
        prov.setdefault(name, owner)
        _stash(out, src, name, getattr(incoming, name), incoming)
        return
    setattr(out, name, getattr(incoming, name))
    if name == "authors":
        out.authors, out.authors_truncated = list(incoming.authors), incoming.authors_truncated
    prov[name] = src
    _stash(out, owner, name, getattr(base, name), base)


def on_arxiv(url: str) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return host == "arxiv.org" or host.endswith(".arxiv.org")


# --- finding the record to merge into ------------------------------------------------------


class Matcher:
    """Lookup of match keys over the store, built on first need and kept current as records are
    merged; abstract keys only when an untitled record (a seed page) has to be matched."""

    HOW = {"a": "linked arXiv id", "t": "title + first author", "b": "abstract + first author"}

    def __init__(self, store: Store) -> None:
        self.store = store
        self._ids: dict[str, str] = {}  # key -> paper id
        self._keys_of: dict[str, list[str]] = {}  # paper id -> its keys
        self._seen: list[Paper] = []  # remembered this run (some not stored yet)
        self._titles = False
        self._abstracts = False

    def _add(self, key: str, pid: str, stored: bool = False) -> None:
        """A key of ``pid``; of the stored records, the first to have a key keeps it."""
        if stored:
            self._ids.setdefault(key, pid)
        else:
            self._ids[key] = pid
        self._keys_of.setdefault(pid, []).append(key)

    def _title_keys(self, p: Paper) -> list[str]:
        return [f"{kind}:{k}" for kind, k in (("a", linked_arxiv_id(p)), ("t", title_key(p))) if k]

    def _build_titles(self) -> None:
        for pid, title, first, extra, abstract in self.store.title_match_rows():
            p = Paper(
                id=pid,
                title=title,
                authors=[first] if first else [],
                abstract=abstract or "",
                extra=json.loads(extra) if extra else {},
            )
            keys = self._title_keys(p)
            if abstract and (k := abstract_key(p)):  # untitled records are found by abstract
                keys.append(f"b:{k}")
            for k in keys:
                self._add(k, pid, stored=True)
        self._titles = True

    def _build_abstracts(self) -> None:
        for pid, abstract, first in self.store.abstract_match_rows():
            if k := abstract_key(Paper(id=pid, title="", abstract=abstract, authors=[first] if first else [])):
                self._add(f"b:{k}", pid, stored=True)
        for p in self._seen:
            if k := abstract_key(p):
                self._add(f"b:{k}", p.id)
        self._abstracts = True

    def remember(self, p: Paper, replaces: str | None = None) -> None:
        if replaces and replaces != p.id:
            for k in self._keys_of.pop(replaces, []):
                if self._ids.get(k) == replaces:
                    self._ids[k] = p.id
                    self._keys_of.setdefault(p.id, []).append(k)
        for k in self._title_keys(p):
            self._add(k, p.id)
        if (self._abstracts or _title_is_synthetic(p)) and (b := abstract_key(p)):
            self._add(f"b:{b}", p.id)
        self._seen.append(p)

    def stored(self) -> None:
        """The remembered records are in the store now; a later abstract scan finds them."""
        self._seen.clear()

    def find(self, p: Paper) -> tuple[str, str] | None:
        """(id of the record ``p`` belongs to, how it matched), or None for a new paper."""
        if not self._titles:
            self._build_titles()
        keys = self._title_keys(p)
        if ak := abstract_key(p):
            if _title_is_synthetic(p) and not self._abstracts:
                self._build_abstracts()  # an untitled record can only be found by its abstract
            keys.append(f"b:{ak}")
        mine = linked_arxiv_id(p)
        for key in keys:
            pid = self._ids.get(key)
            if pid is None or pid == p.id:
                continue
            if ARXIV_ID.match(pid) and mine and pid != mine:
                continue  # two different preprints that happen to share a title
            return pid, self.HOW[key[0]]
        return None


def ingest_with_merge(
    store: Store,
    papers: Iterable[Paper],
    batch_size: int = 1000,
    matcher: Matcher | None = None,
    errors: Sequence[str] = (),
) -> IngestSummary:
    """Merge each record into the paper it belongs to, then upsert a chunk at a time. Every good
    record is counted once, as added, updated or unchanged (one folded into a paper of the same
    chunk too), so they add up to the records read; ``merged`` says how many of them joined a
    paper of another id or brought a new source. ``errors``: the records the source skipped,
    counted once ``papers`` is read (a file's reader adds to them as it goes)."""
    matcher = matcher or Matcher(store)  # pass one in to reuse its index across calls
    total = IngestSummary()
    read: set[str] = set()  # the ids of this run's records so far: one that comes again is no update
    it = iter(papers)
    while chunk := list(islice(it, batch_size)):
        total = total + _ingest_chunk(store, chunk, matcher, read)
    publish(store)  # readers see the whole ingest at once
    total.rejected += len(errors)
    total.errors.extend(errors)
    return total


def _ingest_chunk(store: Store, chunk: list[Paper], matcher: Matcher, read: set[str]) -> IngestSummary:
    """One chunk merged and written in one transaction, with the ids merges moved (old -> new,
    ``Store.upsert``'s ``moved``): the old id's row goes, and the id names the paper from then on.
    The upsert counts each paper once; the records folded into a paper after its first are
    counted by what the paper became against its stored version (``_Folded``), so a re-run of
    the same file is "unchanged" however its records' fields took turns in between."""
    pending: dict[str, Paper] = {}
    moved: dict[str, str] = {}
    folded = _Folded()
    merged = 0
    for p in chunk:
        base, how, earlier = _base_of(store, matcher, pending, moved, p)
        if base is None:
            result = p
        elif _exported(base, p):  # a re-import of the paper's own export: it stays as it is
            result = base
        else:
            result = merge_papers(base, p, how, again=p.id in read)
        read.add(p.id)
        folded.note(result.id, base, earlier, result)
        if base is not None:
            src_new = any(src not in base.sources for src in p.sources)
            merged += result.content_hash() != base.content_hash() and (src_new or how not in _OWN_ID)
            _note_moves(moved, pending, result.id, base.id, p.id)
        pending[result.id] = venues.apply(result)
        matcher.remember(result, replaces=base.id if base is not None else None)
    s = store.upsert(pending.values(), moved=moved) + folded.summary(pending)
    s.merged += merged
    matcher.stored()
    return s


def _exported(base: Paper, p: Paper) -> bool:
    """Whether ``p`` is its file source's export of ``base``, unedited (``Source.exported``): it
    brings nothing, and merging it would count the paper updated for its source's name alone."""
    source = registry.load().get(p.sources[0]) if p.sources else None
    return bool(source and source.exported and source.exported(base, p))


class _Folded:
    """The records folded into a paper of the chunk after its first: one that changed nothing
    is unchanged; one that changed it, by what the paper became against its stored version."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}  # paper id -> records that changed it after its first
        self.stored: dict[str, str | None] = {}  # paper id -> its stored content hash (None: new)
        self.unchanged = 0

    def note(self, pid: str, base: Paper | None, earlier: bool, result: Paper) -> None:
        if base is None or not earlier:
            self.stored[pid] = base.content_hash() if base is not None else None
            return
        changed = result.content_hash() != base.content_hash()  # the chunk's own paper, maybe moved
        self.count[pid] = self.count.pop(base.id, 0) + changed
        self.stored[pid] = self.stored.pop(base.id, None)
        self.unchanged += not changed

    def summary(self, pending: dict[str, Paper]) -> IngestSummary:
        s = IngestSummary(unchanged=self.unchanged)
        for pid, n in self.count.items():
            same = pending[pid].content_hash() == self.stored.get(pid)
            s.unchanged += n * same
            s.updated += n * (not same)
        return s


def _note_moves(moved: dict[str, str], pending: dict[str, Paper], new: str, *olds: str) -> None:
    """The ids that now name the paper ``new``: the paper's own id before a move, and the id of
    a record that joined it (``doi:…``, ``bib:…``), so a link, a tag or a ``show`` of either
    finds it; an id that ended up in ``new`` earlier in the chunk follows it."""
    for old in olds:
        if old != new:
            pending.pop(old, None)
            moved.update({k: new for k, v in moved.items() if v == old})
            moved[old] = new


_OWN_ID = ("same id", "linked arXiv id")  # a record found by its own id, not by a match


def _base_of(
    store: Store, matcher: Matcher, pending: dict[str, Paper], moved: dict[str, str], p: Paper
) -> tuple[Paper | None, str, bool]:
    """The paper ``p`` belongs to, how it was found, and whether it is one of this chunk's
    (``pending``). By ``p``'s own id first: an id a merge moved names the paper it moved to
    (``Store.resolve``; ``moved`` for this chunk's moves), so a record that comes again rejoins
    its paper instead of standing apart under its old id."""
    stored = store.resolve(p.id)
    pid = moved.get(stored or p.id, stored or p.id)
    links = any(isinstance(v, dict) and v.get("arxiv_id") == p.id for v in p.extra.values())
    how = "linked arXiv id" if links else "same id"
    if pid not in pending and stored is None and (hit := matcher.find(p)) is not None:
        pid, how = hit
    if (earlier := pending.get(pid)) is not None:
        return earlier, how, True
    return store.get(pid), how, False

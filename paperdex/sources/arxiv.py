"""arXiv: incremental OAI-PMH harvesting, the Atom API for id look-ups, and the RSS daily
listing for what was announced today.

arXiv's terms allow one request every 3 s across all its APIs: every call goes through one
:class:`HttpClient` with that interval, which ``paperdex sync`` shares across its arXiv jobs.
Harvests ask for ``arXivRaw`` (every version with its date) and resume at their saved
resumption token (docs/sources.md, "arXiv").
"""

from __future__ import annotations

import functools
import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import click
import feedparser

from paperdex.paper import ARXIV_ID, ARXIV_ID_SHAPE, CATEGORY_TYPED, Paper
from paperdex.sources import completeness, merge
from paperdex.sources.http import HttpClient, SourceError, UnreadableResponse
from paperdex.sources.registry import Source, as_list, data_lines, register, trust, utc_today, words
from paperdex.store import IngestSummary, Store
from paperdex.text.latex import decode_accents, decode_name

log = logging.getLogger("paperdex.sources")

SOURCE = "arxiv"
# "arxiv-rss": ranked below OAI/API (see its ranks below), a listing never overwrites them
RSS_SOURCE = completeness.LISTING_SOURCE
OAI_URL = "https://oaipmh.arxiv.org/oai"
API_URL = "https://export.arxiv.org/api/query"
RSS_URL = "https://rss.arxiv.org/rss/"
MIN_INTERVAL = 3.0  # seconds between requests to arXiv, across all its APIs
EARLIEST = "2005-09-16"  # the OAI-PMH earliestDatestamp; an earlier `from` is refused

NS = {"oai": "http://www.openarchives.org/OAI/2.0/", "raw": "http://arxiv.org/OAI/arXivRaw/"}

# The service's ListSets answer (copied from it): groups, archives and categories.
SETS = frozenset(" ".join(data_lines("arxiv-sets.txt")).split())
# a set by what it holds: "cs:cs:CL" by "cs.CL", "physics:hep-th" by "hep-th"
_SET_BY_CATEGORY = {(".".join(s.split(":")[1:]) or s): s for s in sorted(SETS, key=len)}


def check_set(spec: str) -> str:
    """The set spec if the service knows it; else a ValueError that shows the right spelling
    (``cs.CL`` -> ``cs:cs:CL``, ``hep-th`` -> ``physics:hep-th``)."""
    spec = spec.strip()
    if spec in SETS:
        return spec
    if hint := _SET_BY_CATEGORY.get(spec) or _SET_BY_CATEGORY.get(spec.replace(":", ".")):
        raise ValueError(f"arXiv OAI-PMH set {spec!r} does not exist: write it as {hint!r}")
    raise ValueError(
        f"arXiv OAI-PMH set {spec!r} does not exist; sets are a group (cs, math, physics, ...), "
        "an archive (physics:hep-th) or a category (cs:cs:CL)"
    )


def _ws(text: str | None) -> str:
    return " ".join((text or "").split())


_ID_IN_TEXT = re.compile(
    r"(?:(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/|oai:arXiv\.org:|arXiv:\s?)?"
    rf"({ARXIV_ID_SHAPE})(v\d+)?(?:\.pdf)?",
    re.I,
)


def normalise_id(text: str) -> str | None:
    """An arXiv id (with its version, if given) from ``2510.05491``, ``arXiv:hep-th/9901002v1``,
    ``https://arxiv.org/abs/2510.05491v2`` or ``oai:arXiv.org:math/0510544``; None otherwise."""
    m = _ID_IN_TEXT.fullmatch(text.strip())
    return m.group(1) + (m.group(2) or "") if m else None


# --- author lists ------------------------------------------------------------------------------

_SUFFIX = re.compile(r"^(?:jr|sr|i{2,3}|iv)\.?$", re.I)
_AND = re.compile(r"(?:^|\s+)and(?=\s|$)")
_ET_AL = re.compile(r"^(?:and\s+)?et(?:\.\s*|\s+)al\.?$|^others$", re.I)
# "ATLAS Collaboration: G. Aad, B. Abbott" / "The CMS Collaboration: ..." / "for the LIGO
# Scientific Collaboration": a group the authors sign for, not an author
_COLLAB_PREFIX = re.compile(r"^\s*((?:the\s+)?[^,:;]{0,80}?\bcollaborations?)\s*:\s*", re.I)


def cut_author_list(raw: str | None) -> bool:
    """Whether an arXiv author string ends in "et al." (the list was cut by the submitter)."""
    return bool(re.search(r"(?:^|[,\s])et(?:\.\s*|\s+)al\.?\s*$", raw or "", re.I))


def split_authors(raw: str) -> tuple[list[str], list[str | None]]:
    """(names, affiliations), aligned, of arXiv's one-string author list: commas and "and"
    separate authors, parentheses hold the affiliation of the author before them, a bare suffix
    ("Jr.") belongs to the name before; a leading "X Collaboration:" and "et al." are not names."""
    names: list[str] = []
    affs: list[str | None] = []
    buf: list[str] = []
    paren: list[str] = []
    depth = 0
    raw = _COLLAB_PREFIX.sub("", raw, count=1)

    def flush() -> None:
        text = "".join(buf)
        buf.clear()
        for piece in _AND.split(text):
            piece = re.sub(r"\s+et(?:\.\s*|\s+)al\.?$", "", " ".join(piece.split()).strip(" ;"), flags=re.I)
            if not piece or _ET_AL.match(piece):
                continue
            if _SUFFIX.match(piece) and names:
                names[-1] = f"{names[-1]} {piece}"
                continue
            names.append(piece)
            affs.append(None)

    for ch in raw:
        if ch == "(":
            if depth == 0:
                flush()
            else:
                paren.append(ch)
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                aff = " ".join("".join(paren).split())
                paren.clear()
                if aff and names:
                    affs[-1] = f"{affs[-1]}; {aff}" if affs[-1] else aff
            else:
                paren.append(ch)
        elif depth:
            paren.append(ch)
        elif ch == ",":
            flush()
        else:
            buf.append(ch)
    flush()
    decoded = [decode_name(n) for n in names]
    keep = [i for i, n in enumerate(decoded) if n]
    return [decoded[i] for i in keep], [decode_name(x) if x else None for x in (affs[i] for i in keep)]


def read_authors(raw: str) -> tuple[list[str], bool, dict[str, Any]]:
    """(names, whether "et al." cut the list, the affiliations and collaboration it names) of
    an arXiv author string; the last as ``extra`` fields, None when there are none."""
    names, affs = split_authors(raw)
    group = _COLLAB_PREFIX.match(raw)
    who = {"affiliations": affs if any(affs) else None, "collaboration": _ws(group.group(1)) if group else None}
    return names, cut_author_list(raw), who


def abstract_text(raw: str | None) -> str:
    """An arXiv abstract with its paragraphs: arXiv wraps abstract lines and starts a new
    paragraph with an indented line, so a line break followed by spaces is a paragraph break
    (kept as a blank line) and any other line break is a space."""
    raw = (raw or "").strip("\n")
    if "\n" not in raw.strip():
        return _ws(raw)
    paragraphs: list[list[str]] = [[]]
    for line in raw.split("\n"):
        if (not line.strip() or line[:1].isspace()) and paragraphs[-1]:
            paragraphs.append([])
        if line.strip():
            paragraphs[-1].append(line)
    return "\n\n".join(_ws(" ".join(p)) for p in paragraphs if p)


def title_text(raw: str | None) -> str:
    """A title on one line (the snapshot and OAI wrap long titles), TeX accents outside math
    decoded (``M\\"obius`` -> ``Möbius``); math and other TeX kept as written."""
    return decode_accents(_ws(raw))


def _paper(raw_id: str, title: str | None, source: str = SOURCE, extra: dict | None = None, **fields: Any) -> Paper:
    """A Paper of one arXiv record (OAI-PMH, the API, the RSS listing); the version and
    ``extra``'s non-empty fields under ``extra[source]``."""
    if not (m := ARXIV_ID.match(raw_id)):
        bare = re.sub(r"v\d+$", "", raw_id)
        raise ValueError(f"bad arXiv id {bare!r}")
    aid, version = m.groups()
    if not (title := title_text(title)):
        raise ValueError("empty title")
    kept = {k: v for k, v in {"version": version, **(extra or {})}.items() if v not in (None, "", [], {})}
    return Paper(id=aid, title=title, sources=[source], extra={source: kept} if kept else {}, **fields)


# arXiv's metadata fields (OAI-PMH and the snapshot spell them alike) -> their ``extra`` names
META_FIELDS = {"doi": "doi", "journal-ref": "journal_ref", "report-no": "report_no", "license": "license"}


# --- OAI-PMH ---------------------------------------------------------------------------------


@dataclass
class OaiPage:
    papers: list[Paper] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    token: str | None = None
    response_date: str | None = None  # the service's clock, UTC: YYYY-MM-DD
    error_code: str | None = None  # OAI-PMH <error code=...>, e.g. noRecordsMatch
    error_text: str = ""


def parse_oai_page(body: bytes | str) -> OaiPage:
    """One ListRecords (or GetRecord) response, its records in the ``arXivRaw`` format; a page
    that is not well-formed XML (truncated) is a SourceError: a partial page is not trusted."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise UnreadableResponse(f"malformed OAI-PMH response ({e}); the page was truncated or is not XML") from e
    if root.tag != f"{{{NS['oai']}}}OAI-PMH":
        raise SourceError(f"not an OAI-PMH response (root element {root.tag})")
    page = OaiPage(response_date=_ws(root.findtext("oai:responseDate", "", NS))[:10] or None)
    err = root.find("oai:error", NS)
    if err is not None:
        page.error_code = err.get("code", "unknown")
        page.error_text = _ws(err.text)
        return page
    if (lr := root.find("oai:ListRecords", NS)) is None and (lr := root.find("oai:GetRecord", NS)) is None:
        raise SourceError("OAI-PMH response has neither ListRecords, GetRecord nor error")
    for n, rec in enumerate(lr.findall("oai:record", NS), 1):
        header = rec.find("oai:header", NS)
        ident = _ws(header.findtext("oai:identifier", "", NS)) if header is not None else ""
        if header is not None and header.get("status") == "deleted":
            page.deleted.append(ident)
            continue
        try:
            page.papers.append(oai_record(rec))
        except ValueError as e:
            page.errors.append(f"OAI record {n} ({ident or 'no identifier'}): {e}; skipped")
    page.token = _ws(lr.findtext("oai:resumptionToken", "", NS)) or None
    return page


def _rfc_day(text: str) -> str:
    """'Wed, 25 Jun 2008 15:29:38 GMT' -> '2008-06-25' (UTC)."""
    try:
        return parsedate_to_datetime(text).astimezone(UTC).date().isoformat()
    except (TypeError, ValueError) as e:
        raise ValueError(f"bad version date {text!r}") from e


def oai_record(rec: ET.Element) -> Paper:
    """A Paper from one ``arXivRaw`` record, which dates version 1 (``published``) and the
    latest (``updated``)."""
    meta = rec.find("oai:metadata/raw:arXivRaw", NS)
    if meta is None:
        raise ValueError("no arXivRaw metadata (metadataPrefix must be arXivRaw)")

    def text(tag: str) -> str:
        return _ws(meta.findtext(f"raw:{tag}", "", NS))

    versions = [
        (v.get("version"), _rfc_day(_ws(v.findtext("raw:date", "", NS)))) for v in meta.findall("raw:version", NS)
    ]
    if not versions:
        raise ValueError("no <version> elements")
    authors, cut, who = read_authors(text("authors"))
    return _paper(
        text("id"),
        text("title"),
        extra={"version": versions[-1][0], **{name: text(tag) for tag, name in META_FIELDS.items()}, **who},
        authors=authors,
        authors_truncated=cut,
        abstract=abstract_text(meta.findtext("raw:abstract", "", NS)),
        categories=text("categories").split(),
        published=versions[0][1],
        updated=versions[-1][1],
        comment=text("comments") or None,
    )


@dataclass
class Harvest:
    """One OAI-PMH harvest: a set, the days of records changed (inclusive; without ``from_``,
    from where the last harvest stopped, or ``start`` for the first; without ``until``, up to
    now) and the categories kept (``cs.CL``, or an archive: ``cs``; none: all)."""

    set_spec: str = "cs"
    from_: str | None = None
    until: str | None = None
    categories: Iterable[str] | None = None
    start: str | None = None
    base_url: str = OAI_URL


def harvest(store: Store, http: HttpClient, job: Harvest, *, today: date | None = None) -> IngestSummary:
    """Harvest ``job``, page by page: an unfinished window resumes at its saved resumption token,
    a finished one makes the next start at the ``responseDate`` it began on (docs/sources.md)."""
    set_spec = check_set(job.set_spec)
    key = f"arxiv:oai:{set_spec}"
    from_, until, token, began = _window(job, set_spec, json.loads(store.get_state(key) or "{}"), today)
    # one match index for the whole harvest, not one per page
    ingest = functools.partial(merge.ingest_with_merge, matcher=merge.Matcher(store))
    wanted = [c.strip() for c in job.categories or [] if c.strip()]
    total = IngestSummary()
    restarted = False
    while True:
        if token:
            params = {"verb": "ListRecords", "resumptionToken": token}
        else:
            params = {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": set_spec, "from": from_}
            if until:
                params["until"] = until
        page = http.fetch(job.base_url, lambda r: parse_oai_page(r.content), params)
        if page.error_code == "badResumptionToken" and token and not restarted:
            log.warning("arXiv %s: resumption token expired; restarting the window from %s", set_spec, from_)
            token, restarted, began = None, True, None
            continue
        if page.error_code and page.error_code != "noRecordsMatch":
            raise SourceError(_oai_error(page, set_spec))
        began = began or page.response_date
        if page.deleted:
            log.info("arXiv %s: %d deleted record(s) reported; kept in the store", set_spec, len(page.deleted))
        s = ingest(store, [p for p in page.papers if _in_categories(p, wanted)])
        s.rejected += len(page.errors)
        s.errors.extend(page.errors)
        total = total + s
        token = page.token
        if token:
            state = {"from": from_, "until": until, "token": token, "began": began}
            store.set_state(key, json.dumps({k: v for k, v in state.items() if v is not None}))
            continue
        # the next harvest starts on the day the service said this one began (UTC), or at the
        # end of an explicit window
        store.set_state(key, json.dumps({"next_from": until or began or from_}))
        return total


def _window(
    job: Harvest, set_spec: str, saved: dict[str, Any], today: date | None
) -> tuple[str, str | None, str | None, str | None]:
    """(from, until, resumption token, began) of a harvest: the job's days, else the saved state's."""
    for name, value in (("from", job.from_), ("until", job.until), ("start", job.start)):
        if value is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(value)):
            raise ValueError(f"arXiv {name} {value!r}: expected a day YYYY-MM-DD")
    from_, until, token, began = job.from_, job.until, None, None
    if from_ is None and saved.get("token"):
        from_, until, token, began = saved["from"], saved.get("until"), saved["token"], saved.get("began")
        log.info("arXiv %s: resuming harvest from %s at its saved resumption token", set_spec, from_)
    elif from_ is None:
        from_ = saved.get("next_from") or saved.get("harvested_until") or job.start
        if from_ is None:
            raise ValueError(
                f"first harvest of arXiv set {set_spec!r}: give a first day (--from YYYY-MM-DD, or start = "
                "in sources.toml); without one OAI-PMH would send the whole archive"
            )
    if from_ < EARLIEST:
        log.info("arXiv: OAI-PMH datestamps start at %s; harvesting from there", EARLIEST)
        from_ = EARLIEST
    latest = ((today or utc_today()) + timedelta(days=1)).isoformat()
    if until is not None and until > latest:
        log.info("arXiv: until %s is after today (UTC); harvesting up to now", until)
        until = None
    return from_, until, token, began


def _oai_error(page: OaiPage, set_spec: str) -> str:
    msg = f"arXiv OAI-PMH error {page.error_code}: {page.error_text}"
    if "Set does not exist" in page.error_text:
        msg += f" (set {set_spec!r}; sets are written cs, physics:hep-th, cs:cs:CL)"
    elif "until date too late" in page.error_text:
        msg += " (until may be at most one day after today's UTC date; leave it out to harvest up to now)"
    elif "start date too early" in page.error_text:
        msg += f" (from may not be before {EARLIEST})"
    return msg


# Categories arXiv keeps under two names (its category taxonomy's aliases): a paper listed as
# math.NA is in the set cs:cs:NA too, and a harvest of cs.NA must keep it.
ALIASES = {
    "cs.NA": "math.NA",
    "cs.SY": "eess.SY",
    "cs.IT": "math.IT",
    "math.MP": "math-ph",
    "q-fin.EC": "econ.GN",
    "math.ST": "stat.TH",
}
ALIASES.update({v: k for k, v in list(ALIASES.items())})


def _in_categories(p: Paper, wanted: list[str]) -> bool:
    if not wanted:
        return True
    cats = {*p.categories, *(ALIASES[c] for c in p.categories if c in ALIASES)}
    return any(c == w or ("." not in w and c.split(".")[0] == w) for c in cats for w in wanted)


# --- Atom API --------------------------------------------------------------------------------


def _feed(body: bytes | str, what: str) -> feedparser.FeedParserDict:
    feed = feedparser.parse(body)
    if feed.bozo and not isinstance(feed.bozo_exception, feedparser.CharacterEncodingOverride):
        raise UnreadableResponse(f"malformed arXiv {what}: {feed.bozo_exception}")
    return feed


def parse_atom(body: bytes | str) -> tuple[list[Paper], list[str]]:
    """Papers of an arXiv API response, and its errors (a malformed id is answered with an entry
    whose id is ``.../api/errors#...``); SourceError on a malformed or truncated feed."""
    feed = _feed(body, "API response")
    papers, errors = [], []
    for n, e in enumerate(feed.entries, 1):
        eid = e.get("id", "")
        if "/api/errors" in eid:
            errors.append(f"arXiv API error: {_ws(e.get('summary', e.get('title', '')))}")
            continue
        try:
            papers.append(_atom_entry(e))
        except (ValueError, KeyError) as ex:
            errors.append(f"arXiv API entry {n} ({eid or 'no id'}): {ex}; skipped")
    return papers, errors


def api_error_ids(errors: Iterable[str]) -> set[str]:
    """The ids that API error messages name ("incorrect id format for abc" -> "abc")."""
    return {m.group(1) for e in errors if (m := re.search(r"\bfor (\S+)$", e))}


def _atom_entry(e: feedparser.FeedParserDict) -> Paper:
    m = re.search(r"arxiv\.org/abs/(.+)$", e.get("id", ""))
    if not m:
        raise ValueError("no arXiv abs link in <id>")
    primary = (e.get("arxiv_primary_category") or {}).get("term")
    cats = [t["term"] for t in e.get("tags", []) if t.get("term")]
    if primary:
        cats = [primary, *[c for c in cats if c != primary]]
    return _paper(
        m.group(1),
        e.get("title"),
        extra={"doi": e.get("arxiv_doi"), "journal_ref": _ws(e.get("arxiv_journal_ref"))},
        authors=[decode_name(_ws(a.get("name"))) for a in e.get("authors", []) if _ws(a.get("name"))],
        abstract=abstract_text(e.get("summary")),
        categories=list(dict.fromkeys(cats)),
        published=(e.get("published") or "")[:10] or None,
        updated=(e.get("updated") or "")[:10] or None,
        comment=_ws(e.get("arxiv_comment")) or None,
    )


def fetch_ids(
    http: HttpClient, ids: Iterable[str], *, base_url: str = API_URL, chunk: int = 100
) -> tuple[list[Paper], list[str]]:
    """Look papers up by arXiv id (any style, or an arxiv.org link); unknown ids are reported. A
    chunk holding a malformed id gets HTTP 400: that id is reported, the rest asked again."""
    given = [(raw, normalise_id(raw)) for raw in (r.strip() for r in ids) if raw]
    errors = [f"not an arXiv id: {raw!r}" for raw, aid in given if aid is None]
    wanted = list(dict.fromkeys(aid for _, aid in given if aid))
    papers: list[Paper] = []
    queue = [wanted[i : i + chunk] for i in range(0, len(wanted), chunk)]
    while queue:
        part = queue.pop(0)
        resp, (got, errs) = http.fetch(
            base_url,
            lambda r: (r, parse_atom(r.content)),
            {"id_list": ",".join(part), "max_results": len(part)},
            accept=(400,),
        )
        if resp.status_code == 400:
            named = api_error_ids(errs) & set(part)
            if named:
                errors += errs
            elif len(part) == 1:
                errors.append(f"arXiv API refused {part[0]} (HTTP 400: {'; '.join(errs) or 'no reason given'})")
            rest = [i for i in part if i not in named]
            if rest and named:
                queue.insert(0, rest)
            elif len(part) > 1:  # the body names no id of this chunk: halve it to find the bad one
                queue[:0] = [part[: len(part) // 2], part[len(part) // 2 :]]
            continue
        papers += got
        errors += errs
        found = {p.id for p in got} | {p.id + (p.extra.get("arxiv", {}).get("version") or "") for p in got}
        errors += [f"arXiv API: no paper {i}" for i in part if i not in found]
    return papers, errors


# --- RSS daily listing -----------------------------------------------------------------------


def parse_rss(body: bytes | str) -> tuple[list[Paper], list[str]]:
    """Today's announcements of one listing (RSS 2.0 or Atom) as the source ``arxiv-rss``, with
    the day they were ``listed``; SourceError for the feed's error page (an unknown category)."""
    feed = _feed(body, "RSS feed")
    title = _ws(feed.feed.get("title"))
    if title.startswith("Feed error"):
        raise SourceError(f"arXiv RSS: {_ws(feed.feed.get('description') or feed.feed.get('subtitle')) or title}")
    # RSS: the channel's pubDate, in arXiv's time zone
    day = completeness.local_day(feed.feed.get("published")) if feed.feed.get("published_parsed") else None
    papers, errors = [], []
    for n, e in enumerate(feed.entries, 1):
        found = (re.search(r"(?:oai:arXiv\.org:|arxiv\.org/abs/)(\S+)$", e.get(k, "")) for k in ("id", "link"))
        aid = next((a for m in found if m and (a := normalise_id(m.group(1)))), None)
        if not aid or not _ws(e.get("title")):
            errors.append(f"RSS entry {n}: no arXiv id or title; skipped")
            continue
        kind = e.get("arxiv_announce_type", "new")
        abstract = re.sub(r"^arXiv:\S+\s+Announce Type:\s*\S+\s*Abstract:\s*", "", _ws(e.get("summary")))
        authors, cut, who = read_authors(e.get("author", ""))
        extra = {
            "announce_type": kind,
            "doi": _ws(e.get("arxiv_doi")),
            "journal_ref": _ws(e.get("arxiv_journal_reference")),
            "license": _ws(e.get("rights")),
            **who,
        }

        papers.append(
            _paper(
                aid,
                e.get("title"),
                RSS_SOURCE,
                extra,
                authors=authors,
                authors_truncated=cut,
                abstract=abstract,
                categories=[t["term"] for t in e.get("tags", []) if t.get("term")],
                listed=(day or completeness.local_day(e.get("published"))) if kind in ("new", "cross") else None,
            )
        )
    return papers, errors


def read_listing(
    store: Store,
    http: HttpClient,
    listing: str,
    *,
    base_url: str = RSS_URL,
    api_url: str = API_URL,
) -> IngestSummary:
    """Today's listing into the store, recorded for the completeness check, then the back-fill
    of the papers recent listings named (sources/completeness.py)."""
    if not re.fullmatch(rf"{CATEGORY_TYPED}(?:\+{CATEGORY_TYPED})*", listing):  # categories joined by +
        raise ValueError(f"not an arXiv listing: {listing!r} (e.g. cs.CL, cs, or cs.CV+cs.LG)")
    url = base_url.rstrip("/") + "/" + listing
    body, (papers, errors) = http.fetch(url, lambda r: (r.content, parse_rss(r.content)))
    day, skip = completeness.schedule(body)
    announced = [p.id for p in papers if p.listed]
    if day or announced:
        completeness.record(store, listing, day or next(p.listed for p in papers if p.listed), announced, skip)
    matcher = merge.Matcher(store)  # one match index for the listing and its back-fill
    s = merge.ingest_with_merge(store, papers, matcher=matcher, errors=errors)
    return s + completeness.backfill(store, listing, lambda ids: fetch_ids(http, ids, base_url=api_url), matcher)


# --- the source, as paperdex ingest / sync / the merge see it --------------------------------

URL_KEYS = (("oai_url", OAI_URL), ("api_url", API_URL), ("rss_url", RSS_URL))


def _client(section: dict[str, Any]) -> HttpClient:
    """One client for every arXiv API; a ``min_interval`` under 3 s only where no URL is arXiv's."""
    min_interval = float(section.get("min_interval", MIN_INTERVAL))
    if min_interval < MIN_INTERVAL and any(merge.on_arxiv(section.get(k) or d) for k, d in URL_KEYS):
        log.warning("arXiv allows one request every %.0f s; ignoring min_interval = %s", MIN_INTERVAL, min_interval)
        min_interval = MIN_INTERVAL
    return HttpClient(min_interval=min_interval)


def _run(
    store: Store, http: HttpClient, opts: dict[str, Any], section: dict[str, Any], today: date | None
) -> tuple[list[Paper], list[str]] | IngestSummary:
    """ids -> API look-up; listing -> today's RSS; else an OAI harvest."""
    urls = {k: opts.get(k) or section.get(k) or d for k, d in URL_KEYS}
    if ids := opts.get("ids") or opts.get("arxiv_ids"):
        return fetch_ids(http, words(ids), base_url=urls["api_url"])
    if opts.get("listing"):
        return read_listing(store, http, opts["listing"], base_url=urls["rss_url"], api_url=urls["api_url"])
    job = Harvest(
        opts.get("set", opts.get("set_spec", "cs")),
        opts.get("from_", opts.get("from")),
        opts.get("until"),
        words(opts.get("categories") or ()),
        opts.get("start"),
        urls["oai_url"],
    )
    return harvest(store, http, job, today=today)


def _plan(section: dict[str, Any], store: Store, today: date) -> list[tuple[str, dict[str, Any]]]:
    """A harvest per set (a misspelt one fails here), then a read per RSS listing."""
    jobs: list[tuple[str, dict[str, Any]]] = []
    for s in as_list(section.get("sets", ["cs"]), "arxiv.sets"):
        check_set(s)
        cats = as_list(section.get("categories"), "arxiv.categories")
        jobs.append((f"arxiv {s}", {"set": s, "categories": cats, "start": section.get("start")}))
    for listing in as_list(section.get("listings"), "arxiv.listings"):
        jobs.append((f"arxiv new {listing}", {"listing": listing}))
    return jobs


register(
    Source(
        name=SOURCE,
        order=10,
        sections=("arxiv",),
        config_keys=frozenset({"sets", "categories", "start", "listings", "min_interval", *dict(URL_KEYS)}),
        options=(
            click.Option(["--set", "set"], help="arxiv: OAI-PMH set (cs, math, ...)."),
            click.Option(["--category", "categories"], multiple=True, help="arxiv: keep only these categories."),
            click.Option(["--from", "from_"], help="arxiv: first day (YYYY-MM-DD) to harvest."),
            click.Option(["--until"], help="arxiv: last day to harvest."),
            click.Option(["--id", "arxiv_ids"], multiple=True, help="arxiv: look these ids up (API)."),
            click.Option(["--listing"], help="arxiv: today's new papers of a category (RSS)."),
        ),
        ranks={
            SOURCE: trust(title=50, abstract=50, authors=50, venue=5, dates=50, links=50, code=20, categories=50),
            # hours-old text and a one-string author list: below OAI/API and the JSON Lines
            # dumps ("file") in every group, so it fills gaps but never overwrites them
            RSS_SOURCE: trust(title=29, abstract=29, authors=29, venue=1, dates=29, links=29, code=5, categories=29),
        },
        plan=_plan,
        run=_run,
        client=_client,
        example="""\
[arxiv]
sets = ["cs"]                                  # OAI-PMH sets: cs, physics:hep-th, cs:cs:CL
categories = ["cs.CL", "cs.LG", "cs.CV", "cs.AI"]  # keep only these (empty: all)
start = "2025-06-01"                           # first day of the very first harvest
# listings = ["cs.CL"]                         # also read today's RSS announcements
""",
    )
)

"""arXiv: incremental OAI-PMH harvesting, the Atom API for id look-ups and queries, and the
RSS daily listing for what was announced today.

arXiv asks for one request every 3 s on one connection; every call here goes through one
:class:`HttpClient` with that interval, retrying 503 with the ``Retry-After`` it sends.
A harvest records its resumption token in the store's state table after each page is stored,
so an interrupted run resumes from the page it was on; re-storing that page is harmless
(upsert of identical records), so the final store is the same as an uninterrupted run's.
"""

from __future__ import annotations

import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

import feedparser

from ..paper import ARXIV_ID, Paper
from ..store import IngestSummary, Store
from .http import HttpClient, SourceError

log = logging.getLogger("paperdex.sources")

SOURCE = "arxiv"
OAI_URL = "https://oaipmh.arxiv.org/oai"
API_URL = "https://export.arxiv.org/api/query"
RSS_URL = "https://rss.arxiv.org/rss/"
MIN_INTERVAL = 3.0  # seconds between requests, arXiv's published limit

NS = {
    "oai": "http://www.openarchives.org/OAI/2.0/",
    "arXiv": "http://arxiv.org/OAI/arXiv/",
}


def arxiv_client(**kw: object) -> HttpClient:
    """An HttpClient that keeps to arXiv's limits."""
    kw.setdefault("min_interval", MIN_INTERVAL)
    return HttpClient(**kw)  # type: ignore[arg-type]


def _ws(text: str | None) -> str:
    return " ".join((text or "").split())


def _strip_version(aid: str) -> tuple[str, str | None]:
    m = re.match(r"^(.*?)(v\d+)?$", aid)
    assert m
    return m.group(1), m.group(2)


# --- OAI-PMH ---------------------------------------------------------------------------------


@dataclass
class OaiPage:
    papers: list[Paper] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    token: str | None = None
    complete_list_size: int | None = None
    cursor: int | None = None
    error_code: str | None = None  # OAI-PMH <error code=...>, e.g. noRecordsMatch
    error_text: str = ""


def parse_oai_page(body: bytes | str) -> OaiPage:
    """One ListRecords response (metadataPrefix=arXiv). Raises SourceError when the XML is
    not well-formed (a truncated download), since a partial page must not be trusted."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise SourceError(f"malformed OAI-PMH response ({e}); the page was truncated or is not XML") from e
    if root.tag != f"{{{NS['oai']}}}OAI-PMH":
        raise SourceError(f"not an OAI-PMH response (root element {root.tag})")
    page = OaiPage()
    err = root.find("oai:error", NS)
    if err is not None:
        page.error_code = err.get("code", "unknown")
        page.error_text = _ws(err.text)
        return page
    lr = root.find("oai:ListRecords", NS)
    if lr is None:
        raise SourceError("OAI-PMH response has neither ListRecords nor error")
    for n, rec in enumerate(lr.findall("oai:record", NS), 1):
        header = rec.find("oai:header", NS)
        ident = _ws(header.findtext("oai:identifier", "", NS)) if header is not None else ""
        if header is not None and header.get("status") == "deleted":
            page.deleted.append(ident)
            continue
        try:
            page.papers.append(_oai_record(rec, header))
        except ValueError as e:
            page.errors.append(f"OAI record {n} ({ident or 'no identifier'}): {e}; skipped")
    tok = lr.find("oai:resumptionToken", NS)
    if tok is not None:
        page.token = _ws(tok.text) or None
        if tok.get("completeListSize", "").isdigit():
            page.complete_list_size = int(tok.get("completeListSize", "0"))
        if tok.get("cursor", "").isdigit():
            page.cursor = int(tok.get("cursor", "0"))
    return page


def _oai_record(rec: ET.Element, header: ET.Element | None) -> Paper:
    meta = rec.find("oai:metadata/arXiv:arXiv", NS)
    if meta is None:
        raise ValueError("no arXiv metadata (metadataPrefix must be arXiv)")

    def text(tag: str) -> str:
        return _ws(meta.findtext(f"arXiv:{tag}", "", NS))

    aid, _ = _strip_version(text("id"))
    if not ARXIV_ID.match(aid):
        raise ValueError(f"bad arXiv id {aid!r}")
    title = text("title")
    if not title:
        raise ValueError("empty title")
    authors = []
    for a in meta.findall("arXiv:authors/arXiv:author", NS):
        parts = [_ws(a.findtext(f"arXiv:{t}", "", NS)) for t in ("forenames", "keyname", "suffix")]
        name = " ".join(p for p in parts if p)
        if name:
            authors.append(name)
    created, updated = text("created"), text("updated")
    for d in (created, updated):
        if d and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", d):
            raise ValueError(f"bad date {d!r}")
    extra = {
        k: v
        for k, v in {
            "doi": text("doi"),
            "journal_ref": text("journal-ref"),
            "license": text("license"),
        }.items()
        if v
    }
    return Paper(
        id=aid,
        title=title,
        authors=authors,
        abstract=text("abstract"),
        categories=text("categories").split(),
        published=created or None,
        updated=updated or None,
        comment=text("comments") or None,
        sources=[SOURCE],
        extra={"arxiv": extra} if extra else {},
    )


Ingest = Callable[[Store, Iterable[Paper]], IngestSummary]


def harvest(
    store: Store,
    http: HttpClient,
    set_spec: str = "cs",
    from_: str | None = None,
    until: str | None = None,
    categories: Iterable[str] | None = None,
    *,
    base_url: str = OAI_URL,
    start: str | None = None,
    today: date | None = None,
    ingest: Ingest | None = None,
    max_pages: int | None = None,
) -> IngestSummary:
    """Harvest ``set_spec`` records changed between ``from_`` and ``until`` (inclusive days).

    With no ``from_``, continues where the last harvest of this set stopped: an unfinished
    window resumes at its saved resumption token, a finished one starts at its last day
    (overlap is harmless: unchanged records stay unchanged). ``categories`` keeps only
    records listed in any of them (``cs.CL``) or in an archive (``cs``)."""
    key = f"arxiv:oai:{set_spec}"
    saved = json.loads(store.get_state(key) or "{}")
    until = until or (today or date.today()).isoformat()
    token: str | None = None
    if from_ is None and saved.get("token"):
        from_, until, token = saved["from"], saved["until"], saved["token"]
        log.info("arXiv %s: resuming harvest %s..%s", set_spec, from_, until)
    elif from_ is None:
        from_ = saved.get("harvested_until") or start
        if from_ is None:
            raise ValueError(
                f"first harvest of arXiv set {set_spec!r}: give a first day (--from YYYY-MM-DD, or start = "
                "in sources.toml); without one OAI-PMH would send the whole archive"
            )
    if ingest is None:
        from .merge import Matcher, ingest_with_merge

        matcher = Matcher(store)  # one match index for the whole harvest, not one per page

        def ingest(st: Store, papers: Iterable[Paper]) -> IngestSummary:
            return ingest_with_merge(st, papers, matcher=matcher)

    wanted = [c.strip() for c in categories or [] if c.strip()]
    total = IngestSummary()
    pages = 0
    restarted = False
    while True:
        if token:
            params = {"verb": "ListRecords", "resumptionToken": token}
        else:
            params = {"verb": "ListRecords", "metadataPrefix": "arXiv", "set": set_spec, "until": until}
            if from_:
                params["from"] = from_
        resp = http.get(base_url, params=params)
        page = parse_oai_page(resp.content)
        if page.error_code == "badResumptionToken" and token and not restarted:
            log.warning("arXiv %s: resumption token expired; restarting window %s..%s", set_spec, from_, until)
            token, restarted = None, True
            continue
        if page.error_code and page.error_code != "noRecordsMatch":
            raise SourceError(f"arXiv OAI-PMH error {page.error_code}: {page.error_text}")
        keep = [p for p in page.papers if _in_categories(p, wanted)]
        s = ingest(store, keep)
        s.rejected += len(page.errors)
        s.errors.extend(page.errors)
        total = total + s
        pages += 1
        token = page.token
        state = {k: v for k, v in saved.items() if k in ("harvested_until",)}
        if token:
            state.update(
                {
                    "from": from_,
                    "until": until,
                    "token": token,
                    "cursor": page.cursor,
                    "complete_list_size": page.complete_list_size,
                }
            )
            store.set_state(key, json.dumps(state))
            if max_pages is not None and pages >= max_pages:
                return total
            continue
        state["harvested_until"] = until
        store.set_state(key, json.dumps(state))
        return total


def _in_categories(p: Paper, wanted: list[str]) -> bool:
    if not wanted:
        return True
    for c in p.categories:
        for w in wanted:
            if c == w or ("." not in w and c.split(".")[0] == w):
                return True
    return False


# --- Atom API --------------------------------------------------------------------------------


def parse_atom(body: bytes | str) -> tuple[list[Paper], list[str]]:
    """Papers of an arXiv API response. Raises SourceError on a malformed or truncated feed."""
    feed = feedparser.parse(body)
    if feed.bozo and not isinstance(feed.bozo_exception, feedparser.CharacterEncodingOverride):
        raise SourceError(f"malformed arXiv API response: {feed.bozo_exception}")
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


def _atom_entry(e: feedparser.FeedParserDict) -> Paper:
    m = re.search(r"arxiv\.org/abs/(.+)$", e.get("id", ""))
    if not m:
        raise ValueError("no arXiv abs link in <id>")
    aid, version = _strip_version(m.group(1))
    if not ARXIV_ID.match(aid):
        raise ValueError(f"bad arXiv id {aid!r}")
    title = _ws(e.get("title"))
    if not title:
        raise ValueError("empty title")
    primary = (e.get("arxiv_primary_category") or {}).get("term")
    cats = [t["term"] for t in e.get("tags", []) if t.get("term")]
    if primary:
        cats = [primary, *[c for c in cats if c != primary]]
    extra = {
        k: v
        for k, v in {
            "version": version,
            "doi": e.get("arxiv_doi"),
            "journal_ref": _ws(e.get("arxiv_journal_ref")) or None,
        }.items()
        if v
    }
    return Paper(
        id=aid,
        title=title,
        authors=[_ws(a.get("name")) for a in e.get("authors", []) if _ws(a.get("name"))],
        abstract=_ws(e.get("summary")),
        categories=list(dict.fromkeys(cats)),
        published=(e.get("published") or "")[:10] or None,
        updated=(e.get("updated") or "")[:10] or None,
        comment=_ws(e.get("arxiv_comment")) or None,
        sources=[SOURCE],
        extra={"arxiv": extra} if extra else {},
    )


def fetch_ids(
    http: HttpClient, ids: Iterable[str], *, base_url: str = API_URL, chunk: int = 100
) -> tuple[list[Paper], list[str]]:
    """Look papers up by arXiv id (with or without version)."""
    ids = [i.strip() for i in ids if i.strip()]
    bad = [i for i in ids if not ARXIV_ID.match(i)]
    papers: list[Paper] = []
    errors = [f"not an arXiv id: {i!r}" for i in bad]
    ids = [i for i in ids if i not in bad]
    for i in range(0, len(ids), chunk):
        part = ids[i : i + chunk]
        resp = http.get(base_url, params={"id_list": ",".join(part), "max_results": len(part)})
        p, e = parse_atom(resp.content)
        papers += p
        errors += e
    return papers, errors


def search(
    http: HttpClient, query: str, *, start: int = 0, max_results: int = 50, base_url: str = API_URL
) -> tuple[list[Paper], list[str]]:
    """An ad-hoc arXiv API query (``search_query`` syntax: ``ti:diffusion AND cat:cs.CV``)."""
    resp = http.get(
        base_url,
        params={
            "search_query": query,
            "start": start,
            "max_results": max_results,
            "sortBy": "submittedDate",
            "sortOrder": "descending",
        },
    )
    return parse_atom(resp.content)


# --- RSS daily listing -----------------------------------------------------------------------


def parse_rss(body: bytes | str) -> tuple[list[Paper], list[str]]:
    """Today's announcements of one listing (``rss.arxiv.org/rss/cs.CL``); ``listed`` is the
    announcement day, which neither OAI-PMH nor the API tell."""
    feed = feedparser.parse(body)
    if feed.bozo and not isinstance(feed.bozo_exception, feedparser.CharacterEncodingOverride):
        raise SourceError(f"malformed arXiv RSS feed: {feed.bozo_exception}")
    day = None
    if feed.feed.get("published_parsed"):
        day = date(*feed.feed.published_parsed[:3]).isoformat()
    papers, errors = [], []
    for n, e in enumerate(feed.entries, 1):
        m = re.search(r"(\d{4}\.\d{4,5}(v\d+)?)", e.get("id", "") + " " + e.get("link", ""))
        if not m or not _ws(e.get("title")):
            errors.append(f"RSS entry {n}: no arXiv id or title; skipped")
            continue
        aid, version = _strip_version(m.group(1))
        kind = e.get("arxiv_announce_type", "new")
        abstract = _ws(e.get("summary"))
        abstract = re.sub(r"^arXiv:\S+\s+Announce Type:\s*\S+\s*Abstract:\s*", "", abstract)
        authors = [a.strip() for a in re.split(r",\s*|\s+and\s+", e.get("author", "")) if a.strip()]
        papers.append(
            Paper(
                id=aid,
                title=_ws(e.get("title")),
                authors=authors,
                abstract=abstract,
                categories=[t["term"] for t in e.get("tags", []) if t.get("term")],
                listed=day if kind in ("new", "cross") else None,
                sources=[SOURCE],
                extra={"arxiv": {"version": version, "announce_type": kind}} if version else {},
            )
        )
    return papers, errors


def fetch_new(http: HttpClient, listing: str, *, base_url: str = RSS_URL) -> tuple[list[Paper], list[str]]:
    return parse_rss(http.get(base_url + listing).content)

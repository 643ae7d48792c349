"""Feeds and the daily digest.

**Feeds**: RSS 2.0 and Atom 1.0 documents for a list of papers, written with ElementTree so
that paper text is always escaped; every item links back to the paper's page on this server.

**Digest**: for one day (default: the newest), each tag's best recommendations among that day's
papers and each saved search's new matches, as one e-mail (plain text and HTML), sent through
SMTP or written to a file. Its words are shown in English: neither has a language setting.
"""

from __future__ import annotations

import html
import itertools
import re
import smtplib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, select_autoescape

from paperdex.discover import feed, library
from paperdex.discover import recommend as R
from paperdex.discover.summaries import attach_items
from paperdex.messages import message
from paperdex.paper import Paper
from paperdex.search import Searcher
from paperdex.store import Period, Store
from paperdex.text.latex import plain_tex

FORMATS = {"rss": "application/rss+xml", "atom": "application/atom+xml"}  # format: its media type
MAX_SUMMARY = 1200  # characters of an abstract in a feed item
ATOM = "http://www.w3.org/2005/Atom"
MIN_SCORE = R.chip_z()  # a day's paper is recommended from the z-score its tag's chip shows at
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_MARKUP = re.compile(r"<[A-Za-z/!?]")
FILE_KINDS = (".eml", ".html", ".htm", ".txt")


def paper_url(base_url: str, p: Paper) -> str:
    return f"{base_url.rstrip('/')}/paper/{quote(p.id, safe='/:')}"


def _when(p: Paper) -> datetime:
    for d in (p.date, p.published, p.updated):
        if d:
            try:
                return datetime.strptime(d[:10], "%Y-%m-%d").replace(tzinfo=UTC)
            except ValueError:
                continue
    return datetime(1970, 1, 1, tzinfo=UTC)


def _x(text: str | None) -> str:
    """Text XML 1.0 can carry: control characters (which a record may hold) removed."""
    return _NOT_XML.sub("", text or "")


def _as_html(text: str) -> str:
    """Plain text as the HTML an RSS 2.0 description is read as: escaped, so `<img src=x>` in an
    abstract is shown, not loaded (ElementTree escapes it again for XML)."""
    return html.escape(text, quote=False).replace("\n", "<br>")


def _title(text: str) -> str:
    """An RSS title: plain text, unless it holds something a reader could take for a tag (readers
    differ on whether it is HTML), which is then escaped as HTML too: never rendered either way."""
    return _as_html(text) if _MARKUP.search(text) else text


def _plain(text: str) -> str:
    return _x(plain_tex(text or ""))


@dataclass
class Item:
    paper: Paper
    note: str = ""  # why it is in the list (a recommendation's reason)
    tldr: str = ""  # a machine-written one-sentence summary (summaries.py), if there is one
    tldr_model: str = ""  # the model that wrote it, always shown with it


def tldr_line(it: Item) -> str:
    """The summary as a feed, e-mail or terminal shows it: marked as machine-written, by whom."""
    return message("digest_tldr", model=it.tldr_model, tldr=it.tldr) if it.tldr else ""


def _summary(it: Item) -> str:
    s = _plain(it.paper.abstract)
    if len(s) > MAX_SUMMARY:
        s = s[:MAX_SUMMARY].rsplit(" ", 1)[0] + " …"
    authors = ", ".join(it.paper.authors[:8]) + (f" {message('et_al')}" if len(it.paper.authors) > 8 else "")
    return "\n\n".join(x for x in (authors, tldr_line(it), s, it.note) if x)


def render_feed(fmt: str, title: str, self_url: str, page_url: str, items: list[Item], base_url: str) -> bytes:
    """An RSS 2.0 or Atom document of `items`, newest-dated first as given (`fmt`: one of FORMATS)."""
    updated = max((_when(i.paper) for i in items), default=datetime.now(UTC))
    if fmt == "rss":
        rss = ET.Element("rss", {"version": "2.0", "xmlns:atom": ATOM})
        ch = ET.SubElement(rss, "channel")
        ET.SubElement(ch, "title").text = _title(_x(title))
        ET.SubElement(ch, "link").text = page_url
        ET.SubElement(ch, "description").text = _as_html(_x(f"{title} (paperdex)"))
        ET.SubElement(ch, "atom:link", {"href": self_url, "rel": "self", "type": "application/rss+xml"})
        ET.SubElement(ch, "lastBuildDate").text = format_datetime(updated)
        ET.SubElement(ch, "generator").text = "paperdex"
        for it in items:
            p = it.paper
            e = ET.SubElement(ch, "item")
            ET.SubElement(e, "title").text = _title(_plain(p.title))
            ET.SubElement(e, "link").text = paper_url(base_url, p)
            ET.SubElement(e, "guid", {"isPermaLink": "true"}).text = paper_url(base_url, p)
            ET.SubElement(e, "pubDate").text = format_datetime(_when(p))
            ET.SubElement(e, "description").text = _as_html(_x(_summary(it)))
            for c in p.categories[:8]:
                ET.SubElement(e, "category").text = _x(c)
        return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(rss, encoding="utf-8")
    f = ET.Element("feed", {"xmlns": ATOM})
    ET.SubElement(f, "title").text = _x(title)
    ET.SubElement(f, "id").text = self_url
    ET.SubElement(f, "updated").text = updated.isoformat()
    ET.SubElement(f, "link", {"href": self_url, "rel": "self"})
    ET.SubElement(f, "link", {"href": page_url, "rel": "alternate"})
    ET.SubElement(ET.SubElement(f, "author"), "name").text = "paperdex"
    ET.SubElement(f, "generator").text = "paperdex"
    for it in items:
        p = it.paper
        e = ET.SubElement(f, "entry")
        ET.SubElement(e, "title").text = _plain(p.title)
        ET.SubElement(e, "id").text = paper_url(base_url, p)
        ET.SubElement(e, "link", {"href": paper_url(base_url, p), "rel": "alternate"})
        ET.SubElement(e, "updated").text = _when(p).isoformat()
        for a in p.authors[:20]:
            ET.SubElement(ET.SubElement(e, "author"), "name").text = _x(a)
        if not p.authors:
            ET.SubElement(ET.SubElement(e, "author"), "name").text = "unknown"
        ET.SubElement(e, "summary").text = _x(_summary(it))
        for c in p.categories[:8]:
            ET.SubElement(e, "category", {"term": _x(c)})
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(f, encoding="utf-8")


def reason_note(rec: R.Recommendation) -> str:
    if rec.reason is None:
        return ""
    bits = []
    if rec.reason.neighbours:
        like = "; ".join(f"“{_plain(t)[:80]}”" for _, t, _ in rec.reason.neighbours[:2])
        bits.append(message("reason_like", titles=like))
    if rec.reason.terms:
        bits.append(message("reason_words", words=", ".join(rec.reason.terms[:5])))
    if len(bits) == 2:  # one Message, so each part is shown in the note's language
        bits = [message("reason_both", like=bits[0], words=bits[1])]
    return message("reason_note", why=bits[0]) if bits else ""


# --- the digest ----------------------------------------------------------------------------------
@dataclass
class Section:
    title: str
    kind: str  # "tag" | "saved" | "day"
    link: str
    items: list[Item]
    count: int  # how many there are in all (items may be fewer)


@dataclass
class Digest:
    day: str | None
    base_url: str
    sections: list[Section] = field(default_factory=list)
    day_total: int = 0

    @property
    def empty(self) -> bool:
        return not any(s.items for s in self.sections)

    @property
    def nothing_new(self) -> str:
        """What an empty digest says: "today" only of today (it was said of any day asked for)."""
        if self.day is None or self.day == datetime.now().date().isoformat():
            return message("digest_nothing_new")
        return message("digest_nothing_new_on", day=self.day)

    @property
    def subject(self) -> str:
        n = sum(s.count for s in self.sections if s.kind != "day")
        return message("digest_subject", day=self.day or message("digest_today"), n=n, total=self.day_total)


def build(
    store: Store, day: str | None = None, base_url: str = "http://127.0.0.1:8000", per_section: int = 5, searcher=None
) -> Digest:
    """The digest of `day`: each tag's best recommendations among the day's papers, each saved
    search's new matches (the visit is not marked), else the day's first papers."""
    day = day or feed.latest_day(store)
    base = base_url.rstrip("/")
    d = Digest(day, base)
    if day is None:
        return d
    rowids = store.rowids_in(Period(day, day), "listing")
    d.day_total = len(rowids)
    for t in library.tags(store):
        if t.count < R.MIN_CHIP_PAPERS or not rowids:  # a smaller tag's picks are too often wrong
            continue
        recs = R.recommend(store, t.name, per_section, within=rowids, source=searcher.corpus if searcher else None)
        items = [Item(r.paper, reason_note(r)) for r in recs.items if r.score >= MIN_SCORE]
        if items:
            link = f"{base}/tag/{quote(t.name, safe='')}"
            d.sections.append(Section(message("digest_for_tag", tag=t.name), "tag", link, items, len(items)))
    saved = library.saved_searches(store)
    if saved:
        s = searcher or Searcher(store)
        for ss in saved:
            nm = library.new_matches(s, ss, per_section)
            link = f"{base}/saved/{ss.id}"
            if nm.error:  # said in the digest, which still goes out with everything else
                title = message("digest_saved_broken", name=ss.name, notice=nm.notices[0])
                d.sections.append(Section(title, "saved", link, [], 0))
            elif nm.count:
                title = message("digest_saved_new", name=ss.name, n=nm.count)
                d.sections.append(Section(title, "saved", link, [Item(p) for p in nm.papers], nm.count))
    if not d.sections and rowids:
        items = [Item(p) for p in feed.daily(store, day, per_page=per_section).papers]
        d.sections.append(Section(message("digest_day", day=day), "day", f"{base}/daily?day={day}", items, d.day_total))
    attach_items(store, [it for s in d.sections for it in s.items])
    return d


_HTML = Environment(
    autoescape=select_autoescape(default=True, default_for_string=True), trim_blocks=True, lstrip_blocks=True
).from_string((Path(__file__).parent / "digest.html").read_text(encoding="utf-8"))


def render_text(d: Digest) -> str:
    listed = message("digest_listed", total=d.day_total, day=d.day, link=f"{d.base_url}/daily?day={d.day}")
    lines = [f"paperdex · {d.day}", listed, ""]
    for s in d.sections:
        lines += [s.title, "=" * min(len(s.title), 72), s.link, ""]
        for i, it in enumerate(s.items, 1):
            p = it.paper
            authors = ", ".join(p.authors[:6]) + (f" {message('et_al')}" if len(p.authors) > 6 else "")
            lines += [f"{i}. {_plain(p.title)}", f"   {authors}", f"   {paper_url(d.base_url, p)}"]
            lines += [f"   {x}" for x in (tldr_line(it), it.note) if x]
            lines.append("")
    if d.empty:
        lines.append(d.nothing_new)
    return "\n".join(lines).rstrip() + "\n"


def render_html(d: Digest) -> str:
    return _HTML.render(d=d, url=lambda p: paper_url(d.base_url, p), plain=_plain, t=message)


def mail(d: Digest, sender: str = "paperdex@localhost", to: str = "you@localhost") -> EmailMessage:
    """The digest as one e-mail: text/plain with a text/html alternative."""
    m = EmailMessage()
    m["Subject"] = d.subject
    m["From"] = sender
    m["To"] = to
    m["Date"] = format_datetime(datetime.now(UTC))
    m["Message-ID"] = make_msgid("digest")
    m.set_content(render_text(d))
    m.add_alternative(render_html(d), subtype="html")
    return m


def send(
    m: EmailMessage,
    host: str,
    port: int = 25,
    *,
    starttls: bool = False,
    user: str | None = None,
    password: str | None = None,
    timeout: float = 30,
) -> None:
    with smtplib.SMTP(host, port, timeout=timeout) as s:
        if starttls:
            s.starttls()
        if user:
            s.login(user, password or "")
        s.send_message(m)


def file_bytes(m: EmailMessage, d: Digest, path: str | Path) -> bytes:
    """What a file named `path` holds: `.html` the HTML part; `.txt` the text; `.eml` the whole
    message; another suffix is refused (an e-mail written into `digest.pdf` opens as a broken file)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FILE_KINDS:
        raise ValueError(f"a digest is written as {', '.join(FILE_KINDS)}, not {suffix or 'a file without a suffix'}")
    if suffix in (".html", ".htm"):
        return render_html(d).encode("utf-8")
    if suffix == ".txt":
        return render_text(d).encode("utf-8")
    return bytes(m)


def likely_first(store: Store, day: str | None = None, per_section: int = 50, searcher=None) -> list[Paper]:
    """The papers a user likely reads first: the digest's tag and saved search picks, then the day's listing."""
    d = build(store, day, per_section=per_section, searcher=searcher)
    out = [it.paper for s in d.sections if s.kind != "day" for it in s.items]
    for page in itertools.count(1) if d.day else ():
        listed = feed.daily(store, d.day, page=page, per_page=200)
        out.extend(listed.papers)
        if page * 200 >= listed.total:
            break
    return list({p.id: p for p in out}.values())

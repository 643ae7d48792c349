"""BibTeX in and out, through bibtexparser (v2). Import keeps every field it does not map
under ``extra["bibtex"]``; :func:`entry` is the one BibTeX writer (export, the API, the paper
page, MCP), with paperdex's own fields so that export -> import gives the same records back
(docs/sources.md, "BibTeX")."""

from __future__ import annotations

import codecs
import datetime as dt
import json
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import bibtexparser
from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names
from bibtexparser.model import DuplicateBlockKeyBlock, Entry

from paperdex.messages import message
from paperdex.paper import ARXIV_ID, CATEGORY, OPENREVIEW_SITE, Paper, RecordError, paper_from_dict, unversioned
from paperdex.sources.registry import Parsed, Source, register, trust
from paperdex.text.latex import BARE_SPECIAL, decode_accents, decode_name, index_text

SOURCE = "bibtex"
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s/?#]+?)(?:\.pdf)?(?:[?#]|$)")
_ARXIV_DOI = re.compile(r"10\.48550/arXiv\.(\S+)$", re.I)
# Google Scholar: journal = {arXiv preprint arXiv:1706.03762}; DBLP: volume = {abs/1706.03762}
_ARXIV_IN_JOURNAL = re.compile(r"^\s*arxiv\b.*?\barxiv:\s*([^\s,;}]+)", re.I)
_CORR_VOLUME = re.compile(r"^\s*abs/(\S+)\s*$")
# arXiv categories without a subject class; any other primaryclass without a dot (Zotero writes
# primaryclass = {cs}) is an archive, not a category
_DOTLESS_CATEGORIES = frozenset(
    "astro-ph cond-mat gr-qc hep-ex hep-lat hep-ph hep-th math-ph nlin nucl-ex nucl-th physics quant-ph".split()
)
_KEY_SAFE = re.compile(r"^[A-Za-z0-9:._/\-]+$")
_NOT_DECOMPOSED = str.maketrans(
    {"ß": "ss", "æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L"}
    | {"đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i"}
)
_MAPPED = frozenset(  # read into the Paper; every other field is kept under extra["bibtex"]
    """title author abstract year month date eprint archiveprefix primaryclass keywords booktitle journal
    area url doi note code pdf comment venue""".split()
)
# paperdex's own fields for the facts of a record the standard ones do not hold, read back by the
# import (docs/sources.md, "BibTeX"): its id when the cite key does not give it, the days it was
# listed and revised, that the date of `year`/`date` is no published date ("unknown"), categories
# `keywords` would not give back (a JSON list), the OpenReview forum
ID_FIELD = "paperdex-id"
UNKNOWN = "unknown"
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def split_names(value: str) -> tuple[list[str], bool]:
    """BibTeX names ("Last, First and First Last and others") as display names plus
    whether the list was cut with "and others"; bibtexparser splits them as BibTeX does."""
    names, truncated = [], False
    for p in split_multiple_persons_names(" ".join(value.split())):
        if p.lower() == "others":
            truncated = True
            continue
        n = parse_single_name_into_parts(p, strict=False)
        p = " ".join([*n.first, *n.von, *n.last, *n.jr])  # "von Last, Jr, First" -> "First von Last Jr"
        # `Lo{\"\i}c` -> `Loïc`: names are matched and shown as text, so they are decoded as
        # arXiv's are, by the one TeX name reader (its fixes for doubled backslashes, % and &)
        names.append(decode_name(p) if "\\" in p or "{" in p else p)
    return names, truncated


def _strip_braces(text: str) -> str:
    """`{{Attention}}` -> `Attention`: the outer case-protecting pair only."""
    text = " ".join(text.split())
    while text.startswith("{") and text.endswith("}") and not _unmatched(text[1:-1]):
        text = text[1:-1]
    return text


def _unprotect(title: str) -> str:
    """Drop case-protecting braces (`{BERT}` -> `BERT`) but keep LaTeX arguments (`\\emph{x}`)."""
    prev = None
    while prev != title:
        prev, title = title, re.sub(r"(?<![\\\w^_])\{([^{}]*)\}", r"\1", title)
    return title


def _unmatched(text: str) -> set[int]:
    """Where ``text`` has a brace without its partner. TeX's group braces and its escaped ones
    (``\\{``, a literal brace) pair each among their own, as LaTeX reads them: in
    ``\\texttt{\\textbackslash boxed\\{}`` the ``\\{`` is the unpaired one, not ``\\texttt``'s."""
    unmatched: set[int] = set()
    opened: dict[bool, list[int]] = {False: [], True: []}
    for i, ch in enumerate(text):
        if ch not in "{}":
            continue
        stack = opened[_escaped(text, i)]
        if ch == "{":
            stack.append(i)
        elif stack:
            stack.pop()
        else:
            unmatched.add(i)
    return unmatched | set(opened[False]) | set(opened[True])


def _escaped(text: str, i: int) -> bool:
    """Whether the character at i follows an odd run of backslashes (``\\{``, not ``\\\\{``)."""
    n = 0
    while i - n > 0 and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _date(fields: dict[str, str]) -> tuple[str | None, str | None]:
    """(day, precision): a full ``date``; else the first day of ``year`` (and ``month``), with the
    precision ("year" or "month") so an export writes back no more than was known."""
    d = fields.get("date", "").strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", d):
        return d, None
    m = re.fullmatch(r"(\d{4})(?:-(\d{2}))?", d) or re.fullmatch(r"\{?(\d{4})\}?", fields.get("year", "").strip())
    if not m:
        return None, None
    year = m.group(1)
    month = m.group(2) if m.re.groups > 1 and m.group(2) else None
    if month is None:
        raw = fields.get("month", "").strip().lower()[:3]
        month = f"{MONTHS.index(raw) + 1:02d}" if raw in MONTHS else (f"{int(raw):02d}" if raw.isdigit() else None)
    if month and not 1 <= int(month) <= 12:
        month = None
    return (f"{year}-{month}-01", "month") if month else (f"{year}-01-01", "year")


def _month_of_id(arxiv_id: str) -> str | None:
    """The first day of the month an arXiv id was given (``2505.13738`` -> ``2025-05-01``,
    ``hep-th/9901002`` -> ``1999-01-01``): its first version's month."""
    m = re.match(r"^(\d{2})(\d{2})\.\d{4,5}$", arxiv_id) or re.search(r"/(\d{2})(\d{2})\d{3}$", arxiv_id)
    if not m or not 1 <= int(m.group(2)) <= 12:
        return None
    yy = int(m.group(1))
    century = 2000 if "." in arxiv_id.split("/")[-1] or yy < 91 else 1900  # old-style ids began in 1991
    return f"{century + yy}-{m.group(2)}-01"


def _arxiv_id(f: dict[str, str]) -> str | None:
    """The entry's arXiv id, unversioned: its eprint, else the arXiv URL, arXiv DOI, Google
    Scholar's journal or DBLP's CoRR volume that names it."""
    eprint = f.get("eprint", "").strip()
    prefix = (f.get("archiveprefix") or f.get("eprinttype") or "arxiv").lower()
    if eprint.lower().startswith("arxiv:"):
        eprint = eprint[6:].strip()
    if eprint and prefix == "arxiv" and ARXIV_ID.match(eprint):
        return unversioned(eprint)
    journal = f.get("journal", "") or f.get("booktitle", "")
    corr = _CORR_VOLUME.match(f.get("volume", "")) if journal.strip().lower() == "corr" else None
    found = (
        _ARXIV_URL.search(f.get("url", "")),
        _ARXIV_DOI.search(f.get("doi", "")),
        _ARXIV_IN_JOURNAL.match(journal),
        corr,
    )
    arxiv_id = next((m.group(1) for m in found if m and ARXIV_ID.match(m.group(1))), None)
    return unversioned(arxiv_id) if arxiv_id else None


def _keywords(text: str) -> list[str]:
    return [c.strip() for c in re.split(r"[,;]", text) if c.strip()]


def _is_category(c: str) -> bool:
    """An arXiv category: cs.LG, or one of the archives that are categories (quant-ph)."""
    return bool(CATEGORY.match(c)) and ("." in c or c in _DOTLESS_CATEGORIES)


def _categories(f: dict[str, str]) -> tuple[list[str], list[str], str]:
    """(arXiv categories, the other keywords, primaryclass) of an entry: keywords that are
    categories, the primary class first."""
    cats = _keywords(f.get("keywords", ""))
    categories = [c for c in cats if _is_category(c)]
    primary = f.get("primaryclass", "").strip()
    if primary and _is_category(primary):
        categories = [primary, *[c for c in categories if c != primary]]
    return categories, [c for c in cats if c not in categories], primary


def _categories_field(p: Paper, keywords: str, primary: str) -> str | None:
    """paperdex's own ``categories`` (a JSON list) when ``keywords`` and ``primaryClass`` do
    not give the paper's back: ACM and MSC classes ("I.2.7; I.2.10", "68T07, 92C55"), which
    the import does not take from another tool's keywords, nor a list split at their marks."""
    if not p.categories or _categories({"keywords": keywords, "primaryclass": primary})[0] == p.categories:
        return None
    value = json.dumps(p.categories, ensure_ascii=False)
    return None if _unmatched(value) else value


def _categories_of(value: str) -> list[str] | None:
    """The categories paperdex's own ``categories`` field lists; None for another tool's."""
    try:
        cats = json.loads(value)
    except ValueError:
        return None
    return cats if isinstance(cats, list) and all(isinstance(c, str) for c in cats) else None


def _dated(f: dict[str, str], arxiv_id: str | None) -> tuple[str | None, str | None]:
    """(published, precision) of an entry; an arXiv paper's id gives the month a year lacks."""
    published, precision = _date(f)
    if arxiv_id and precision != "month" and (month := _month_of_id(arxiv_id)):
        # only a year (DBLP, Google Scholar), or none: the id says the month of version 1. A year
        # other than the id's is kept: it is the venue's, and the year the user's library cites.
        if published is None or (precision == "year" and published[:4] == month[:4]):
            published, precision = month, "month"
    return published, precision


def _paper_id(key: str, arxiv_id: str | None) -> str:
    """The id an entry gives its paper: its arXiv id, else its cite key when it has a colon
    (``openreview:Ab12``, ``doi:…``, ``DBLP:…``), else ``bib:KEY``."""
    return arxiv_id or (key if ":" in key else f"bib:{key}")


def _day(value: str) -> str | None:
    """A real day written YYYY-MM-DD, else None."""
    value = value.strip()
    try:
        return dt.date.fromisoformat(value).isoformat() if _DAY.match(value) else None
    except ValueError:  # 2020-13-45
        return None


def _own_fields(f: dict[str, str]) -> dict[str, Any]:
    """The record fields paperdex's own BibTeX fields state (:data:`ID_FIELD`, ``listed``,
    ``updated``, ``published = {unknown}``, ``categories``), each taken when it has its form,
    else left with the entry's other fields: another tool's ``updated = {last week}`` skips no
    entry."""
    own: dict[str, Any] = {}
    if (cats := _categories_of(f.get("categories", ""))) is not None:
        own["categories"] = cats
    if pid := f.get(ID_FIELD, "").strip():
        own["id"] = pid
    own |= {k: day for k in ("listed", "updated") if (day := _day(f.get(k, "")))}
    if f.get("published", "").strip().lower() == UNKNOWN:
        own["published"] = None
    return own


def entry_to_paper(entry: Entry, notes: list[str] | None = None) -> Paper:
    """One entry as a Paper, through :func:`paperdex.paper.paper_from_dict`: a BibTeX entry is
    held to the checks every record is (ids usable in a link, real dates, bounds), whatever its
    format; RecordError (a ValueError) names the field and why, over-long text goes to ``notes``."""
    f = {k.lower(): v.value if isinstance(v.value, str) else str(v.value) for k, v in entry.fields_dict.items()}
    title = _unescape(_unprotect(decode_accents(_strip_braces(f.get("title", "")))))
    if not title:
        raise RecordError("no title")
    authors, truncated = split_names(f.get("author", ""))
    arxiv_id = _arxiv_id(f)
    key = entry.key
    own = _own_fields(f)
    pid = own.get("id") or _paper_id(key, arxiv_id)
    categories, keywords, primary = _categories(f)
    published, precision = (None, None) if "published" in own else _dated(f, arxiv_id)
    if "categories" in own:  # the keywords that were its categories are no keywords of their own
        keywords = [k for k in keywords if k not in _keywords(", ".join(own["categories"]))]
    optional = {  # kept when not empty
        "primaryclass": primary if primary not in categories else "",  # an archive ("cs"), not a category
        "date_precision": precision,
        "doi": f.get("doi"),
        "arxiv_id": arxiv_id if pid != arxiv_id else None,
        "keywords": keywords,
    }
    bib_extra: dict[str, object] = {"key": key, "type": entry.entry_type, **{k: v for k, v in optional.items() if v}}
    if "year" in f:
        bib_extra["year"] = f["year"]
    forum = _forum(f)
    taken = {ID_FIELD if k == "id" else k for k in own} | ({"openreview"} if forum else set())
    bib_extra.update((k, v) for k, v in f.items() if k not in _MAPPED and k not in taken)
    url = f.get("url") or None
    if arxiv_id and url:
        # an arXiv paper's abstract link is its arXiv page (Paper.links), not the DOI that DBLP
        # writes as its url; any other url is kept with the entry's fields
        if not _ARXIV_URL.search(url):
            bib_extra["url"] = url
        url = None
    # paperdex's own `venue` field: the venue string as stored ("NeurIPS 2024 oral", "Submitted
    # to ICLR 2025") where booktitle says only where it was published (see publication())
    venue = f.get("venue") or f.get("booktitle") or f.get("journal") or ""
    if _NOT_A_VENUE.match(venue):  # "arXiv preprint arXiv:2501.00001" names no venue
        venue = ""
    record = {
        "id": pid,
        "title": title,
        "authors": authors,
        "abstract": _unescape(" ".join(f.get("abstract", "").split())),
        "categories": categories,
        "venue": _unescape(_unprotect(decode_accents(_strip_braces(venue)))) or None,
        "venue_area": _unescape(f.get("area", "")) or None,
        "published": published,
        "abs_url": url,
        "pdf_url": f.get("pdf") or None,
        "code_url": f.get("code") or None,
        "comment": _unescape(f.get("comment") or _note(f) or "") or None,
        "authors_truncated": truncated,
        "extra": {"bibtex": bib_extra} | ({"openreview": {"url": forum}} if forum else {}),
    }
    return paper_from_dict(record | own, SOURCE, notes)


def _forum(f: dict[str, str]) -> str | None:
    """paperdex's own ``openreview`` field: the paper's OpenReview forum, its link (Paper.links)."""
    url = f.get("openreview", "").strip()
    return url if url.startswith(OPENREVIEW_SITE + "/forum?id=") and _HTTP.match(url) else None


def _note(f: dict[str, str]) -> str | None:
    """An entry's ``note`` as the paper's comment, unless it is the export's note of a venue
    string that names no publication ("Submitted to ICLR 2025", also in ``venue``)."""
    note = f.get("note")
    return None if note and note == f.get("venue") else note


def parse_bibtex(text: str, name: str = "<bibtex>") -> Parsed:
    quiet = logging.getLogger("bibtexparser")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # its failures are reported below, with our line numbers
    try:
        lib = bibtexparser.parse_string(text)
    finally:
        quiet.setLevel(level)
    out = Parsed()
    if not lib.entries and not lib.failed_blocks:
        out.notes.append(message("file_no_records", file=name))
    for block in lib.failed_blocks:
        what = "duplicate key" if isinstance(block, DuplicateBlockKeyBlock) else "does not parse"
        raw = (block.raw or "").strip()  # a parsed block always has its text and line (None types)
        first = raw.splitlines()[0][:60] if raw else ""
        out.errors.append(f"{name}:{(block.start_line or 0) + 1}: entry {what} ({first!r}); skipped")
    for entry in lib.entries:
        line = (entry.start_line or 0) + 1
        got: list[str] = []
        try:
            out.papers.append(entry_to_paper(entry, got))
        except ValueError as e:
            out.errors.append(f"{name}:{line}: @{entry.entry_type}{{{entry.key}: {e}; skipped")
        out.notes.extend(f"{name}:{line}: note: {n}" for n in got)
    return out


def read_bibtex(path: str | Path) -> Parsed:
    """A .bib file's entries; a file that cannot be read or decoded is one error naming it (and
    the place of its first bad byte), so the other files of an ingest are still read."""
    path = Path(path)
    try:
        text = decode(path.read_bytes(), path.name)
    except OSError as e:
        return Parsed(errors=[message("file_unreadable", file=path.name, reason=e.strerror or str(e))])
    except UndecodableError as e:
        return Parsed(errors=[str(e)])
    return parse_bibtex(text, path.name)


class UndecodableError(ValueError):
    """A .bib file that is not text in the encoding it is read in; the message says where."""


# The encoding a .bib names on its first lines: JabRef's `% Encoding: ISO8859_1` (Java's names,
# which Python's codecs know too) and BibDesk's `%% Saved with string encoding Western (ISO Latin 1)`
_DECLARED = re.compile(rb"^%+[ \t]*(?:Encoding:|Saved with string encoding)[ \t]*([^\r\n]*?)[ \t]*\r?$", re.M | re.I)
_BIBDESK = {
    "unicode (utf-8)": "utf-8",
    "western (iso latin 1)": "latin-1",
    "western (windows latin 1)": "cp1252",
    "western (mac os roman)": "mac_roman",
}


def _declared(data: bytes) -> str | None:
    """The codec of the encoding the file's head names, if Python knows it."""
    m = _DECLARED.search(data[:4096])
    name = m.group(1).decode("ascii", "replace").strip() if m else ""
    name = _BIBDESK.get(name.lower(), name)
    try:
        return codecs.lookup(name).name if name else None
    except LookupError:
        return None


def decode(data: bytes, name: str) -> str:
    """The text of a .bib file: UTF-8 (a byte-order mark dropped; UTF-16 with one), or the
    encoding the file names as JabRef and BibDesk write it (older JabRef exports are Latin-1 and
    say so). A file that is neither is refused, naming its first bad byte, and is not guessed
    to be Latin-1: its bytes are as often Windows-1252 or GBK (Chinese Windows: 论文 reads as
    ÂÛÎÄ in Latin-1), and a wrong guess would store wrong letters in names and titles without a
    word, where the refusal costs one re-save as UTF-8 (or the `% Encoding:` line)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        codec, shown = "utf-16", "UTF-16"
    else:
        codec = _declared(data) or "utf-8-sig"
        shown = "UTF-8" if codec == "utf-8-sig" else codec
        if (nul := data.find(b"\x00")) >= 0:
            raise UndecodableError(message("bib_binary", file=name, line=data.count(b"\n", 0, nul) + 1))
    try:
        return data.decode(codec)
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        raise UndecodableError(
            message(
                "bib_not_encoding",
                file=name,
                line=data.count(b"\n", 0, e.start) + 1,
                encoding=shown,
                byte=f"{data[e.start]:#04x}",
                column=e.start - line_start + 1,
            )
        ) from None


# --- export: the one BibTeX writer (export, the JSON API, the paper page and MCP) ---------------

# Field names as arXiv spells them, values aligned (archivePrefix sticks out by one).
_ALIGN = 12
# TeX specials that are plain characters in metadata (latex.BARE_SPECIAL), as escaped on the way out
_ESCAPED_SPECIAL = re.compile(r"\\([%&#])")
# TeX math as metadata writes it ($…$, $$…$$, \(…\)); outside it _ ^ $ are plain characters,
# escaped on the way out and read back
_MATH = re.compile(r"(?<!\\)(\$\$?)(?:\\.|[^$\\])+\1|\\\((?:\\[^)]|[^\\])*?\\\)", re.S)
_BARE_OUTSIDE_MATH = re.compile(r"(?<!\\)([_^$])")
_TEXT_ESCAPES = {"_": r"\_", "$": r"\$", "^": r"\textasciicircum{}"}
_TEXT_ESCAPES_BACK = {v: k for k, v in _TEXT_ESCAPES.items()}
_ESCAPED_OUTSIDE_MATH = re.compile(r"\\_|\\\$|\\textasciicircum\{\}")
_HTTP = re.compile(r"^https?://[^\s{}]+$")
# "arXiv preprint arXiv:..." (Google Scholar), "arXiv e-prints", DBLP's "CoRR": a preprint
# server, not where a paper was published
_NOT_A_VENUE = re.compile(r"^\s*(?:arxiv(\s+preprint|\s+e-?prints?)?\b|corr\s*$)", re.I)


def _cite_key(p: Paper, taken: set[str]) -> str:
    """The library's own key, else a non-arXiv id, else surname, year and the title's first word
    of four letters or more ("bergsma2025power"), unique within `taken`."""
    bib = p.slot("bibtex")
    if bib.get("key") and _KEY_SAFE.match(bib["key"]):
        key = bib["key"]  # the key the user's library already cites
    elif not p.is_arxiv and _KEY_SAFE.match(p.id):
        key = p.id  # "openreview:abc" comes back as the same id
    else:
        sur = "".join(_key_words(p.authors[0].split()[-1] if p.authors else "")) or "anon"
        year = (p.date or "")[:4] or str(bib.get("year", "")) or ("20" + p.id[:2] if p.is_arxiv else "")
        word = next((w for w in _key_words(p.title) if len(w) > 3), "paper")
        key = f"{sur}{year}{word}"
    base, n = key, 1
    while key in taken:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2)}" if n <= 27 else f"{base}{n}"
    taken.add(key)
    return key


def _key_words(text: str) -> list[str]:
    """The words of a name or title as a cite key spells them, which a user types: TeX read as
    the search index reads it (``$\\beta$`` is "beta", ``\\mathtt`` no word), accents stripped
    (Fernández-Hernández -> fernandez, hernandez; Köcher -> kocher), and the letters NFKD does
    not take apart spelled as usual (ß -> ss, ø -> o, ł -> l)."""
    plain = unicodedata.normalize("NFKD", index_text(text).translate(_NOT_DECOMPOSED))
    return re.findall(r"[a-z]+", plain.encode("ascii", "ignore").decode().lower())


def _escape(text: str, keep_space: bool = False) -> str:
    """Text as a braced BibTeX value that LaTeX typesets as the text it is: TeX stays (commands,
    ``$…$`` math); what TeX reads as markup when bare is escaped: ``% & #`` anywhere, ``_ ^ $``
    outside math (arXiv's "GS_DravidianLangTech", "CA^2ST", "with $500" stop pdflatex with
    "Missing $ inserted")."""
    return _verbatim(_outside_math(text if keep_space else " ".join(text.split()), _escape_bare), keep_space)


def _verbatim(text: str, keep_space: bool = False) -> str:
    """A value as BibTeX can hold it: ``% & #`` escaped; a trailing backslash (an author
    "Aakur\\\\") dropped, since it would escape the closing brace; an unpaired brace spelled
    out (a stray ``}`` would end the value). A DOI gets no more: styles print it as it is.
    ``keep_space``: line breaks and runs of spaces stay (a comment's, as arXiv folds it)."""
    text = text if keep_space else " ".join(text.split())
    return _braces_paired(BARE_SPECIAL.sub(r"\\\1", text).rstrip("\\ "))


def _braces_paired(text: str) -> str:
    """Each unpaired brace as ``\\textbraceleft{}``/``\\textbraceright{}`` (an escaped one with
    its backslash), so that the value's braces pair for BibTeX, which counts both kinds."""
    unmatched = _unmatched(text)
    out = []
    for i, ch in enumerate(text):
        if ch == "\\" and i + 1 in unmatched:  # the backslash of an unpaired \{ goes with it
            continue
        out.append(("\\textbraceleft{}" if ch == "{" else "\\textbraceright{}") if i in unmatched else ch)
    return "".join(out)


def _outside_math(text: str, change: Callable[[str], str]) -> str:
    """``text`` with `change` made to its parts outside TeX math (``$…$``, ``$$…$$``, ``\\(…\\)``)."""
    out, at = [], 0
    for m in _MATH.finditer(text):
        out += [change(text[at : m.start()]), m.group(0)]
        at = m.end()
    return "".join([*out, change(text[at:])])


def _escape_bare(text: str) -> str:
    return _BARE_OUTSIDE_MATH.sub(lambda m: _TEXT_ESCAPES[m.group(1)], text)


def _unescape_bare(text: str) -> str:
    return _ESCAPED_OUTSIDE_MATH.sub(lambda m: _TEXT_ESCAPES_BACK[m.group(0)], text)


def _unescape(text: str) -> str:
    """``R\\&D`` -> ``R&D``, ``GS\\_X`` -> ``GS_X``: paperdex stores these as plain characters
    (see :func:`_escape`); ``_ ^ $`` only outside math, where they are plain."""
    if "\\" not in text:
        return text
    text = text.replace("\\textbraceleft{}", "{").replace("\\textbraceright{}", "}")
    return _outside_math(_ESCAPED_SPECIAL.sub(r"\1", text), _unescape_bare)


def _url(url: str | None) -> str | None:
    return url if url and _HTTP.match(url) else None


# the types whose venue is a `journal` (article) or a `booktitle`; and the details an import keeps
_VENUE_TYPES = frozenset({"article", "inproceedings", "incollection", "conference"})
_PUBLICATION_FIELDS = (
    "volume", "number", "pages", "publisher", "editor", "edition", "series", "chapter", "address",
    "organization", "school", "institution", "howpublished", "isbn", "issn",
)  # fmt: skip
_PRESENTATION = re.compile(r"\s+(?:spotlightposter|oralposter|oral|spotlight|poster|highlight|notable[\w\s%-]*)$", re.I)
_JOURNAL = re.compile(r"\b(?:TMLR|Transactions|Journal|Letters|Review|JMLR|Nature|Science)\b", re.I)
NOT_ACCEPTED = ("rejected", "desk_rejected", "withdrawn", "under_review", "submitted")


def publication(p: Paper) -> tuple[str | None, str | None]:
    """(where the paper was published, a note): "NeurIPS 2024 oral" was published in "NeurIPS
    2024"; a paper OpenReview did not accept has no venue, its venue string becomes a note."""
    if not p.venue:
        return None, None
    decision = p.slot("openreview").get("decision")
    if decision in NOT_ACCEPTED or re.match(r"^\s*(submitted to|under review)\b", p.venue, re.I):
        return None, p.venue
    return _PRESENTATION.sub("", p.venue).strip() or p.venue, None


def paper_fields(p: Paper, key: str | None = None) -> tuple[str, list[tuple[str, str]]]:
    """(entry type, [(field, raw value)]) of a paper cited as ``key``, with paperdex's own fields
    for what the standard ones do not hold (:data:`ID_FIELD`, ``listed``, …). An arXiv paper
    without a venue is an ``@article`` in "arXiv preprint arXiv:ID", which every bibliography
    style prints with its id (plain.bst drops ``eprint`` alone); a conference is an
    ``@inproceedings``."""
    bib = p.slot("bibtex")
    venue, note = publication(p)
    kind = _kind(p, venue)
    authors = " and ".join([_escape(a) for a in p.authors] + (["others"] if p.authors_truncated else []))
    fields: list[tuple[str, str | None]] = [
        ("title", "{" + _escape(p.title) + "}"),
        ("author", authors or None),
    ]
    if venue:
        fields.append(("journal" if kind == "article" else "booktitle", _escape(venue)))
    elif p.is_arxiv:
        fields.append(("journal", f"arXiv preprint arXiv:{p.id}"))
    fields += _kept_fields(bib)
    date = p.published or p.date
    # the precision a BibTeX, Zotero (sources/zotero.py) or JSON Lines import (paper._published)
    # knew the date to, if the date shown is that import's: one a merge kept its own date from (a
    # more precise one) is stashed there
    imports = [s for s in (bib, p.slot("zotero"), p.slot("file")) if s.get("date_precision") and "published" not in s]
    precision = imports[0]["date_precision"] if imports and date == p.published else None
    if date and precision == "year":
        fields.append(("year", date[:4]))
    elif date and precision == "month":
        fields += [("year", date[:4]), ("month", MONTHS[int(date[5:7]) - 1])]
    elif date:
        fields += [("year", date[:4]), ("month", MONTHS[int(date[5:7]) - 1]), ("date", date)]
    elif re.fullmatch(r"\d{4}", str(bib.get("year", ""))):
        fields.append(("year", str(bib["year"])))
    if p.published is None and (date or p.is_arxiv):  # the date above is the listing's, or none
        fields.append(("published", UNKNOWN))  # (an arXiv entry without one is dated by its id)
    fields += [("listed", p.listed), ("updated", p.updated)]
    if note:
        fields.append(("note", _escape(note)))
    if p.venue and p.venue != venue:
        fields.append(("venue", _escape(p.venue)))  # read back by the import: the round trip holds
    doi = p.slot("arxiv").get("doi") or bib.get("doi") or p.extra.get("doi")
    fields += [
        ("area", _escape(p.venue_area) if p.venue_area else None),
        ("eprint", p.id if p.is_arxiv else None),
        ("archivePrefix", "arXiv" if p.is_arxiv else None),
        ("primaryClass", p.primary_category if p.is_arxiv else None),
        ("keywords", (keywords := _escape(", ".join(p.categories))) or None),
        ("categories", _categories_field(p, keywords, (p.primary_category or "") if p.is_arxiv else "")),
        ("doi", _verbatim(doi) if isinstance(doi, str) and doi else None),
        ("url", _url(p.links().get("abs"))),
        ("pdf", _url(p.pdf_url)),
        ("openreview", _url(p.links().get("openreview"))),
        ("code", _url(p.code_url)),
        ("comment", _escape(p.comment, keep_space=True) if p.comment else None),
    ]
    if key is not None and _paper_id(key, _arxiv_id({k.lower(): v for k, v in fields if v})) != p.id:
        fields.append((ID_FIELD, _verbatim(p.id)))  # "mypaper" would come back as "bib:mypaper"
    fields.append(("abstract", _escape(p.abstract) if p.abstract else None))
    return kind, [(k, v) for k, v in fields if v]


def _kind(p: Paper, venue: str | None) -> str:
    """The entry type, consistent with the venue field it gets: with a venue, ``@article`` (a
    journal) or a type that takes a ``booktitle`` (``@inproceedings``), the BibTeX import's own
    when it gave the venue, else read from the venue; without one, an arXiv paper is an
    ``@article`` of arXiv, any other keeps its imported type (``@book``) or is a ``@misc``. A
    Zotero arXiv ``@misc`` merged with its NeurIPS ``@inproceedings`` was a @misc with a booktitle."""
    bib_type = str(p.slot("bibtex").get("type") or "").lower()
    if not venue:
        return "article" if p.is_arxiv else bib_type if bib_type and bib_type not in _VENUE_TYPES else "misc"
    if bib_type in _VENUE_TYPES and _owner_of_venue(p) == SOURCE:
        return bib_type
    parsed = p.slot("venue_parsed")  # read from the arXiv comment: its table says the kind
    journal = parsed.get("kind") == "journal" and parsed.get("label") == p.venue
    return "article" if journal or _JOURNAL.search(venue) else "inproceedings"


def _kept_fields(bib: dict) -> list[tuple[str, str | None]]:
    """The publication details a BibTeX import kept under ``extra.bibtex`` (volume, pages, …),
    written back: a bibliography needs them. A preprint server is no publisher (Zotero's
    ``publisher = {arXiv}``), nor DBLP's ``volume = {abs/ID}`` a volume."""
    kept: list[tuple[str, str | None]] = []
    for name in _PUBLICATION_FIELDS:
        value = bib.get(name)
        if not isinstance(value, str | int) or not str(value).strip():
            continue
        value = str(value)
        if (name == "publisher" and _NOT_A_VENUE.match(value)) or (name == "volume" and _CORR_VOLUME.match(value)):
            continue
        kept.append((name, _escape(value)))
    return kept


def _owner_of_venue(p: Paper) -> str:
    fields = p.slot("merge").get("fields", {})
    return str(fields.get("venue") or (p.sources[0] if p.sources else "")).split(":", 1)[0]


# the fields only the import reads: a reference to cite (the paper page, the API, MCP) leaves them out
_BOOKKEEPING = frozenset({ID_FIELD, "published", "listed", "updated", "categories"})


def entry(p: Paper, key: str | None = None, *, cite: bool = False) -> str:
    """One paper's BibTeX entry (no trailing newline), wherever paperdex shows or writes one.
    ``cite``: the entry a researcher copies into a bibliography, without the bookkeeping fields
    (:data:`_BOOKKEEPING`) that make an export come back whole on import but say nothing to a
    reader (``published = {unknown}`` on every arXiv preprint)."""
    key = key or _cite_key(p, set())
    kind, fields = paper_fields(p, key)
    if cite:
        fields = [(k, v) for k, v in fields if k not in _BOOKKEEPING]
    body = ",\n".join(f"  {k:<{_ALIGN}} = {v if k == 'month' else '{' + v + '}'}" for k, v in fields)
    return f"@{kind}{{{key},\n{body}\n}}"


def to_bibtex(papers: Iterable[Paper]) -> str:
    """A .bib file: one :func:`entry` per paper, cite keys made unique within the file."""
    taken: set[str] = set()
    entries = [entry(p, _cite_key(p, taken)) for p in papers]
    return "\n\n".join(entries) + "\n" if entries else ""


def is_export_of(stored: Paper, p: Paper) -> bool:
    """Whether ``p`` is what the import reads from :func:`entry`'s entry of ``stored`` under
    ``p``'s cite key: paperdex's own export of the paper, unedited. Re-importing it brings
    nothing (the merge would add only this source's name and slot), so the paper stays as it
    is, unchanged; an entry edited in a reference manager reads otherwise and is merged."""
    key = p.slot(SOURCE).get("key")
    return p.sources == [SOURCE] and isinstance(key, str) and parse_bibtex(entry(stored, key)).papers == [p]


def _reads(path: Path) -> Parsed | None:
    return read_bibtex(path) if path.suffix.lower() == ".bib" else None


register(
    Source(
        name=SOURCE,
        ranks={SOURCE: trust(title=35, abstract=35, authors=35, venue=40, dates=25, links=35, code=30, categories=30)},
        reads=_reads,
        exported=is_export_of,
    )
)

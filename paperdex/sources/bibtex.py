"""BibTeX in and out, through bibtexparser (v2).

Import maps the usual fields onto a Paper and keeps every other field under
``extra["bibtex"]`` so nothing is lost; export writes what a reference manager needs
(title, authors, year, venue, arXiv eprint, DOI, URL, abstract) plus the paperdex fields
(categories as ``keywords``, ``area``) so that export -> import gives the same records back.
Entries that do not parse are reported with their line and skipped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import bibtexparser
from bibtexparser.model import DuplicateBlockKeyBlock, Entry, Field

from ..paper import ARXIV_ID, Paper

SOURCE = "bibtex"
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s/?#]+?)(?:\.pdf)?(?:[?#]|$)")
_ARXIV_DOI = re.compile(r"10\.48550/arXiv\.(\S+)$", re.I)
_CATEGORY = re.compile(r"^[a-z][a-z\-]*(\.[A-Za-z][A-Za-z\-]*)?$")
_KEY_SAFE = re.compile(r"^[A-Za-z0-9:._/\-]+$")
_MAPPED = {
    "title",
    "author",
    "abstract",
    "year",
    "month",
    "date",
    "eprint",
    "archiveprefix",
    "primaryclass",
    "keywords",
    "booktitle",
    "journal",
    "area",
    "url",
    "doi",
    "note",
    "code",
    "pdf",
    "comment",
}


@dataclass
class BibResult:
    papers: list[Paper] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def split_names(value: str) -> tuple[list[str], bool]:
    """BibTeX names ("Last, First and First Last and others") as display names plus
    whether the list was cut with "and others"."""
    parts, depth, buf = [], 0, ""
    tokens = re.split(r"(\s+and\s+|[{}])", value)
    for tok in tokens:
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
        if depth == 0 and re.fullmatch(r"\s+and\s+", tok or ""):
            parts.append(buf)
            buf = ""
        else:
            buf += tok or ""
    parts.append(buf)
    names, truncated = [], False
    for p in (" ".join(x.split()) for x in parts):
        if not p:
            continue
        if p.lower() == "others":
            truncated = True
            continue
        bits = [b.strip() for b in _split_top(p, ",")]
        if len(bits) == 2:
            p = f"{bits[1]} {bits[0]}".strip()
        elif len(bits) == 3:  # von Last, Jr, First
            p = f"{bits[2]} {bits[0]} {bits[1]}".strip()
        names.append(_latex_to_text(p) if "\\" in p or "{" in p else p)
    return names, truncated


def _latex_to_text(name: str) -> str:
    """`Lo{\\"\\i}c` -> `Loïc`: names are matched and shown as text."""
    from pylatexenc.latex2text import LatexNodes2Text

    return " ".join(LatexNodes2Text().latex_to_text(name).split())


def _split_top(text: str, sep: str) -> list[str]:
    out, depth, buf = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == sep and depth == 0:
            out.append(buf)
            buf = ""
        else:
            buf += ch
    out.append(buf)
    return out


def _strip_braces(text: str) -> str:
    """`{{Attention}}` -> `Attention`: the outer case-protecting pair only."""
    text = " ".join(text.split())
    while text.startswith("{") and text.endswith("}") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _unprotect(title: str) -> str:
    """Drop case-protecting braces (`{BERT}` -> `BERT`) but keep LaTeX arguments (`\\emph{x}`)."""
    prev = None
    while prev != title:
        prev, title = title, re.sub(r"(?<![\\\w^_])\{([^{}]*)\}", r"\1", title)
    return title


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:
            return False
    return depth == 0


def _date(fields: dict[str, str]) -> str | None:
    d = fields.get("date", "")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", d):
        return d
    return None


def entry_to_paper(entry: Entry) -> Paper:
    f = {k.lower(): v.value if isinstance(v.value, str) else str(v.value) for k, v in entry.fields_dict.items()}
    title = _unprotect(_strip_braces(f.get("title", "")))
    if not title:
        raise ValueError("no title")
    authors, truncated = split_names(f.get("author", ""))
    arxiv_id = None
    eprint = f.get("eprint", "").strip()
    if eprint and (f.get("archiveprefix", "arxiv").lower() == "arxiv") and ARXIV_ID.match(eprint):
        arxiv_id = eprint
    elif m := _ARXIV_URL.search(f.get("url", "")) or _ARXIV_DOI.search(f.get("doi", "")):
        if ARXIV_ID.match(m.group(1)):
            arxiv_id = m.group(1)
    if arxiv_id:
        arxiv_id = re.sub(r"v\d+$", "", arxiv_id)
    key = entry.key
    pid = arxiv_id or (key if ":" in key else f"bib:{key}")
    cats = [c.strip() for c in re.split(r"[,;]", f.get("keywords", "")) if c.strip()]
    categories = [c for c in cats if _CATEGORY.match(c) and "." in c]
    primary = f.get("primaryclass", "").strip()
    if primary:
        categories = [primary, *[c for c in categories if c != primary]]
    bib_extra: dict[str, object] = {"key": key, "type": entry.entry_type}
    if "year" in f:
        bib_extra["year"] = f["year"]
    if f.get("doi"):
        bib_extra["doi"] = f["doi"]
    if arxiv_id and pid != arxiv_id:
        bib_extra["arxiv_id"] = arxiv_id
    other_kw = [c for c in cats if c not in categories]
    if other_kw:
        bib_extra["keywords"] = other_kw
    for k, v in f.items():
        if k not in _MAPPED:
            bib_extra[k] = v
    url = f.get("url") or None
    return Paper(
        id=pid,
        title=title,
        authors=authors,
        abstract=" ".join(f.get("abstract", "").split()),
        categories=categories,
        venue=_strip_braces(f.get("booktitle") or f.get("journal") or "") or None,
        venue_area=f.get("area") or None,
        published=_date(f),
        abs_url=url if url and not (arxiv_id and "arxiv.org" in url) else None,
        pdf_url=f.get("pdf") or None,
        code_url=f.get("code") or None,
        comment=f.get("comment") or f.get("note") or None,
        authors_truncated=truncated,
        sources=[SOURCE],
        extra={"bibtex": bib_extra},
    )


def parse_bibtex(text: str, name: str = "<bibtex>") -> BibResult:
    quiet = logging.getLogger("bibtexparser")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # its failures are reported below, with our line numbers
    try:
        lib = bibtexparser.parse_string(text)
    finally:
        quiet.setLevel(level)
    out = BibResult()
    for block in lib.failed_blocks:
        what = "duplicate key" if isinstance(block, DuplicateBlockKeyBlock) else "does not parse"
        first = block.raw.strip().splitlines()[0][:60] if block.raw.strip() else ""
        out.errors.append(f"{name}:{block.start_line + 1}: entry {what} ({first!r}); skipped")
    for entry in lib.entries:
        try:
            out.papers.append(entry_to_paper(entry))
        except ValueError as e:
            out.errors.append(f"{name}:{entry.start_line + 1}: @{entry.entry_type}{{{entry.key}: {e}; skipped")
    return out


def read_bibtex(path: str | Path) -> BibResult:
    path = Path(path)
    return parse_bibtex(path.read_text(encoding="utf-8"), path.name)


# --- export ----------------------------------------------------------------------------------


def _bib(p: Paper) -> dict:
    b = p.extra.get("bibtex")
    return b if isinstance(b, dict) else {}


def _cite_key(p: Paper, taken: set[str]) -> str:
    if _bib(p).get("key") and _KEY_SAFE.match(_bib(p)["key"]):
        key = _bib(p)["key"]  # the key the user's library already cites
    elif not p.is_arxiv and _KEY_SAFE.match(p.id):
        key = p.id  # "openreview:abc" comes back as the same id
    else:
        sur = re.sub(r"[^a-z]", "", (p.authors[0].split()[-1] if p.authors else "anon").lower()) or "anon"
        year = (p.date or "")[:4] or str(_bib(p).get("year", "")) or ("20" + p.id[:2] if p.is_arxiv else "")
        word = next((w for w in re.findall(r"[a-z]+", p.title.lower()) if len(w) > 3), "paper")
        key = f"{sur}{year}{word}"
    base, n = key, 1
    while key in taken:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2)}" if n <= 27 else f"{base}{n}"
    taken.add(key)
    return key


def _escape(text: str) -> str:
    return text if _balanced(text) else text.replace("{", "\\{").replace("}", "\\}")


def paper_to_entry(p: Paper, key: str) -> Entry:
    authors = " and ".join(p.authors + (["others"] if p.authors_truncated else []))
    fields: list[tuple[str, str | None]] = [
        ("title", "{" + _escape(p.title) + "}"),
        ("author", authors or None),
    ]
    date = p.published or p.date
    if date:
        fields += [("year", date[:4]), ("month", MONTHS[int(date[5:7]) - 1]), ("date", date)]
    elif _bib(p).get("year"):
        fields.append(("year", str(_bib(p)["year"])))
    if p.venue:
        entry_type = _bib(p).get("type") or "inproceedings"
    elif p.is_arxiv:
        entry_type = "misc"
    else:
        entry_type = _bib(p).get("type") or "misc"
    if p.venue:
        fields.append(("journal" if entry_type == "article" else "booktitle", p.venue))
    fields.append(("area", p.venue_area))
    if p.is_arxiv:
        fields += [("eprint", p.id), ("archiveprefix", "arXiv"), ("primaryclass", p.primary_category)]
    fields += [
        ("keywords", ", ".join(p.categories) or None),
        ("url", p.links().get("abs")),
        ("code", p.code_url),
        ("doi", (p.extra.get("arxiv") or {}).get("doi") if isinstance(p.extra.get("arxiv"), dict) else None),
        ("abstract", _escape(p.abstract) if p.abstract else None),
    ]
    return Entry(entry_type, key, [Field(k, v) for k, v in fields if v])


def to_bibtex(papers: Iterable[Paper]) -> str:
    taken: set[str] = set()
    entries = [paper_to_entry(p, _cite_key(p, taken)) for p in papers]
    if not entries:
        return ""
    return bibtexparser.write_string(bibtexparser.Library(entries))

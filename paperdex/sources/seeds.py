"""The plain-text result pages the project was seeded from, as an import format, told by their
first line. ``论文检索`` (a venue-paper search): per result an optional area line, an author line
(cut after ten names with ``等``) and the abstract; no title was captured, so a record's title is
its abstract's first sentence (``extra["seed"]["title_from_abstract"]``) until a merge brings the
real one. ``Daily Papers``: abstracts alone identify no paper, so it is reported, not imported.
A block that does not fit is reported with its line and skipped; the rest still imports.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from paperdex.paper import Paper
from paperdex.sources.registry import Parsed, Source, register, trust

SOURCE = "seed"
VENUE_SEARCH_HEADER = "论文检索"
DAILY_PAPERS_HEADER = "Daily Papers"
TRUNCATION_MARKS = ("等", "et al.", "et al", "and others", "…", "...")

_AREA = re.compile(r"^[^,·]{2,60} · [^·]{2,100}$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\\$])")


def split_authors(line: str) -> tuple[list[str], bool] | None:
    """(names, truncated) when ``line`` reads as an author list, else None."""
    text = line.strip()
    truncated = False
    for mark in TRUNCATION_MARKS:
        if text.endswith(mark):
            text, truncated = text[: -len(mark)].rstrip(" ,;"), True
            break
    if not text or text.endswith((".", ":", ";")) or len(text) > 1500:
        return None
    names = [n.strip() for n in re.split(r",|，|、", text)]
    if any(not n or len(n) > 60 or len(n.split()) > 6 or re.search(r"[.!?]\s|[()\[\]{}$=]", n) for n in names):
        return None
    return names, truncated


def title_from_abstract(abstract: str, limit: int = 160) -> str:
    first = _SENTENCE_END.split(abstract, maxsplit=1)[0].strip()
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0] + "…"
    return first


def parse_seed_text(text: str, name: str = "<seed>") -> Parsed:
    lines = text.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        return Parsed(errors=[f"{name}: empty file"])
    header = lines[first].strip()
    if header == DAILY_PAPERS_HEADER:
        n = sum(1 for ln in lines[first + 1 :] if ln.strip())
        return Parsed(
            errors=[f"{name}: a Daily Papers page carries {n} abstracts but no titles or authors; not imported"]
        )
    if header != VENUE_SEARCH_HEADER:
        return Parsed(errors=[f"{name}:{first + 1}: not a known seed page (header {header!r})"])

    page = Parsed()
    area: str | None = None
    area_line = 0
    authors: tuple[list[str], bool] | None = None
    authors_line = 0
    for lineno, ln in enumerate((line.strip() for line in lines[first + 1 :]), first + 2):
        if not ln:
            continue
        if _AREA.match(ln):
            if authors is not None:
                page.errors.append(f"{name}:{authors_line}: author line with no abstract after it; skipped")
                authors = None
            if area is not None:
                page.errors.append(f"{name}:{area_line}: area line {area!r} with no paper under it; skipped")
            area, area_line = ln, lineno
            continue
        parsed = split_authors(ln) if authors is None else None
        if parsed is not None:
            authors, authors_line = parsed, lineno
            continue
        if authors is None:
            if page.papers and not area:
                page.papers[-1].abstract += "\n\n" + ln  # a second paragraph of the previous abstract
                continue
            page.errors.append(f"{name}:{lineno}: text with no author line before it; skipped")
            area = None
            continue
        names, truncated = authors
        page.papers.append(_paper(ln, names, truncated, area, name, authors_line))
        area, authors = None, None
    if authors is not None:
        page.errors.append(f"{name}:{authors_line}: author line with no abstract after it (truncated page?)")
    elif area is not None:
        page.errors.append(f"{name}:{area_line}: area line {area!r} with no paper under it; skipped")
    return page


def _paper(abstract: str, authors: list[str], truncated: bool, area: str | None, name: str, line: int) -> Paper:
    digest = hashlib.sha1(" ".join(abstract.split()).encode()).hexdigest()[:12]
    return Paper(
        id=f"seed:{digest}",
        title=title_from_abstract(abstract),
        authors=authors,
        abstract=abstract,
        venue_area=area,
        authors_truncated=truncated,
        sources=[SOURCE],
        extra={"seed": {"title_from_abstract": True, "page": name, "line": line}},
    )


def _reads(path: Path) -> Parsed | None:
    """A text file whose first non-blank line is one of the known page headers; None for any other."""
    if path.suffix.lower() != ".txt":
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return parse_seed_text(text, path.name) if first in (VENUE_SEARCH_HEADER, DAILY_PAPERS_HEADER) else None


# Untitled, hand-collected records: trusted for the venue area they name and little else.
register(
    Source(
        name=SOURCE,
        ranks={SOURCE: trust(title=1, abstract=20, authors=10, venue=30, dates=5, links=5, code=5, categories=5)},
        reads=_reads,
    )
)

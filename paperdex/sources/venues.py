"""The venue a paper names in its arXiv comment or journal-ref ("Accepted at NeurIPS 2025",
"CVPR 2026 (Highlight)"), from a table of spellings (``paperdex/data/venues.tsv``). A mention
counts only as a claim of acceptance: a wrong venue costs more than a missing one. The rules and
their precision and recall: docs/venues.md.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from paperdex.sources.registry import Source, data_lines, register

SOURCE = "comment"  # the provenance of a venue read from the comment or journal-ref


@dataclass(frozen=True)
class Venue:
    name: str  # canonical: "NeurIPS"
    kind: str  # conference | journal
    year: int | None
    track: str | None  # None (main), Workshop, Findings, Datasets and Benchmarks, Demo, ...
    presentation: str | None  # oral | spotlight | highlight | poster
    source: str  # comment | journal_ref
    text: str  # the sentence it was read from

    @property
    def label(self) -> str:
        """The venue string stored and shown: "CVPR 2026 highlight", "ACL 2025 Findings"."""
        parts = [self.name, str(self.year) if self.year else "", self.track or "", self.presentation or ""]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class _Entry:
    name: str
    kind: str
    pattern: re.Pattern
    before: re.Pattern | None  # the year in front: "the 2025 Conference on Empirical Methods..."


def _spelling(s: str) -> str:
    body = r"\s+".join(re.escape(w) for w in s.split())
    if s.isupper() or (re.fullmatch(r"[A-Z0-9\-/]+", s) is not None):  # an acronym: its own case
        return body
    return f"(?i:{body})"


@lru_cache(maxsize=1)
def _spellings() -> dict[tuple[str, str], list[str]]:
    """(name, kind) -> its spellings, longest first, as paperdex/data/venues.tsv lists them."""
    by_name: dict[tuple[str, str], list[str]] = {}
    for line in data_lines("venues.tsv"):
        name, kind, spellings = line.split("\t")
        by_name.setdefault((name, kind), []).extend(x.strip() for x in spellings.split("|") if x.strip())
    return {k: sorted(v, key=len, reverse=True) for k, v in by_name.items()}


@lru_cache(maxsize=1)
def table() -> tuple[_Entry, ...]:
    """The venue table, longest spellings first so "SIGGRAPH Asia" wins over "SIGGRAPH"."""
    rows = sorted(
        ((name, kind, s) for (name, kind), spelled in _spellings().items() for s in spelled), key=lambda r: -len(r[2])
    )
    return tuple(
        _Entry(
            name,
            kind,
            re.compile(
                rf"(?<![A-Za-z0-9@])(?P<v>{_spelling(s)})(?P<w>W)?(?![A-Za-z])"
                # "CVPR Findings 2026", "ICLR Workshop 2025", "(CVPR) Workshops 2026", "EMNLP Main 2025"
                r"(?P<t>\)?\s+(?i:findings|workshops?|main))?"
                # the year after the name: "ICML 2025", "CVPR'26", "KDD '25", "AAAI-26", "CVPR2026",
                # "(CVPR) 2026", "NeurIPS (2025)", "KDD'2025"; two digits only glued or after ' or -
                r"(?:\)?[\s,\-'’]*\(?(?P<y>(?:19|20)\d\d)(?!\d)|(?P<y2>(?:\s?['’]|-)?\s?(?:1\d|2\d))(?![\d\w]|\.\d))?"
                r"(?P<w2>W(?![A-Za-z]))?"  # "CVPR2025W": its workshops
            ),
            None
            if " " not in s
            else re.compile(
                rf"(?P<y>(?:19|20)\d\d)\s+(?:(?:IEEE/CVF|IEEE|ACM|Annual)\s+)*(?P<v>{_spelling(s)})(?![A-Za-z])"
            ),
        )
        for name, kind, s in rows
    )


@lru_cache(maxsize=1)
def _any() -> tuple[re.Pattern, list[str]]:
    """Every spelling in one pattern, a group per venue, and the venue of each group: most
    comments name none, and one pass is far cheaper than a pattern per spelling (docs/venues.md)."""
    groups = [f"(?P<g{i}>{'|'.join(map(_spelling, spelled))})" for i, spelled in enumerate(_spellings().values())]
    return re.compile(rf"(?<![A-Za-z0-9@])(?:{'|'.join(groups)})(?![a-z])"), [name for name, _ in _spellings()]


def _candidates(text: str) -> set[str]:
    rx, names = _any()
    return {names[int(m.lastgroup[1:])] for m in rx.finditer(text) if m.lastgroup}


# a claim that the paper was accepted there
_POSITIVE = re.compile(
    r"\b(?:accept\w*|to appear|appear(?:s|ing)? (?:in|at)|forthcoming|publish\w*|present\w* at|camera[\s-]*ready|"
    # "Findings of the Association for Computational Linguistics: ACL 2025": the proceedings' name
    r"findings of|"
    r"proceedings|main (?:conference|track|paper)|oral|spotlight|highlight|poster)\b",
    re.I,
)
# the mention is about something else than this paper's acceptance
_NEGATIVE = re.compile(
    r"\b(?:submit\w*|submission|under (?:review|submission)|in review|review(?:ed)? at|rejected|withdrawn|"
    r"extended version of|extension of|extends|journal version|preliminary version|earlier version|"
    r"previous version|prior version|short version|conference version|workshop version|based on|builds? (?:up)?on|"
    r"portions? of|parts? of (?:this|the)|superseded|companion|see also|reproduc\w*|replicat\w*|"
    r"won|winner|winning|place|ranked|solution|technical report|tech report|challenge report|"
    r"not accepted|invited to|nominat\w*|thesis|dissertation|"
    # "12 pages. NeurIPS 2024 format": the venue's layout, not an acceptance
    r"format(?:ted)?|templates?)\b",
    re.I,
)
_TRACKS = (
    (re.compile(r"\bfindings?\b", re.I), "Findings"),
    (
        re.compile(r"\bdatasets?\s*(?:and|&)\s*benchmarks?\b|\bD\s?&\s?B\b|\bDB track\b", re.I),
        "Datasets and Benchmarks",
    ),
    (re.compile(r"\bposition(?: paper)? track\b", re.I), "Position"),
    (re.compile(r"\bdemo(?:nstration)?s?\b", re.I), "Demo"),
    (re.compile(r"\bindustry track\b", re.I), "Industry"),
    (re.compile(r"\bapplied data science\b|\bADS track\b|\(ADS\b", re.I), "Applied Data Science"),
    # NeurIPS's Competition Track: reviewed proposals and reports of the competitions it hosts,
    # in its proceedings; neither a workshop nor the main track
    (re.compile(r"\bcompetitions?\s+track\b", re.I), "Competition Track"),
    # AAAI's Fall/Spring/Summer Symposium Series: meetings of their own, not the conference
    *(
        (re.compile(rf"\b{season}\s+symposi(?:um|a)\b", re.I), f"{season.title()} Symposium")
        for season in ("fall", "spring", "summer")
    ),
    (
        re.compile(
            r"\bworkshops?\b|\btokshop\b|\bchallenge\b|\bcompetition\b|\btutorial\b|\bdoctoral\b|"
            r"\bstudent research\b|\bblog ?post\b|\btiny papers?\b|\baffinity\b|\bW\d|"
            r"\bbridge program\b",
            re.I,
        ),
        "Workshop",
    ),
)
# not "Oral and Dental Image Analysis" (a workshop's name)
_PRESENTATION = re.compile(r"\b(oral|spotlight|highlight|poster)s?\b(?!\s+(?:and|&)\s)", re.I)
_CLAUSES = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(\[])|;|\s\|\s")  # arXiv wraps comment lines: \n is a space
_LEAD = re.compile(r"^\W*(?:(?:in|at|the|to|for)\s+)*", re.I)


def _year(m: re.Match) -> int | None:
    if m.group("y"):
        return int(m.group("y"))
    if "y2" in m.re.groupindex and m.group("y2"):
        return 2000 + int(re.sub(r"\D", "", m.group("y2")))
    return None


def _mentions(clause: str) -> list[tuple[_Entry, re.Match]]:
    """Venue mentions of a clause, longest spelling first, no two overlapping."""
    taken: list[tuple[int, int]] = []
    out: list[tuple[_Entry, re.Match]] = []
    names = _candidates(clause)
    for e in table():
        if e.name not in names:
            continue
        for rx in (e.before, e.pattern):
            for m in rx.finditer(clause) if rx else ():
                a, b = m.span("v")
                if any(a < y and x < b for x, y in taken):
                    continue
                if (
                    rx is e.pattern
                    and _year(m) is None
                    and e.before
                    and any(e2 is e and m2.span("v") == (a, b) for e2, m2 in out)
                ):
                    continue
                taken.append((a, b))
                out.append((e, m))
    return sorted(out, key=lambda em: em[1].start())


def parse(text: str | None, source: str = "comment", latest_year: int | None = None) -> Venue | None:
    """The venue ``text`` says the paper was accepted at or published in, or None when it
    names none, only a submission, or more than one venue it could mean."""
    if not text or not text.strip() or not _candidates(text):
        return None
    found: list[Venue] = []
    for raw in _CLAUSES.split(" ".join(text.split())):
        clause = " ".join(raw.split())
        if not clause or _NEGATIVE.search(clause):
            continue
        mentions = _mentions(clause)
        if not mentions:
            continue
        lead = len(_LEAD.match(clause).group(0))  # type: ignore[union-attr]  # _LEAD matches every string
        claimed = source == "journal_ref" or bool(_POSITIVE.search(clause)) or mentions[0][1].start() <= lead
        if not claimed:
            continue
        for e, m in mentions:
            year = _year(m)
            if e.kind == "conference" and year is None:
                continue  # "CVPR" alone: a conference is named with its year
            if year is not None and not (1990 <= year <= (latest_year or 2100) + 1):
                continue
            glued = " ".join(
                m2.group(g) or ""
                for e2, m2 in mentions
                if e2.name == e.name  # "...Pattern Recognition 2025 - CVPRW": a workshop
                for g in ("w", "w2", "t")
                if g in m2.re.groupindex
            ).lower()
            track = "Findings" if "findings" in glued else "Workshop" if "w" in glued or "@" in clause else None
            track = track or next((name for rx, name in _TRACKS if rx.search(clause)), None)
            pres = _PRESENTATION.search(clause)
            presentation = pres.group(1).lower() if pres else None
            found.append(Venue(e.name, e.kind, year, track, presentation, source, clause[:300]))
    names = {(v.name, v.year) for v in found}
    dated = {name for name, year in names if year is not None}
    # "Transactions on Machine Learning Research (TMLR), 2026": one journal named twice, once
    # with its year; the dated mention says it all
    names = {(name, year) for name, year in names if year is not None or name not in dated}
    if len(names) != 1:
        return None  # none, or two venues: which one is this paper's is not said
    return next(v for v in found if (v.name, v.year) in names)


def parse_paper(comment: str | None, journal_ref: str | None, latest_year: int | None = None) -> Venue | None:
    """The journal-ref first (a publication, stated by the authors), then the comment."""
    return parse(journal_ref, "journal_ref", latest_year) or parse(comment, "comment", latest_year)


def _journal_ref(p: Any) -> str | None:
    for key in ("arxiv", "arxiv-rss", "file"):
        if isinstance(ref := p.slot(key).get("journal_ref"), str):
            return ref
    ref = p.extra.get("journal_ref") or p.extra.get("journal-ref")
    return ref if isinstance(ref, str) else None


def from_comment(p: Any) -> bool:
    """Whether the paper's venue is the one read from its comment (no source stated one)."""
    return bool(p.venue) and p.venue == p.slot("venue_parsed").get("label")


def apply(p: Any) -> Any:
    """Set ``p.venue`` from its comment or journal-ref when no source gave one, keep it in step
    when the comment changes (a new version), and leave a venue a source stated alone."""
    if p.venue and not from_comment(p):
        return p
    year = int(p.date[:4]) if p.date else None
    v = parse_paper(p.comment, _journal_ref(p), year)
    if v is None:
        if from_comment(p):
            p.venue = None
        p.extra.pop("venue_parsed", None)
        return p
    p.venue = v.label
    p.extra["venue_parsed"] = {**{k: x for k, x in asdict(v).items() if x is not None}, "label": v.label}
    return p


register(Source(name=SOURCE, ranks={SOURCE: {"venue": 1}}))  # below every source that states a venue

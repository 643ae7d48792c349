"""The one paper record every source produces and every interface shows.

Text is kept exactly as the source gave it (LaTeX and all); :func:`index_text` is the only
place it is normalised, and only for the search index.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

ARXIV_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")


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

    def links(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.abs_url or self.is_arxiv:
            out["abs"] = self.abs_url or f"https://arxiv.org/abs/{self.id}"
        if self.pdf_url or self.is_arxiv:
            out["pdf"] = self.pdf_url or f"https://arxiv.org/pdf/{self.id}"
        if self.code_url:
            out["code"] = self.code_url
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["date"] = self.date
        d["links"] = self.links()
        return d

    def content_hash(self) -> str:
        """Changes whenever anything a user could see changes; drives upsert accounting."""
        d = asdict(self)
        blob = json.dumps(d, sort_keys=True, ensure_ascii=False)
        return hashlib.sha1(blob.encode()).hexdigest()

    def text_hash(self) -> str:
        """Changes only when the embedded text changes, so a vector is kept across edits of
        other fields (a new venue, a comment) and dropped when title or abstract change."""
        return hashlib.sha1(f"{self.title}\n{self.abstract}".encode()).hexdigest()


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_KNOWN = {f for f in Paper.__dataclass_fields__}


def _str_list(rec: dict[str, Any], key: str) -> list[str]:
    v = rec.get(key)
    if v is None:
        return []
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise RecordError(f"'{key}' must be a list of strings")
    return [x.strip() for x in v if x.strip()]


def paper_from_dict(rec: Any, source: str = "file") -> Paper:
    """Validate a JSON object (the shared corpus format, or Paper.to_dict output)."""
    if not isinstance(rec, dict):
        raise RecordError(f"expected a JSON object, got {type(rec).__name__}")
    pid = rec.get("id")
    if not isinstance(pid, str) or not pid.strip():
        raise RecordError("missing or empty 'id'")
    pid = re.sub(r"v\d+$", "", pid.strip()) if ARXIV_ID.match(pid.strip()) else pid.strip()
    title = rec.get("title")
    if not isinstance(title, str) or not title.strip():
        raise RecordError("missing or empty 'title'")
    abstract = rec.get("abstract", rec.get("summary", "")) or ""
    if not isinstance(abstract, str):
        raise RecordError("'abstract' must be a string")
    dates: dict[str, str | None] = {}
    for key in ("published", "listed", "updated"):
        v = rec.get(key)
        if v is not None and (not isinstance(v, str) or not _DATE.match(v[:10])):
            raise RecordError(f"'{key}' must be a date YYYY-MM-DD, got {v!r}")
        dates[key] = v[:10] if v else None

    def opt(key: str) -> str | None:
        v = rec.get(key)
        if v is None:
            return None
        if not isinstance(v, str):
            raise RecordError(f"'{key}' must be a string")
        return v or None

    extra = dict(rec.get("extra") or {})
    for k, v in rec.items():
        if k not in _KNOWN and k not in ("date", "links", "summary"):
            extra[k] = v  # e.g. code_stars: never dropped
    return Paper(
        id=pid,
        title=title.strip(),
        authors=_str_list(rec, "authors"),
        abstract=abstract.strip(),
        categories=_str_list(rec, "categories"),
        venue=opt("venue"),
        venue_area=opt("venue_area"),
        abs_url=opt("abs_url"),
        pdf_url=opt("pdf_url"),
        code_url=opt("code_url"),
        comment=opt("comment"),
        authors_truncated=bool(rec.get("authors_truncated", False)),
        sources=_str_list(rec, "sources") or [source],
        extra=extra,
        **dates,
    )


# --- normalisation for the index only -------------------------------------------------

_LATEX_CMD_ARG = re.compile(
    r"\\(?:textbf|textit|emph|mathrm|mathbf|mathcal|text|texttt|mathbb|underline)\s*\{([^{}]*)\}"
)
_LATEX_CMD = re.compile(r"\\([A-Za-z]+)")
_MARKUP = re.compile(r"\*\*|__|[{}$^~]|\\[,;:! ]")


def index_text(text: str) -> str:
    """Plain words for the tokenizer: `$\\beta$-VAE` -> `beta-VAE`, `\\textbf{X}` -> `X`."""
    if not text:
        return ""
    text = _LATEX_CMD_ARG.sub(r"\1", text)
    text = _LATEX_CMD.sub(r"\1", text)
    text = _MARKUP.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip()

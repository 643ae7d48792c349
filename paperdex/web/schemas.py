"""The shapes the JSON API answers with, for ``/openapi.json`` only: endpoints build their JSON
themselves (FastAPI's encoder would cost more than a search), and the schemathesis test checks
every answer against these. Answers may carry more fields, so the core can grow without
breaking the spec.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Links(_Open):
    """Only http(s) links: anything else in the data (`javascript:`, `data:`) is left out."""

    abs: str | None = Field(None, description="Abstract page")
    pdf: str | None = Field(None, description="PDF")
    code: str | None = Field(None, description="Code repository")
    openreview: str | None = Field(None, description="OpenReview forum (reviews, decision)")


class PaperOut(_Open):
    id: str
    title: str = Field(description="As the source gave it (LaTeX kept)")
    authors: list[str]
    abstract: str
    categories: list[str]
    venue: str | None
    venue_area: str | None
    published: str | None
    listed: str | None
    updated: str | None
    date: str | None = Field(description="listed, else published, else updated (YYYY-MM-DD)")
    abs_url: str | None
    pdf_url: str | None
    code_url: str | None
    comment: str | None
    authors_truncated: bool
    sources: list[str]
    extra: dict[str, Any] = Field(description="Source-specific fields (code_stars, upvotes, merge provenance…)")
    links: Links


class Why(_Open):
    lexical_rank: int | None
    lexical_score: float | None
    dense_rank: int | None
    dense_score: float | None


class HitOut(PaperOut):
    tier: str = Field(description='The list it is in (`tiers`): "match", "related" or "ranked"')
    score: float
    why: Why
    snippet_html: str | None = Field(description="Escaped HTML, query words in <mark>")
    title_html: str = Field(description="Escaped HTML, query words in <mark>")


class FacetValue(_Open):
    value: str
    count: int


class Tier(_Open):
    tier: str = Field(description='"match": the papers that match; "related": the rest listed; "ranked": one list')
    count: int = Field(description="How many papers this list holds over all pages")


class SearchOut(_Open):
    query: str
    mode: str
    sort: str
    total: int = Field(description="The papers that match (the first tier)")
    read_as: str | None = Field(description='How the query was read: "keywords", "question", "sentence", "pasted"')
    tiers: list[Tier] = Field(description="The lists the pages show, in order, with their counts")
    page: int
    pages: int
    per_page: int
    took_ms: float
    notices: list[str]
    facets: dict[str, list[FacetValue]]
    hits: list[HitOut]


class PaperDetail(PaperOut):
    bibtex: str


class SimilarPaper(PaperOut):
    score: float


class SimilarOut(_Open):
    id: str
    similar: list[SimilarPaper]


class DailyOut(_Open):
    day: str | None
    category: str | None
    total: int
    day_total: int
    page: int
    pages: int
    per_page: int
    prev_day: str | None
    next_day: str | None
    categories: list[FacetValue]
    papers: list[PaperOut]


class DayCount(_Open):
    day: str
    count: int


class DaysOut(_Open):
    days: list[DayCount]


class SavedIn(BaseModel):
    """POST /api/saved's body: any other field is a 400 naming it."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, description="Its name (default: the query); a name taken is a 409")
    query: str | None = Field(None, description="The query (the query language); empty: the filters alone")
    q: str | None = Field(None, description="`query`'s older name (one of the two)")
    params: dict[str, str] | None = Field(
        None, description="The filters as GET /api/saved shows them; or each field below beside `name` and `query`"
    )
    mode: Literal["hybrid", "lexical", "dense"] | None = Field(None, description="Ranking")
    category: str | None = Field(None, description="A category (cs.LG) or archive (cs)")
    date_from: str | None = Field(None, alias="from", description="Earliest date, YYYY[-MM[-DD]]")
    date_to: str | None = Field(None, alias="to", description="Latest date, YYYY[-MM[-DD]]")
    venue: str | None = Field(None, description="Substring of the venue")
    area: str | None = Field(None, description="Substring of the venue area")
    author: str | None = Field(None, description="An author name")
    lang: Literal["en", "zh"] | None = Field(None, description="The language of its page and feed")
    replace: bool = Field(False, description="Replace the saved search of this name (else a 409)")
    id: Any = Field(None, description="Ignored, as created, seen_at, new and error: GET's items post back")
    created: Any = None
    seen_at: Any = None
    new: Any = None
    error: Any = None


class SavedOut(_Open):
    id: int
    name: str
    query: str
    params: dict[str, str]
    created: str
    seen_at: str | None


class ErrorBody(BaseModel):
    status: int
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


def _error(text: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": text}


BAD_REQUEST = _error("A bad request: a parameter out of range, an invalid date, a query syntax error")
NOT_FOUND = _error("No paper with this id")
NEEDS_TOKEN = _error("No token, or not a valid one: send Authorization: Bearer TOKEN (paperdex token create)")
NAME_TAKEN = _error('A saved search of this name exists: another name, or "replace": true')
BUSY = _error("Every searcher is busy: try again after the `Retry-After` seconds")
BUSY["headers"] = {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}}

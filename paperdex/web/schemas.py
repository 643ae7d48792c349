"""The shapes the JSON API answers with, for ``/openapi.json`` only: endpoints build their JSON
themselves (FastAPI's encoder would cost more than a search), and the schemathesis test checks
every answer against these. Answers may carry more fields, so the core can grow without
breaking the spec.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from paperdex.discover import library
from paperdex.service import MAX_RELATED

MAX_IDS = 1000  # paper ids in one write (views/library_api.py)


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


class SavedItem(SavedOut):
    new: int | None = Field(description="Papers new since the last visit (None: not counted in time)")
    error: str | None = Field(description="Why the stored search no longer runs, if it does not")


class SavedList(_Open):
    saved_searches: list[SavedItem]


class BriefPaper(_Open):
    """A paper in a list: its id, plain title (LaTeX read), first authors ("…", "et al.")."""

    id: str
    title: str
    authors: list[str]
    date: str | None
    categories: list[str]


class NewMatchesOut(SavedOut):
    new: int = Field(description="How many papers are new since the last visit")
    complete: bool = Field(description="False: more matched than could be counted")
    papers: list[BriefPaper] = Field(description="The newest of them, at most `limit`")
    notices: list[str]
    error: str | None = Field(description="Why the stored search no longer runs, if it does not")


class SessionOut(_Open):
    signed_in: bool = Field(description="Whether this browser is signed in (the sign-in cookie)")
    tags: list[str] = Field(description="The tag names, for a card's save control")
    name: str | None = Field(None, description="The token's name, when signed in")
    csrf: str | None = Field(None, description="The value a signed-in browser's writes send as X-CSRF-Token")


class ForYouPaper(BriefPaper):
    score: float = Field(description="Its best score over the tags")
    tag: str = Field(description="The tag that scored it best")


class ForYouOut(_Open):
    day: str | None
    notices: list[str]
    total: int = Field(description="The day's papers the tags score: what the pages list")
    day_total: int = Field(description="The day's papers")
    page: int
    pages: int = Field(description="Pages of `per_page` papers (at least 1); a page past the last lists none")
    per_page: int = Field(description="Papers a page: the request's `per_page` (or `k`, its older name)")
    papers: list[ForYouPaper]


class RelatedHit(BriefPaper):
    why: dict[str, Any] = Field(description="lexical_rank, dense_rank and score")


class RelatedOut(_Open):
    key_terms: list[str] = Field(description="The text's words the lexical side searched")
    took_ms: float
    notices: list[str]
    hits: list[RelatedHit]


class TagOut(_Open):
    name: str
    count: int = Field(description="Papers in the tag")
    created: str | None
    updated: str | None


class TagsOut(_Open):
    tags: list[TagOut]


class TagDetail(TagOut):
    papers: list[str] = Field(description="Its papers' ids, the last added first")


class TagAdded(TagOut):
    added: int = Field(description="Papers that were not in the tag yet")


class RecommendationOut(_Open):
    paper: BriefPaper
    score: float
    why: dict[str, Any] | None = Field(description="The saved papers nearest it, its key terms, the model")


class RecommendationsOut(_Open):
    tag: str
    positives: int = Field(description="The tag's papers the model learned from")
    negatives: int
    candidates: int = Field(description="Papers ranked")
    took_ms: float
    trained: bool = Field(description="Fitted for this request (False: the model kept from before)")
    notices: list[str]
    model: dict[str, Any] | None = Field(description="Which model ranked, and why it was chosen")
    recommendations: list[RecommendationOut]


class RemovedOut(_Open):
    removed: int


class DeletedOut(_Open):
    deleted: bool


class DismissedOut(_Open):
    dismissed: int = Field(description="Papers newly marked not interesting")


class IdsIn(BaseModel):
    """The papers of a write: `ids`, or one `id`."""

    ids: list[str] = Field(
        default_factory=list, min_length=1, max_length=MAX_IDS, description="Paper ids (arXiv ids, DOIs)"
    )
    id: str = Field(default_factory=str, description="One paper id, instead of `ids`")


class RelatedIn(BaseModel):
    """POST /api/related's body."""

    text: str = Field(description="An abstract or a paragraph: its related work is found")
    k: int = Field(20, ge=1, le=MAX_RELATED, description="How many papers")
    category: str | None = Field(None, description="A category (cs.LG), archive (cs) or prefix (cs.C*)")
    date_from: str | None = Field(None, alias="from", description="Earliest date, YYYY[-MM[-DD]]")
    date_to: str | None = Field(None, alias="to", description="Latest date, YYYY[-MM[-DD]]")


# The library file's shape: what an import checks, for the API and `tag import` alike
LibraryExport = library.LibraryExport


class ImportOut(_Open):
    tags: int
    papers: int = Field(description="Papers newly saved into tags")
    dismissed: int
    saved_searches: int
    refused: list[str] = Field([], description="Saved searches that no longer parse, each with why")


class SummaryOut(_Open):
    id: str
    summaries: dict[str, dict[str, Any]] = Field(description="By language: the TL;DR and five parts, machine-written")
    written: int = Field(description="Summaries written by this request")
    tokens: int = Field(description="The language model's tokens it took")


class SuggestionOut(_Open):
    query: str = Field(description="The whole query with its last word completed")
    label: str
    kind: str = Field(description="term, acronym, zh, author, category, venue or syntax")
    note: str


class SuggestOut(_Open):
    q: str
    suggestions: list[SuggestionOut]


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema with its definitions in place, for a request body a route reads
    itself (`openapi_extra`): there "#/$defs/..." would point at the document's root."""
    schema = model.model_json_schema(by_alias=True)
    defs = schema.pop("$defs", {})

    def placed(x: Any) -> Any:
        if isinstance(x, dict):
            return placed(defs[x["$ref"].rsplit("/", 1)[-1]]) if "$ref" in x else {k: placed(v) for k, v in x.items()}
        return [placed(v) for v in x] if isinstance(x, list) else x

    out: dict[str, Any] = placed(schema)
    return out


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
NO_TAG = _error("No tag of this name")
NO_SAVED = _error("No saved search of this name or id")
IDS_MISSING = _error(
    "A paper id not in this store, or a tag that is not there or does not hold it (nothing was written)"
)
NOT_ALLOWED = _error(
    "Signed in by the cookie without the CSRF value, a request from another site, or a read-only store"
)
TOO_LARGE = _error("The body is over its size limit")
NOT_JSON = _error("The body is not sent as application/json")
CANNOT_WRITE = _error("Every searcher is busy, or the store cannot be written now")
CANNOT_WRITE["headers"] = BUSY["headers"]
SUMMARY_BUDGET = _error("The language model's token budget for summaries is spent")
LLM_FAILED = _error("The language model cannot be used, or did not answer with a summary")
NO_LLM = _error(
    "No language model is configured (PAPERDEX_LLM_URL, PAPERDEX_LLM_MODEL), or the store cannot be written"
)

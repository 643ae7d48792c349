"""What a query asks for, before any index is read: the request (`Request`, its `Filters`),
checked, and what its query says (`Plan`: constraints, free words as `Concept`s, its class):
the parts of the contract (docs/search.md) every backend shares."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

from paperdex.messages import message, typed
from paperdex.paper import index_text
from paperdex.search import query as Q
from paperdex.store import PrefixCounts
from paperdex.text import (
    QUERY_FILLER,
    STOPWORDS,
    acronyms,
    cjk_grams,
    has_cjk,
    index_words,
    split_cjk,
    stem,
    tokens,
    zh,
)

MAX_WINDOW = 10_000  # results a query lists at most (pages past it are refused)
MODES = ("hybrid", "lexical", "dense")
SORTS = ("relevance", "newest")
# What a paper scored by a Chinese word's less frequent translation counts (docs/relevance.md)
ALT_WEIGHT = 0.8


@dataclass
class Filters:
    """Structured filters from a form or API: query clauses, as if typed in the query."""

    category: str | None = None
    date_from: str | None = None
    date_to: str | None = None
    venue: str | None = None
    area: str | None = None
    author: str | None = None

    def nodes(self) -> list[Q.Node]:
        out: list[Q.Node] = []
        if self.category:
            out.append(Q.make_leaf("cat", self.category, False, None))
        if self.date_from or self.date_to:
            out.append(Q.Filter("date", Q.date_range(self.date_from, self.date_to)))
        if self.venue:
            out.append(Q.Filter("venue", self.venue))
        if self.area:
            out.append(Q.Filter("area", self.area))
        if self.author:
            out.append(Q.make_leaf("au", self.author, True, None))
        return out

    def url_params(self) -> dict[str, str | None]:
        """The filters under their names in URLs (URL_NAMES)."""
        return {URL_NAMES.get(f.name, f.name): getattr(self, f.name) for f in fields(Filters)}


# the filters' names in URLs, forms and saved searches, where they differ from the fields'
URL_NAMES = {"date_from": "from", "date_to": "to"}


@dataclass(kw_only=True)
class Request(Filters):
    """One search request as every interface makes it (``service.SearchParams``)."""

    q: str = ""
    mode: str = "hybrid"
    sort: str = "relevance"
    page: int = 1
    per_page: int = 20
    literal: bool = False  # the query as plain text, without query syntax

    def has_filters(self) -> bool:
        return any(getattr(self, f.name) for f in fields(Filters))


def request(q: str | Request, filters: Filters | None = None, **given: Any) -> Request:
    """A request as given, or made of a query, its filters and other fields by name."""
    if filters is not None:
        given.update((f.name, getattr(filters, f.name)) for f in fields(Filters))
    if isinstance(q, Request):  # the fields given by name replace the request's own
        return replace(q, **given) if given else q
    return Request(q=q, **given)


@dataclass
class Concept:
    """One thing asked for: any of the alternatives, each a tuple of stems in text order."""

    label: str
    alts: list[tuple[str, ...]]
    weights: list[float] | None = None  # what a paper scored by each alternative counts; None: 1
    # words of a dictionary gloss may stand apart (docs/relevance.md); set phrases' may not
    loose: bool = False
    # the Chinese word read (扩散模型), found as written in papers written in Chinese
    # (`zh_alt`); kept apart from `alts`, so that a store of English papers ranks as before
    zh: str = ""

    def weight(self, i: int) -> float:
        return 1.0 if self.weights is None else self.weights[i]


def alt_of(text: str) -> tuple[str, ...]:
    """A phrase as an alternative: its stems in order, stopwords out, as the index reads it."""
    return tuple(stem(w) for w in tokens(text) if w not in STOPWORDS)


def together(c: Concept, alt: tuple[str, ...]) -> bool:
    """Whether `alt` matches only where its words stand together: multi-word, not loose."""
    return len(alt) > 1 and not c.loose


def alt_pairs(alt: tuple[str, ...]) -> list[tuple[str, str]]:
    """The rule for a multi-word alternative, on every backend: each of its consecutive word
    pairs stands together (stopwords aside) in the title or the abstract."""
    return list(dict.fromkeys(zip(alt, alt[1:], strict=False)))


def text_pairs(text: str) -> set[tuple[str, str]]:
    """The adjacent word pairs of one field's text, read as the lexical snapshot reads it (its
    CJK as bigrams: `text.index_words`)."""
    ws = [stem(w) for w in index_words(index_text(text)) if w not in STOPWORDS]
    return set(zip(ws, ws[1:], strict=False))


def zh_alt(c: Concept) -> tuple[str, ...]:
    """A concept's Chinese word as the index holds it, its bigrams (`text.cjk_grams`), to stand
    together; none for a lone character, which the index holds only where it stands alone."""
    return tuple(stem(g) for g in cjk_grams(c.zh)) if len(c.zh) > 1 else ()


def _zh_concepts(run: str, zh_dict: bool) -> list[Concept]:
    out = []
    for word, alts in zh.words(run, zh_dict, table=PrefixCounts):
        stems = list(dict.fromkeys(filter(None, map(alt_of, alts))))  # distinct, in order
        if stems:
            loose = len(stems) == 1 and len(set(stems[0])) > 1
            out.append(Concept(" ".join(alts[:1]), stems, [1.0] + [ALT_WEIGHT] * (len(stems) - 1), loose, word))
    return out


def is_filler(c: Concept) -> bool:
    """Whether a concept is a question's frame, not its topic ("how", "methods", 如何): every
    alternative one word of `QUERY_FILLER`. Set aside when there are others (not by the dense side)."""
    return all(len(alt) == 1 and alt[0] in _FILLER_STEMS for alt in c.alts)


_FILLER_STEMS = frozenset(stem(w) for w in QUERY_FILLER)


def concepts_of(t: Q.Text, zh_dict: bool = True) -> tuple[list[Concept], list[str]]:
    """The concepts of one Text node, and the Chinese words it could not translate."""
    out: list[Concept] = []
    untranslated: list[str] = []
    for part, cjk in split_cjk(t.raw) if t.raw else [(" ".join(t.words), False)]:
        if cjk:
            if not (got := _zh_concepts(part, zh_dict)):
                untranslated.append(part)
            out.extend(got)
            continue
        if not (ws := [w for w in tokens(part) if w not in STOPWORDS]):
            continue
        if t.phrase:  # a phrase's words rank one by one; the phrase itself is matched exactly
            out.extend(Concept(w, [(stem(w),)]) for w in ws)
        else:
            alts = [tuple(stem(w) for w in ws)]
            if len(ws) == 1:  # an acronym also stands for its long forms, as much as for itself
                alts = list(dict.fromkeys([*alts, *filter(None, map(alt_of, acronyms.expand(part)))]))
            out.append(Concept(part.strip(), alts))
    return out, untranslated


def _positives(node: Q.Node, out: list[Q.Text]) -> None:
    if isinstance(node, Q.Text):
        out.append(node)
    elif isinstance(node, Q.Bool):
        for c in node.children:
            _positives(c, out)


@dataclass(kw_only=True)
class Plan(Request):
    """The request, checked, and what its query says: every backend starts from it."""

    offset: int = 0
    # a page past the results window: searched as page 1 for its counts, listed empty (engine.search)
    beyond_window: bool = False
    zh_dict: bool = True  # read Chinese through the dictionary (Settings.zh_dict)
    ref: tuple[str, str] | None = None  # a pasted id, arXiv URL or DOI
    soft: list[Q.Text] = field(default_factory=list)  # free words
    hard: list[Q.Node] = field(default_factory=list)  # constraints, the filters included
    concepts: list[Concept] = field(default_factory=list)
    positives: list[Q.Text] = field(default_factory=list)  # words inside the constraints
    notices: list[str] = field(default_factory=list)
    filler: list[Concept] = field(default_factory=list)  # question words set aside (`is_filler`)
    # Chinese typed as a word of its own that no dictionary entry reads: perhaps a name (何恺明)
    name_like: list[str] = field(default_factory=list)

    @cached_property
    def query_class(self) -> tuple[str, str]:
        """(language, form): "keywords" up to three concepts, else or for a question "sentence"."""
        lang = self.lang
        if lang == "zh" and any(not has_cjk(part) and tokens(part) for part, _ in split_cjk(self.q)):
            lang = "mixed"  # a model or method name among Chinese words: both sides read English
        return lang, "sentence" if len(self.concepts) > 3 or self.filler else "keywords"

    @property
    def statement(self) -> bool:
        """A sentence without a question's frame: a claim, a description (PHRASE_BOOST)."""
        return self.query_class[1] == "sentence" and not self.filler

    def rank_concepts(self, present: list[Concept]) -> list[Concept]:
        """What ranks: the free concepts some paper contains, and the constraints' words."""
        out = list(present)
        for t in self.positives:
            if not t.prefix and t.column != "authors":
                out.extend(concepts_of(t, self.zh_dict)[0])
        return out

    @cached_property
    def dense_text(self) -> str:
        """What the embedding model reads: the query's words, fields' included, a Chinese run
        as its words' first English translations (docs/relevance.md), kept as typed too where
        the dictionary covers it only in part; a prefix (`transform*`) as its letters."""
        parts: list[str] = []
        for t in [*self.soft, *self.positives]:
            if t.column == "authors" or not t.raw:
                continue
            for run, cjk in split_cjk(t.raw.rstrip("*") if t.prefix else t.raw):  # a prefix's stem, no "*"
                if alts := zh.concepts(run, self.zh_dict, table=PrefixCounts) if cjk else []:
                    parts.append(" ".join(a[0] for a in alts))
                if not alts or sum(len(w) for w in zh.segment(run, PrefixCounts)) < len(run.strip()):
                    parts.append(run)
        return " ".join(x.strip() for x in parts if x.strip())

    @cached_property
    def author_phrases(self) -> list[list[str]]:
        """The words of each name an `au:` constraint asks for (its readings and orders too), to
        mark on a card the authors it matched (`names.matched`)."""
        return [t.words for t in self.positives if t.column == "authors" and not t.prefix and t.words]

    @property
    def lang(self) -> str:
        return "zh" if has_cjk(self.q) else "en"

    @property
    def dense_lang(self) -> str:
        """The language the embedding model reads (Chinese left untranslated), for its floors."""
        return "zh" if has_cjk(self.dense_text) else "en"

    @property
    def cjk_words(self) -> bool:
        return any(has_cjk(t.raw) for t in self.soft)


def plan(q: str | Request, *, zh_dict: bool = True, **given: Any) -> Plan:
    """Check the request (`request`) and read its query (docs/search.md)."""
    if (r := request(q, **given)).mode not in MODES:
        raise Q.QueryError(message("unknown_mode", value=r.mode, choices=", ".join(MODES)))
    if r.sort not in SORTS:
        raise Q.QueryError(message("unknown_sort", value=r.sort, choices=", ".join(SORTS)))
    page, per_page = max(1, int(r.page)), max(1, min(int(r.per_page), 200))
    # past the window: whether it is past the last page too (the usual case: page 501 of a search
    # of 5,435 papers said "results are listed up to number 10,000") is known once it is searched; a
    # page that starts in it is listed to its end (page 334 of 30 a page, 9,991-10,000, was refused)
    beyond = (offset := (page - 1) * per_page) >= MAX_WINDOW
    p = Plan(**{**vars(r), "page": page, "per_page": per_page}, offset=0 if beyond else offset, zh_dict=zh_dict)
    p.beyond_window = beyond
    p.ref = None if r.literal else Q.paper_ref(r.q)
    if p.ref is not None:
        return p
    if prose := not r.literal and (n_words := Q.prose_words(r.q)) > 0:
        p.notices.append(message("read_as_prose", words=n_words, limit=Q.MAX_TERMS))
    ids = [] if r.literal else Q.pasted_ids(r.q)
    q = " OR ".join(f"id:{i}" for i in ids) if ids else r.q
    for child in (Q.parse_literal(q) if r.literal or prose else Q.parse(q)).children:
        if isinstance(child, Q.Text) and child.column is None and not child.phrase and not child.prefix:
            p.soft.append(child)
        else:
            p.hard.append(child)
    p.hard.extend(r.nodes())
    for t in p.soft:
        cs, untranslated = concepts_of(t, zh_dict)
        p.concepts.extend(cs)
        # not for function words and words left unread on purpose (和, 模型, 让AI…: `zh.unread_matters`)
        unread = [w for w in untranslated if zh.unread_matters(w)]
        p.notices.extend(message("untranslated_dense_only", word=typed(w)) for w in unread)
        p.name_like.extend(w.strip() for w in unread if w.strip() == t.raw.strip() and len(w.strip()) > 1)
    if (kept := [c for c in p.concepts if not is_filler(c)]) and len(kept) < len(p.concepts):
        p.filler = [c for c in p.concepts if is_filler(c)]
        p.concepts = kept
    for n in p.hard:
        _positives(n, p.positives)
    read: dict[str, list[str]] = {}
    for t in p.positives:
        if t.source:
            read.setdefault(t.source, []).append(t.raw)
    p.notices.extend(message("author_read_as", name=k, readings=" / ".join(v)) for k, v in read.items())
    return p

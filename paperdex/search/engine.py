"""Hybrid search: the `Searcher` composes a lexical side (BM25F, ``index/lexical.py``) and a
dense side (``index/vectors.py``), as pyserini's HybridSearcher. One query, in arrays of one
entry per paper: its constraints make a mask C (masks.py); its free words, as concepts
(planning.py), give the strict matches and the candidates; the matched set M adds the dense
side's close matches within C; the relevance order fuses both sides' scores (rank.py). Every
hit says why it matched. The contract is docs/search.md; keep the two in step.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

import numpy as np

from paperdex.index import lexical
from paperdex.index.embed import Embedder, EmbedOptions
from paperdex.index.vectors import SCAN_ALL_ABOVE, VectorIndex
from paperdex.messages import message, typed
from paperdex.paper import CATEGORY, MAX_ID, Paper
from paperdex.search.corpus import Corpus, StoreCorpus, Vectors
from paperdex.search.highlight import distinguishing, mark, plain, snippet
from paperdex.search.masks import Eval, constraints, find_words, held_zh, plan_constraints
from paperdex.search.planning import MAX_WINDOW, Filters, Plan, Request, plan
from paperdex.search.query import QueryError
from paperdex.search.rank import (
    DENSE_DEPTH,
    DENSE_POOL,
    FEEDBACK,
    FEEDBACK_BETA,
    FEEDBACK_DOCS,
    FUSION,
    LEX_POOL,
    Dense,
    Words,
    close_matches,
    far_weight,
    floors,
    listed_count,
    matched_set,
    newest,
    relevance_order,
    understood,
    words_far,
)
from paperdex.store import Store

NOTICE_UNPUBLISHED = message("index_unpublished")
UNPUBLISHED_NOTICE_AT = 5000  # papers: below this, building in memory takes about a second
NOTICE_NO_VECTORS = message("no_vectors")
QUERY_VECTORS = 2048  # query vectors kept per process


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
    tier: str | None = None  # a search hit's list (`Result.tiers`): "match", "related" or "ranked"

    def to_dict(self) -> dict[str, Any]:
        """The hit as JSON, its marks plain; the interfaces render them (web/render.hit_json)."""
        d = self.paper.to_dict()
        d.update(
            **({"tier": self.tier} if self.tier else {}),
            score=round(self.score, 6),
            why={
                "lexical_rank": self.lexical_rank,
                "lexical_score": None if self.lexical_score is None else round(self.lexical_score, 4),
                "dense_rank": self.dense_rank,
                "dense_score": None if self.dense_score is None else round(self.dense_score, 4),
            },
            snippet=plain(self.snippet),
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
    ranked: int | None = None  # papers the order ranks, M's and after (docs/search.md); None: `total`
    plan: Plan | None = None  # what was searched (None: a result made without a plan)
    highlight: frozenset[str] = frozenset()  # the stems worth highlighting (`distinguishing`)
    read_as: str | None = None  # how a relevance order read the query (`read_as`)
    one_list: bool = False  # listed as one ranked list, not two tiers (`ONE_TIER`)

    @property
    def listed(self) -> int:
        """How many papers the pages list (docs/search.md, "Pages")."""
        return listed_count(self.total, self.ranked)

    @property
    def tiers(self) -> list[tuple[str, int]]:
        """The lists the pages show, how many papers each (docs/search.md): "match", "related"; or "ranked"."""
        if self.one_list:
            return [("ranked", self.listed)]
        more = self.listed - self.total
        return [("match", self.total)] + ([("related", more)] if more > 0 else [])

    @property
    def pages(self) -> int:
        return max(1, -(-min(self.listed, MAX_WINDOW) // self.per_page))

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON but its hits, which each interface renders (web/views/api.search_json)."""
        return {
            **{k: getattr(self, k) for k in ("query", "mode", "sort", "total")},
            "ranked": self.ranked if self.ranked is not None else self.total,
            "listed": self.listed,
            "read_as": self.read_as,
            "tiers": [{"tier": t, "count": n} for t, n in self.tiers],
            "page": self.page,
            "per_page": self.per_page,
            "took_ms": round(self.took_ms, 2),
            "notices": self.notices,
            "facets": {k: [{"value": v, "count": n} for v, n in vs] for k, vs in self.facets.items()},
        }


# The readings (`read_as`) listed as one ranked list, not the matched set first (docs/search.md)
ONE_TIER = frozenset({"question", "sentence", "pasted"})


def read_as(p: Plan, words: Words) -> str:
    """What a query was read as: "pasted" (`Words.quoted`), "question", "sentence" or "keywords"."""
    if words.quoted:
        return "pasted"
    return "keywords" if p.query_class[1] == "keywords" else "question" if p.filler else "sentence"


def matched_first(fused, order: np.ndarray, why, M: np.ndarray, want: int, listed: int):
    """The relevance order as two tiers, M's papers before the rest, each in the fused order,
    cut to the first `want` (at most `listed`). `order` is `fused(max(want, LEX_POOL))`; while
    its head holds too few of either tier, 4x more is read, past LEX_POOL from a deeper one."""
    total = int(np.count_nonzero(M))
    need_m, need_r = min(want, total), max(0, min(want, listed) - total)
    depth = max(want, LEX_POOL)
    k = max(min(len(order), want), 1)  # an empty order is a whole one
    while True:
        head = order[:k]
        in_m = M[head]
        got_m = int(np.count_nonzero(in_m))
        if (got_m >= need_m and len(head) - got_m >= need_r) or len(head) < k:
            return np.concatenate([head[in_m][:need_m], head[~in_m][:need_r]]), why
        k = min(4 * k, LEX_POOL) if k < LEX_POOL else 4 * k
        if max(k, LEX_POOL) != depth:
            depth = max(k, LEX_POOL)
            order, why, _ = fused(depth)


def no_why(docs: np.ndarray) -> dict:
    return {}


@lru_cache(maxsize=4096)
def _facet_category(name: str) -> bool:
    """Whether a category is an arXiv-style one, which the facets list."""
    return CATEGORY.match(name) is not None


@lru_cache(maxsize=QUERY_VECTORS)
def _query_vector(emb: Embedder, text: str) -> np.ndarray:
    """A query's vector, kept per process: page 2 or a filter of the same words is a new search,
    which would pay the encoder again (each run of whitespace is one space, as models read it)."""
    got = emb.embed_query(text)
    got.setflags(write=False)  # shared: nobody changes it in place
    return got


def page_of(p: Plan, order: np.ndarray, listed: int, notices: list[str]) -> np.ndarray:
    """The documents of the page asked for, of a search that lists `listed`: results are listed up
    to number MAX_WINDOW (docs/search.md, "Pages"). A page past it is refused when the search lists
    more (else it is a page past the last, empty), and the last page it reaches says so, where
    the pager stops: page 500 of `model` (51,809 papers) stopped there without a word."""
    if p.beyond_window:
        if listed > MAX_WINDOW:  # a page there cannot be listed
            raise QueryError(message("results_window", limit=MAX_WINDOW))
        return order[:0]
    if listed > MAX_WINDOW and p.offset + p.per_page >= MAX_WINDOW:
        notices.append(message("results_window", limit=MAX_WINDOW))
    return order[p.offset : min(p.offset + p.per_page, listed, MAX_WINDOW)]


class Searcher:
    """Search over one corpus (the store, or a Milvus collection); one thread's, as its store."""

    def __init__(
        self,
        source: Store | Corpus,
        fusion: dict | None = None,
        *,
        corpus: Corpus | None = None,
        embed_options: EmbedOptions | None = None,
        zh_dict: bool = True,
        embedder: Embedder | None = None,
    ) -> None:
        """`source`: the store (or, with no local store, a corpus); `corpus`: what searches
        read when not the store itself (a Milvus copy); `embed_options`, `zh_dict`: Settings';
        `embedder`: the query model (None: loaded by the corpus's model name)."""
        self._store = source if isinstance(source, Store) else None
        self.corpus: Corpus = corpus or (StoreCorpus(source) if isinstance(source, Store) else source)
        self.fusion = fusion or FUSION
        self._embedder, self.embed_options, self.zh_dict = embedder, embed_options, zh_dict

    @property
    def store(self) -> Store:
        """The embedded store (where the library keeps its state)."""
        if self._store is None:
            raise TypeError("this searcher reads a corpus with no embedded store")
        return self._store

    @property
    def lex(self) -> lexical.LexIndex:
        return self.corpus.lexical()

    @property
    def index(self) -> Vectors | None:
        return self.corpus.vectors()

    def embedder(self, model: str | None = None) -> Embedder | None:
        from paperdex.index.embed import get_embedder

        if (model := model or self.corpus.model) is None:
            return None
        if self._embedder is None or self._embedder.name != model:
            # one thread: concurrency comes from several searches at once (docs/relevance.md)
            self._embedder = get_embedder(model, threads=1, options=self.embed_options)
        return self._embedder

    def embed_query(self, text: str, model: str | None) -> np.ndarray | None:
        emb = self.embedder(model)
        return None if emb is None or not text else _query_vector(emb, re.sub(r"\s+", " ", text))

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
        """A Request, or a query and a Request's fields by name (`filters`: a Filters), searched."""
        t0 = time.perf_counter()
        if (p := plan(q, zh_dict=self.zh_dict, **given)).ref is not None:
            return self._lookup(p, t0)
        named = self._named_id(p)
        res = self._searched(p, t0, facets, query_vector, highlight, deadline)
        if named is None:
            return res
        if res.total == 0:  # no paper's text holds the word: the paper it names, as a pasted arXiv id
            p.ref = ("id", named)
            found = self._lookup(p, t0)
            found.notices.insert(0, message("query_is_an_id", id=typed(named)))
            return found
        res.notices.append(message("query_also_an_id", id=typed(named)))
        return res

    def _named_id(self, p: Plan) -> str | None:
        """The query, when it is one token (no space) that is exactly a stored paper's id, as a
        JSON Lines or BibTeX record's (`zh-walk-1`, `bib:mypaper`); an arXiv id or a DOI is a
        `ref` already. A word that is also an id (`transformer`) is still searched as a word."""
        token = p.q.strip()
        if p.literal or not token or len(token) > MAX_ID or any(c.isspace() for c in token):
            return None
        return token if self.corpus.get(token) is not None else None

    def _searched(
        self, p: Plan, t0: float, facets: bool, query_vector: np.ndarray | None, highlight: bool, deadline: float | None
    ) -> Result:
        """The words' and the meaning's search of a plan with no pasted reference."""
        ix = self.lex
        notices = p.notices
        if not ix.meta.get("published") and ix.n >= UNPUBLISHED_NOTICE_AT:
            notices.append(NOTICE_UNPUBLISHED)
        ev = Eval(ix, self.corpus, deadline, p.zh_dict)
        C, aside = plan_constraints(ev, p)
        words = find_words(ev, p, C, notices, aside)
        ev._charge(0)  # the deadline, between steps
        dense = self._dense_side(ix, p, C, query_vector, notices, bool(words.A.any()))
        ev._charge(0)
        M = matched_set(ix.n, words, dense, p)
        total = int(np.count_nonzero(M))
        if C is not None and not C.any():  # the conditions, not either side, left nothing (issue 35)
            if not any(map(ev.explained, p.hard)):  # unless a condition has said why (`id:nope`)
                notices.append(message("no_paper_meets_conditions"))
        elif dense is not None and dense.mode == "hybrid" and (words.L.any() != bool(dense.close.size)):
            if dense.close.size:  # words in some papers, or in none
                notices.append(message("some_words_semantic" if words.A.any() else "no_words_semantic"))
            elif p.concepts or p.positives:
                notices.append(message("no_close_semantic"))
        elif total == 0 and dense is None and words.A.any():  # words alone, in papers but never enough
            notices.append(message("some_words_only"))
        elif total == 0 and p.dense_text:
            notices.append(message("no_close_matches"))
        mode_eff = dense.mode if dense is not None else "lexical"
        want = p.offset + p.per_page
        reading = None
        if p.sort == "newest" or not (words.scored or dense is not None):
            order, why, ranked = newest(ix, M, want), no_why, total
        else:
            reading = read_as(p, words)
            w_dense = 0.0 if words.quoted else self.fusion[p.query_class]
            if w_dense > 0 and dense is not None and p.query_class[1] == "sentence":
                first = dense.index.cosines_of(dense.every, ix.rowids[words.best(10)[0]])
                w_dense = far_weight(w_dense, words_far(first, dense.cos))
            feedback = dense is not None and dense.mode == "hybrid" and w_dense > 0 and p.query_class in FEEDBACK
            if feedback and dense is not None:  # only the first order's best papers are read
                first = relevance_order(ix, M, words, dense, w_dense, FEEDBACK_DOCS)[0]
                dense = self._feedback(ix, p, C, dense, first, bool(words.A.any())) if len(first) else dense
            # one order LEX_POOL deep: the page and the tiers are its prefixes
            depth = want if reading in ONE_TIER else max(want, LEX_POOL)
            order, why, ranked = relevance_order(ix, M, words, dense, w_dense, depth)
            if reading not in ONE_TIER:
                fused = partial(relevance_order, ix, M, words, dense, w_dense)
                order, why = matched_first(fused, order, why, M, want, listed_count(total, ranked))
            else:
                notices.append(message(f"read_as_{reading}"))
            order = order[:want]
        page_docs = page_of(p, order, listed_count(total, ranked), notices)
        hl = distinguishing(frozenset(s for c in words.rank_concepts for alt in c.alts for s in alt), ix)
        hl |= {c.zh for c in words.rank_concepts if held_zh(ix, c)}  # a Chinese word as written
        one_list = reading in ONE_TIER
        hits = self._hits(ix, page_docs, why(page_docs), hl if highlight else frozenset(), None if one_list else M)
        fac = self._facets(ix, M) if facets else {}
        took = (time.perf_counter() - t0) * 1000
        res = Result(p.q, mode_eff, p.sort, hits, total, p.page, p.per_page, took, fac, notices, ranked, p, hl)
        res.read_as, res.one_list = reading, one_list
        return res

    def _dense_side(
        self,
        ix,
        p: Plan,
        C: np.ndarray | None,
        query_vector,
        notices: list[str],
        words_found: bool = False,
        need_close: bool = True,
        vindex: Vectors | None = None,
    ) -> Dense | None:
        """The dense side of one query (None: it takes no part). `need_close` False (feedback: M is
        decided) skips the close matches where that saves a scan; `vindex`: the vectors read already."""
        if p.mode == "lexical" or not p.dense_text:
            return None
        vindex = vindex if vindex is not None else self.index
        if vindex is None or len(vindex) == 0:
            notices.append(NOTICE_NO_VECTORS)
            return None
        qv = query_vector if query_vector is not None else self.embed_query(p.dense_text, vindex.model)
        if qv is None:
            return None
        allowed = None if C is None else ix.rowids[np.flatnonzero(C)]
        narrow = allowed is not None and len(allowed) <= SCAN_ALL_ABOVE * len(vindex)
        if allowed is not None and narrow and words_found and isinstance(vindex, VectorIndex):
            # C's own rows suffice unless C's best passes the floor (why: docs/relevance.md)
            ranked, every = vindex.scan_within(qv, DENSE_POOL, allowed)
            floor = floors(vindex.model, p.dense_lang)[1]
            # (a millionth under still scans: the float products may differ in their last bit)
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
        cos = np.array([c for _, c in ranked], dtype=np.float32)
        pos, ok = ix.find(np.array([r for r, _ in ranked], dtype=np.int64))
        # best first, equal cosines by rowid, as the vector search gave them: rowid order is doc order
        return Dense(p.mode, qv, vindex, close_docs, pos[ok].astype(np.int64), cos[ok], every)

    def _feedback(self, ix, p: Plan, C: np.ndarray | None, dense: Dense, top: np.ndarray, words_found: bool) -> Dense:
        """The dense side again, the query vector moved toward the first order's best papers (Rocchio
        feedback): a question's embedding sits between its answers and papers of its frame. M stays."""
        if not (vecs := list(dense.index.vectors([int(r) for r in ix.rowids[top]]).values())):
            return dense
        centroid = np.mean(vecs, axis=0)
        if (norm := float(np.linalg.norm(centroid))) == 0:
            return dense
        qv = np.asarray(dense.qv, dtype=np.float32) + FEEDBACK_BETA * centroid / norm
        qv /= max(float(np.linalg.norm(qv)), 1e-9)
        return self._dense_side(ix, p, C, qv, [], words_found, need_close=False, vindex=dense.index) or dense

    def _hits(self, ix, page_docs: np.ndarray, info: dict, hl: frozenset[str], M: np.ndarray | None) -> list[Hit]:
        """The page's hits, each in its tier: "match" or "related" by M, "ranked" with no M."""
        rowids = [int(ix.rowids[d]) for d in page_docs]
        papers = self.corpus.papers(rowids)
        hits = []
        for d, rowid in zip(page_docs, rowids, strict=True):
            if (paper := papers.get(rowid)) is None:  # deleted since the snapshot was published
                continue
            lr, ls, dr, ds, score = info.get(int(d), (None, None, None, None, 0.0))
            marked, snip = mark(paper.title, hl), snippet(paper.abstract, hl)
            tier = "ranked" if M is None else "match" if M[d] else "related"
            hits.append(Hit(paper, score, lr, ls, dr, ds, marked, snip, tier))
        return hits

    def _lookup(self, pl: Plan, t0: float) -> Result:
        """A pasted id, arXiv URL or DOI: that paper, or a word on how to add it."""
        assert pl.ref is not None
        kind, value = pl.ref
        p = self.corpus.get(value) if kind == "id" else self.corpus.by_doi(value)
        notices: list[str] = []
        if p is None:
            notices.append(message("id_not_in_store" if kind == "id" else "not_in_store", id=value))
            hits = []
        else:
            hits = [Hit(p, 1.0, None, None, None, None, [(p.title, False)], snippet(p.abstract, frozenset()), "match")]
        took = (time.perf_counter() - t0) * 1000
        shown = hits if pl.page == 1 else []
        return Result(pl.q, "lookup", pl.sort, shown, len(hits), pl.page, pl.per_page, took, {}, notices, plan=pl)

    def _facets(self, ix: lexical.LexIndex, M: np.ndarray, limit: int = 12) -> dict:
        cats = sorted(((c, n) for c, n in ix.category_counts(M) if _facet_category(c)), key=lambda x: (-x[1], x[0]))
        counts = np.bincount(ix.dates[M] // 10000)
        by_year = sorted(((str(y), int(counts[y])) for y in np.flatnonzero(counts) if y > 0), reverse=True)
        return {"category": cats[:limit], "year": by_year[:limit]}

    def allowed_rowids(self, filters: Filters, deadline: float | None = None) -> np.ndarray | None:
        """The rowids of the papers `filters` allow, as a search applies them (None: all)."""
        C = constraints(Eval(self.lex, self.corpus, deadline), filters.nodes())
        return None if C is None else self.lex.rowids[C]

    def similar(self, pid: str, k: int = 10) -> list[Hit]:
        """Nearest neighbours by vector; without a vector, by the title as a lexical query."""
        if (rowid := self.corpus.rowid(pid)) is None:
            raise KeyError(pid)
        vindex = self.index
        vec = vindex.vector(rowid) if vindex is not None else None
        if vindex is not None and vec is not None:
            found = [(r, s) for r, s in vindex.search(vec, k + 1) if r != rowid][:k]
            papers = self.corpus.papers([r for r, _ in found])
            return [Hit(papers[r], s, dense_score=s) for r, s in found if r in papers]
        p = self.corpus.get(pid)
        assert p is not None
        res = self.search(p.title, mode="lexical", per_page=k + 1, facets=False, literal=True)
        return [h for h in res.hits if h.paper.id != pid][:k]

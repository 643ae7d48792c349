"""Hybrid search: a lexical searcher (FTS5 BM25) and a dense searcher (vector index), fused by
reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009), as pyserini composes them.

Every hit says why it matched: its rank and score on each side, and the fused score.
"""

from __future__ import annotations

import html
import re
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from . import query as Q
from . import zh
from .paper import Paper
from .store import Store

RRF_K = 60
# Fusion settings (k, lexical weight, dense weight) by query language. English: the standard
# RRF of Cormack et al. Chinese: the lexical side sees dictionary translations that pin a
# paper down precisely, the dense side is a small multilingual model; k=10 and a half weight
# for dense were best on the 21k development queries as a whole (docs/relevance.md).
FUSION = {"en": (RRF_K, 1.0, 1.0), "zh": (10, 1.0, 0.5)}
# Field weights for bm25(): title, abstract, authors, categories. A word in the title says
# more about what a paper is than the same word deep in its abstract.
BM25_WEIGHTS = (5.0, 1.0, 2.0, 0.5)
DEPTH = 100  # candidates taken from each side before fusion
COMMON_DF = 0.25  # see Searcher.prune_common
NOTICE_NO_VECTORS = "semantic search is off until vectors exist (run `paperdex embed`)"
MODES = ("hybrid", "lexical", "dense")
SORTS = ("relevance", "newest")


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
            out.append(Q.make_leaf("date", f"{self.date_from or ''}..{self.date_to or ''}", False, 0))
        if self.venue:
            out.append(Q.Filter("venue", self.venue))
        if self.area:
            out.append(Q.Filter("area", self.area))
        if self.author:
            out.append(Q.make_leaf("au", self.author, True, 0))
        return out


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

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "sort": self.sort,
            "total": self.total,
            "page": self.page,
            "per_page": self.per_page,
            "took_ms": round(self.took_ms, 2),
            "notices": self.notices,
            "facets": {k: [{"value": v, "count": n} for v, n in vs] for k, vs in self.facets.items()},
            "hits": [h.to_dict() for h in self.hits],
        }


def rrf(rankings: list[list[int]], weights: list[float] | None = None, k: int = RRF_K) -> dict[int, float]:
    """score(d) = sum_i w_i / (k + rank_i(d)), ranks starting at 1."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[int, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    return scores


class Searcher:
    """Search over one store. Holds the vector index and query model once loaded."""

    def __init__(self, store: Store, depth: int = DEPTH, fusion: dict | None = None) -> None:
        self.store = store
        self.depth = depth
        self.fusion = fusion or FUSION
        self._index = None
        self._embedder = None
        self._pool = ThreadPoolExecutor(max_workers=1)

    # --- the two searchers ------------------------------------------------------------
    @property
    def index(self):
        from .vectors import VectorIndex

        if self._index is None:
            self._index = VectorIndex(self.store)
        return self._index.ensure()

    def embedder(self):
        from .embed import get_embedder

        model = self.store.model
        if model is None:
            return None
        if self._embedder is None or self._embedder.name != model:
            self._embedder = get_embedder(model)
        return self._embedder

    def prune_common(self, c: Q.Compiled) -> None:
        """Drop free words found in more than COMMON_DF of all papers ("model", "learning")
        from the BM25 expression when rarer words remain. Their IDF is near zero, so they
        barely move a ranking, but scoring their posting lists dominated query time
        (4-10x on the full corpus); this is the common-terms cut-off of search engines."""
        bare = [w for _, w in c.rank_parts if w]
        if len(c.rank_parts) < 2 or not bare:
            return
        stems = {w: _stem(w) for w in bare}
        unique = sorted(set(stems.values()))
        marks = ",".join("?" * len(unique))
        df = dict(self._run(f"SELECT term, doc FROM fts_vocab WHERE term IN ({marks})", unique))
        limit = COMMON_DF * max(self.store.count_cached(), 1)
        keep = [(s, w) for s, w in c.rank_parts if not w or df.get(stems[w], 0) <= limit]
        if keep and len(keep) < len(c.rank_parts):
            was_soft_only = c.soft == c.rank
            c.rank_parts = keep
            c.rank = " OR ".join(s for s, _ in keep)
            if was_soft_only:
                c.soft = c.rank

    def lexical(self, c: Q.Compiled, k: int, offset: int = 0, newest: bool = False) -> list[tuple[int, float]]:
        where, params = _where(c)
        if c.rank and not newest:
            w = ", ".join(str(x) for x in BM25_WEIGHTS)
            join = "JOIN papers p ON p.rowid = fts.rowid" if where else ""
            sql = (
                f"SELECT fts.rowid, bm25(fts, {w}) AS s FROM fts {join} "
                f"WHERE fts MATCH ? {where} ORDER BY s LIMIT ? OFFSET ?"
            )
            rows = self._run(sql, [c.rank, *params, k, offset])
            return [(r[0], -r[1]) for r in rows]
        if c.rank:  # newest first among lexical matches
            sql = (
                "SELECT p.rowid, 0 FROM papers p WHERE p.rowid IN (SELECT rowid FROM fts WHERE fts MATCH ?) "
                f"{where} ORDER BY p.date DESC, p.rowid DESC LIMIT ? OFFSET ?"
            )
            return [(r[0], 0.0) for r in self._run(sql, [c.rank, *params, k, offset])]
        sql = f"SELECT p.rowid, 0 FROM papers p WHERE 1 {where} ORDER BY p.date DESC, p.rowid DESC LIMIT ? OFFSET ?"
        return [(r[0], 0.0) for r in self._run(sql, [*params, k, offset])]

    def lexical_count(self, c: Q.Compiled) -> int:
        where, params = _where(c)
        if c.rank:
            join = "JOIN papers p ON p.rowid = fts.rowid" if where else ""
            sql = f"SELECT count(*) FROM fts {join} WHERE fts MATCH ? {where}"
            return self._run(sql, [c.rank, *params])[0][0]
        return self._run(f"SELECT count(*) FROM papers p WHERE 1 {where}", params)[0][0]

    def embed_query(self, c: Q.Compiled) -> np.ndarray | None:
        emb = self.embedder()
        if emb is None or not c.dense_text:
            return None
        return emb.embed_query(c.dense_text)

    def dense(self, c: Q.Compiled, k: int, qv: np.ndarray | None) -> list[tuple[int, float]]:
        if qv is None:
            return []
        allowed = None
        if c.where:
            rows = self._run(f"SELECT p.rowid FROM papers p WHERE {c.where}", c.params)
            allowed = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        return self.index.search(qv, k, allowed)

    def _run(self, sql: str, params: list) -> list[sqlite3.Row]:
        try:
            return self.store.conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as e:  # never let an SQLite message reach a user
            raise Q.QueryError("this query could not be run; try simpler terms") from e

    # --- the composed search ----------------------------------------------------------
    def search(
        self,
        q: str,
        *,
        mode: str = "hybrid",
        sort: str = "relevance",
        page: int = 1,
        per_page: int = 20,
        filters: Filters | None = None,
        facets: bool = True,
        literal: bool = False,
    ) -> Result:
        t0 = time.perf_counter()
        if mode not in MODES:
            raise Q.QueryError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        if sort not in SORTS:
            raise Q.QueryError(f"unknown sort {sort!r}; use one of {', '.join(SORTS)}")
        page, per_page = max(1, int(page)), max(1, min(int(per_page), 200))
        tree = zh.expand(Q.parse_literal(q) if literal else Q.parse(q))
        c = Q.compile_query(tree, (filters or Filters()).nodes())
        notices: list[str] = []
        self.prune_common(c)
        if mode != "lexical" and c.has_text and len(self.index) == 0:
            notices.append(NOTICE_NO_VECTORS)
            mode_eff = "lexical"
        else:
            mode_eff = mode if c.has_text else "lexical"
        offset = (page - 1) * per_page

        lex_hits: list[tuple[int, float]] = []
        dense_hits: list[tuple[int, float]] = []
        if mode_eff == "lexical" or sort == "newest":
            lex_hits = self.lexical(c, per_page, offset, newest=sort == "newest")
            total = self.lexical_count(c)
            ranked = [(r, s) for r, s in lex_hits]
            lex_rank = {r: (offset + i + 1, s) for i, (r, s) in enumerate(lex_hits)} if c.rank else {}
            dense_rank: dict[int, tuple[int, float]] = {}
            page_rows = ranked
        else:
            depth = max(self.depth, offset + per_page)
            # the query model runs while SQLite ranks (both release the GIL)
            qv_future = self._pool.submit(self.embed_query, c)
            if mode_eff == "hybrid":
                lex_hits = self.lexical(c, depth)
            dense_hits = self.dense(c, depth, qv_future.result())
            lex_rank = {r: (i + 1, s) for i, (r, s) in enumerate(lex_hits)}
            dense_rank = {r: (i + 1, s) for i, (r, s) in enumerate(dense_hits)}
            k, w_lex, w_dense = self.fusion["zh" if zh.has_cjk(q) else "en"]
            fused = rrf([[r for r, _ in lex_hits], [r for r, _ in dense_hits]], [w_lex, w_dense], k=k)
            ranked = sorted(fused.items(), key=lambda x: (-x[1], x[0]))
            total = len(ranked)
            page_rows = ranked[offset : offset + per_page]

        papers = self.store.get_many([r for r, _ in page_rows])
        stems = _stems(tuple(c.highlight))
        hits = []
        for rowid, score in page_rows:
            p = papers.get(rowid)
            if p is None:
                continue
            lr, dr = lex_rank.get(rowid), dense_rank.get(rowid)
            hits.append(
                Hit(
                    paper=p,
                    score=score,
                    lexical_rank=lr[0] if lr else None,
                    lexical_score=lr[1] if lr else None,
                    dense_rank=dr[0] if dr else None,
                    dense_score=dr[1] if dr else None,
                    title_marked=mark(p.title, stems),
                    snippet=snippet(p.abstract, stems),
                )
            )
        fac = {}
        if facets:
            pool = [r for r, _ in ranked] if mode_eff != "lexical" and sort != "newest" else None
            fac = self.facets(c, pool)
        return Result(q, mode_eff, sort, hits, total, page, per_page, (time.perf_counter() - t0) * 1000, fac, notices)

    def facets(self, c: Q.Compiled, pool: list[int] | None = None, limit: int = 12) -> dict:
        """Counts by category and year over what the query matched (the fused candidates,
        or every lexical match)."""
        if pool is not None:
            ids = ",".join(str(int(r)) for r in pool) or "NULL"
            base, params = f"SELECT p.rowid FROM papers p WHERE p.rowid IN ({ids})", []
        else:
            where, params = _where(c)
            if c.rank:
                base = f"SELECT p.rowid FROM fts JOIN papers p ON p.rowid = fts.rowid WHERE fts MATCH ? {where}"
                params = [c.rank, *params]
            else:
                base = f"SELECT p.rowid FROM papers p WHERE 1 {where}"
        cats = self._run(
            f"SELECT category, count(*) n FROM paper_categories WHERE paper IN ({base}) "
            "GROUP BY category ORDER BY n DESC, category LIMIT ?",
            [*params, limit],
        )
        years = self._run(
            f"SELECT substr(date, 1, 4) y, count(*) n FROM papers WHERE rowid IN ({base}) AND date IS NOT NULL "
            "GROUP BY y ORDER BY y DESC LIMIT ?",
            [*params, limit],
        )
        return {"category": [(r[0], r[1]) for r in cats], "year": [(r[0], r[1]) for r in years]}

    def similar(self, pid: str, k: int = 10) -> list[Hit]:
        """Nearest neighbours by vector; papers without a vector fall back to their title
        as a lexical query."""
        rowid = self.store.rowid(pid)
        if rowid is None:
            raise KeyError(pid)
        vec = self.index.vector(rowid)
        if vec is not None:
            found = [(r, s) for r, s in self.index.search(vec, k + 1) if r != rowid][:k]
        else:
            p = self.store.get(pid)
            assert p is not None
            c = Q.compile_query(Q.Bool("AND", [Q.Text([w], raw=w) for w in Q.words(p.title)]))
            self.prune_common(c)
            found = [(r, s) for r, s in self.lexical(c, k + 1) if r != rowid][:k]
        papers = self.store.get_many([r for r, _ in found])
        return [Hit(papers[r], s, dense_score=s) for r, s in found if r in papers]


def _where(c: Q.Compiled) -> tuple[str, list]:
    parts, params = [], []
    if c.where:
        parts.append(f"AND ({c.where})")
        params.extend(c.params)
    if c.soft and c.soft != c.rank:  # when equal, the ranking MATCH already requires it
        parts.append("AND p.rowid IN (SELECT rowid FROM fts WHERE fts MATCH ?)")
        params.append(c.soft)
    return " ".join(parts), params


# --- highlighting ---------------------------------------------------------------------

_TOKEN = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: the Porter algorithm FTS5's porter tokenizer implements

    return Stemmer.Stemmer("porter")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stemWord(word.lower())


@lru_cache(maxsize=256)
def _stems(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_stem(w) for w in words)


def mark(text: str, stems: frozenset[str]) -> list[tuple[str, bool]]:
    """Split text into (segment, is_match) runs: a word matches when its Porter stem is a
    query word's stem, the way the index matched it."""
    if not stems:
        return [(text, False)]
    out: list[tuple[str, bool]] = []
    last = 0
    for m in _TOKEN.finditer(text):
        if _stem(m.group()) in stems:
            if m.start() > last:
                out.append((text[last : m.start()], False))
            out.append((m.group(), True))
            last = m.end()
    if last < len(text):
        out.append((text[last:], False))
    return out


def snippet(text: str, stems: frozenset[str], width: int = 320) -> list[tuple[str, bool]]:
    """The window of the abstract with the most matched words, cut at word boundaries."""
    if len(text) <= width:
        return mark(text, stems)
    best_start = 0
    if stems:
        positions = [m.start() for m in _TOKEN.finditer(text) if _stem(m.group()) in stems]
        best = -1
        for i, start in enumerate(positions):
            n = sum(1 for p in positions[i:] if p < start + width)
            if n > best:
                best, best_start = n, max(0, start - 40)
    if best_start:
        sp = text.find(" ", best_start)
        best_start = sp + 1 if 0 <= sp < best_start + 30 else best_start
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


def plain(segments: list[tuple[str, bool]]) -> str:
    return "".join(s for s, _ in segments)


def marked_html(segments: list[tuple[str, bool]]) -> str:
    """Escaped HTML with <mark> around matches: paper text is never trusted as markup."""
    return "".join(f"<mark>{html.escape(s)}</mark>" if hit else html.escape(s) for s, hit in segments)

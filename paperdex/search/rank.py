"""Scoring and fusion over arrays of one entry per paper of the lexical snapshot: the dense
side's close matches, the matched set, the fusion of both sides' scores (`fuse`, as pyserini
fuses two searchers), the relevance order and why each paper is in it, the phrase bonus."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np

from paperdex.index import lexical
from paperdex.search.planning import Concept, Plan, alt_pairs

# The dense weight of `fuse` by query class (`Plan.query_class`); figures in docs/relevance.md.
FUSION = {
    ("en", "keywords"): 0.2,
    ("en", "sentence"): 0.5,
    ("zh", "keywords"): 0.1,
    ("zh", "sentence"): 0.2,
    ("mixed", "keywords"): 0.3,
    ("mixed", "sentence"): 0.1,
}

# Dense pseudo-relevance feedback (`Searcher._feedback`) for these classes (docs/relevance.md).
FEEDBACK = {("en", "sentence")}
FEEDBACK_DOCS = 10
FEEDBACK_BETA = 0.5
DENSE_DEPTH = 100  # nearest papers among which the close matches are found
DENSE_POOL = 200  # nearest papers within the constraints that the relevance order ranks
LEX_POOL = 1000  # best papers by words scored on both sides
# Close-match floors per model and language: (the best hit's cosine, every hit's, most under the best)
MIN_COSINE = {
    "multilingual-e5-small": {"en": (0.855, 0.855, 0.05), "zh": (0.78, 0.80, 0.05)},
    "multilingual-e5-small+all-MiniLM-L6-v2": {"en": (0.448, 0.448, 0.036), "zh": (0.719, 0.738, 0.046)},
    "multilingual-e5-small+bge-small-en-v1.5": {"en": (0.465, 0.465, 0.031), "zh": (0.719, 0.738, 0.046)},
    "all-MiniLM-L6-v2": {"en": (0.40, 0.40, 2.0), "zh": (0.40, 0.40, 2.0)},
}

# A sentence whose words' first ten sit in the dense pool's lowest FAR_WORDS: more dense weight (`words_far`)
FAR_WORDS = 0.25
FAR_WORDS_SHIFT = 0.1

RANKED_LIST = 100  # papers the relevance order lists at least, when it ranks that many
# The most a paper's score grows when the query's words stand together in it (docs/relevance.md)
PHRASE_BOOST = 1.0
PHRASE_BOOST_STATEMENT = 0.5
PHRASE_DEPTH = 1000  # best lexical candidates the phrase bonus looks at
PLACES_COMPARED = 1 << 16  # comparisons `_places` makes at most before it sorts instead
# QUOTED_UNITS or more phrase units, QUOTED_SHARE of them together in one paper only: pasted (`Words.quoted`)
QUOTED_UNITS = 6
QUOTED_SHARE = 0.8


def floors(model: str | None, lang: str) -> tuple[float, float, float]:
    """The model's MIN_COSINE for `lang`; a model without any has no floors."""
    return MIN_COSINE.get(model or "", {}).get(lang, (-1.0, -1.0, 2.0))


def understood(got: list[tuple[int, float]], model: str | None, lang: str) -> bool:
    """Whether the model finds the query near anything: its best hit passes the first floor
    (a query that is not, nor matches any word, gets no dense candidates: docs/relevance.md)."""
    return bool(got) and got[0][1] >= floors(model, lang)[0]


def close_matches(got: list[tuple[int, float]], model: str | None, lang: str) -> list[tuple[int, float]]:
    """The dense hits (best first) that join the matched set, by the model's floors."""
    top_floor, floor, below = floors(model, lang)
    if not got or got[0][1] < top_floor:
        return []
    cut = max(floor, got[0][1] - below)
    return [(r, s) for r, s in got if s >= cut]


@dataclass
class Words:
    """What the free words found, over the whole corpus then within the constraints."""

    L: np.ndarray  # the strict lexical matches (required(n) of the concepts), within C
    A: np.ndarray  # papers holding any concept (the lexical candidates of the ranking), within C
    acc: np.ndarray  # BM25F (+ the phrase bonus) of every paper, float32; read within C only
    rank_concepts: list[Concept]
    scored: bool  # whether any concept ranks (free words, or the constraints' words)
    quoted: bool = False  # a sentence pasted from one paper (`phrase_bonus`)
    # the best candidates (`phrase_candidates`), when none left out scores as much
    top: np.ndarray | None = None
    _best: dict[int, tuple[np.ndarray, int]] = field(default_factory=dict, repr=False)

    def best(self, k: int) -> tuple[np.ndarray, int]:
        """The best k word candidates (`top_k`) and how many there are, kept per k (asked again after
        feedback and for deeper tiers); read from `top` when it holds them."""
        if (got := self._best.get(k)) is None:
            A, top = self.scored_A, self.top
            if top is None or (k > len(top) and len(top) >= PHRASE_DEPTH):
                top = above(self.acc, A, k)
            got = self._best[k] = top_k(self.acc, top, k), int(np.count_nonzero(A))
        return got

    @cached_property
    def scored_A(self) -> np.ndarray:
        """The word candidates: papers of A with a positive score."""
        return self.A & (self.acc > 0)


@dataclass
class Dense:
    """The dense side of one query."""

    mode: str  # "hybrid" or "dense"
    qv: np.ndarray
    index: Any  # vectors.VectorIndex
    close: np.ndarray  # docs: the close matches (the matched set's dense part), within C
    docs: np.ndarray  # the DENSE_POOL nearest within C, best first (int64)
    cos: np.ndarray  # their cosines (float32)
    every: Any  # the scan's state: any paper's int8 cosine by `index.cosines_of` (VectorIndex.scan)


def words_far(first: np.ndarray, pool: np.ndarray) -> bool:
    """Whether the words' first papers (`first`: cosines, NaN the deepest) are far in meaning within
    the dense `pool`: a question's incidental words ("less", "during") then earn less trust."""
    if len(first) == 0 or len(pool) < 2:
        return False
    deepest, span = float(pool[-1]), max(float(pool[0] - pool[-1]), 1e-6)
    return (float(np.nan_to_num(first, nan=deepest).mean()) - deepest) / span < FAR_WORDS


def far_weight(w_dense: float, far: bool) -> float:
    """The dense side's weight once `words_far` has spoken (FAR_WORDS_SHIFT more, at most 1); a
    quoted query (weight 0) stays words only. The engine and bench/cv.py's replay share it."""
    return min(1.0, w_dense + FAR_WORDS_SHIFT) if far and w_dense > 0 else w_dense


def matched_set(n: int, words: Words, dense: Dense | None, p: Plan) -> np.ndarray:
    """M: what `total`, the facets and Newest show (docs/search.md)."""
    if dense is None:
        return words.L
    M = np.zeros(n, dtype=bool) if dense.mode == "dense" else words.L.copy()
    M[dense.close] = True
    return M


def fuse(lex: np.ndarray, cos: np.ndarray, w_dense: float, floor: float) -> np.ndarray:
    """A convex combination of the two sides' scores, each normalised to [0, 1] (words: BM25F
    over the best; meaning: the cosine between `floor` and the best, a missing one the floor).
    Scores, not ranks, so a known item keeps its lead; the dense weight shrinks by the gap
    between the words' best two (docs/relevance.md)."""
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
    """The best k of `cand` by `acc`, ties to the lower doc: pages never overlap or skip a tie."""
    return best_first(cand, acc[cand], k)


def best_first(cand: np.ndarray, s: np.ndarray, k: int) -> np.ndarray:
    """`top_k` with the candidates' scores given (`s[i]` is `cand[i]`'s)."""
    if len(cand) > k:
        keep = np.argpartition(-s, k - 1)[:k]
        keep = np.flatnonzero(s >= s[keep].min())  # every tie at the cut, so the cut is exact
        cand, s = cand[keep], s[keep]
    return cand[np.lexsort((cand, -s))][:k]


def above(acc: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    """The documents of `mask` (scores positive there) scoring at least a floor from a strided
    sample, when k pass it (so the best k and every tie at the cut); else the whole mask."""
    if (stride := len(mask) // (4 * k) if k > 0 else 0) >= 4:
        sample = acc[::stride][mask[::stride]]
        take = 2 * k // stride + 1  # about 2k of the mask score at least the take-th of the sample
        if take < len(sample):
            v = np.partition(sample, len(sample) - take)[len(sample) - take]
            sel = mask & (acc >= v)
            if v > 0 and np.count_nonzero(sel) >= k:
                return np.flatnonzero(sel)
    return np.flatnonzero(mask)


def relevance_order(ix, M: np.ndarray, words: Words, dense: Dense | None, w_dense: float, want: int):
    """The relevance order (its first `want`), why (a function of documents) and how many it ranks:
    the best LEX_POOL by words and the DENSE_POOL nearest fused (`fuse`), the other word
    candidates by words, then papers of M with no score, newest first."""
    acc, A = words.acc, words.scored_A
    pool_lex, n_cand = words.best(max(LEX_POOL, want))
    if dense is None:
        pool, fused = pool_lex, acc[pool_lex]
        cos = np.full(len(pool), np.nan, dtype=np.float32)
    else:
        dense_docs, dense_cos = dense.docs, dense.cos
        if dense.mode == "dense":
            pool, cos = dense_docs, dense_cos
            fused = cos.copy()
        else:
            pool = union(pool_lex, dense_docs)
            cos = dense.index.cosines_of(dense.every, ix.rowids[pool])
            cos[np.searchsorted(pool, dense_docs)] = dense_cos  # the exact float cosines found
            floor = float(dense_cos[-1]) if len(dense_cos) else 0.0
            fused = fuse(acc[pool], cos, w_dense, floor)
    # a pool by words alone, or the nearest alone, is in its order already
    order = pool[:want] if dense is None or dense.mode == "dense" else best_first(pool, fused, want)
    rest: list[np.ndarray] = []
    n_tail = 0
    if dense is None or dense.mode == "hybrid":
        n_tail = n_cand - int(np.count_nonzero(A[pool]))  # deeper word candidates, by words
        if len(order) < want and n_tail:
            in_pool = np.zeros(len(A), dtype=bool)
            in_pool[pool] = True
            rest.append(top_k(acc, np.flatnonzero(A & ~in_pool), want - len(order)))
    unscored = M & ~A
    if dense is not None:
        unscored[pool] = False
    n_unscored = int(np.count_nonzero(unscored))
    if len(order) + sum(len(r) for r in rest) < want and n_unscored:
        rest.append(newest(ix, unscored, want - len(order)))
    full = np.concatenate([order.astype(np.int64), *[r.astype(np.int64) for r in rest]])[:want]
    return full, partial(_why, pool, fused, cos, acc, pool_lex, A, dense), len(pool) + n_tail + n_unscored


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The documents of `a` and `b`, sorted, each once (a sort of the pools, not a mask)."""
    both = np.concatenate([a, b]).astype(np.int64, copy=False)
    both.sort()
    return both[np.concatenate(([True], both[1:] != both[:-1]))] if len(both) else both


def _why(pool, fused, cos, acc, pool_lex, A, dense: Dense | None, docs: np.ndarray) -> dict:
    """Per document: (lexical rank, BM25F, dense rank, cosine, fused score)."""
    dense_docs = dense.docs if dense is not None else np.zeros(0, dtype=np.int64)
    lex = _places(pool_lex, docs)
    places = [x.tolist() for x in (lex, lex if pool is pool_lex else _places(pool, docs), _places(dense_docs, docs))]
    deeper = None  # the word candidates' scores, for a rank below the best LEX_POOL
    info = {}
    for d, lp, i, dp in zip(docs.tolist(), *places, strict=True):
        a = float(acc[d])
        lr = lp + 1 if lp >= 0 else None
        if lr is None and a > 0:
            deeper = acc[A] if deeper is None else deeper
            lr = int(np.count_nonzero(deeper > a)) + 1
        c = None if i < 0 or np.isnan(cos[i]) else float(cos[i])
        info[d] = (lr, a if a > 0 else None, dp + 1 if dp >= 0 else None, c, float(fused[i]) if i >= 0 else 0.0)
    return info


def _places(arr: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Where each of `docs` is in `arr` (distinct, any order), -1 where it is not."""
    if len(arr) == 0:
        return np.full(len(docs), -1, dtype=np.int64)
    if len(arr) * len(docs) <= PLACES_COMPARED:
        hit = docs[:, None] == arr
        return np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
    order = np.argsort(arr, kind="stable")
    at = np.minimum(np.searchsorted(arr[order], docs), len(arr) - 1)
    return np.where(arr[order[at]] == docs, order[at], -1)


def newest(ix: lexical.LexIndex, M: np.ndarray, want: int) -> np.ndarray:
    """M by date, newest first; ties by rowid, newest first."""
    if len(docs := np.flatnonzero(M)) == 0:
        return docs
    key = ix.dates[docs].astype(np.int64) * (1 << 32) + docs  # docs follow rowid order
    if len(docs) > want:
        part = np.argpartition(-key, want - 1)[:want]
        docs, key = docs[part], key[part]
    return docs[np.argsort(-key, kind="stable")]


def rrf(rankings: list[list[int]], weights: list[float] | None = None, k: int = 60) -> dict[int, float]:
    """score(d) = sum_i w_i / (k + rank_i(d)), ranks starting at 1."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[int, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    return scores


def listed_count(total: int, ranked: int | None) -> int:
    """How many papers a query's pages list (`Result.listed`, docs/search.md "Pages")."""
    return total if ranked is None else max(total, min(ranked, RANKED_LIST))


def phrase_units(concepts: list[Concept]) -> list[list[tuple[str, ...]]]:
    """What the phrase bonus looks for: each pair of adjacent one-word concepts, and each concept
    with a multi-word alternative (any of its alternatives standing together satisfies it)."""
    units: list[list[tuple[str, ...]]] = [
        [(a.alts[0][0], b.alts[0][0])]
        for a, b in zip(concepts, concepts[1:], strict=False)
        if len(a.alts) == 1 == len(b.alts) and len(a.alts[0]) == 1 == len(b.alts[0])
    ]
    return units + [c.alts for c in concepts if any(len(alt) > 1 for alt in c.alts)]


def phrase_bonus(
    ix: lexical.LexIndex,
    acc: np.ndarray,
    concepts: list[Concept],
    cand: np.ndarray,
    boost: float,
    known: Callable[[str], np.ndarray | None] = lambda s: None,
) -> bool:
    """Multi-word queries prefer papers where the words stand together: each of `cand`
    (sorted) scores 1 + `boost` x (share of `phrase_units` it satisfies) times more. Returns
    whether the query is quoted: QUOTED_UNITS or more units, nearly all standing together in
    one paper only, as a sentence pasted from it does."""
    if not (units := phrase_units(concepts)) or len(cand) == 0:
        return False
    pairs = [(u[0][0], u[0][1]) for u in units if len(u) == 1 and len(u[0]) == 2]  # most: two words, one way
    got = pair_counts(ix, cand, pairs)
    for unit in units:
        if len(unit) == 1 and len(unit[0]) == 2:
            continue
        ok = np.zeros(len(cand), dtype=bool)
        for alt in unit:
            if len(alt) == 1:
                m = known(alt[0])  # the word's mask, when matching made it: a lookup per candidate
                if m is not None:
                    ok |= m[cand]
                    continue
                if (t := ix.term(alt[0])) is not None:
                    ok |= np.isin(cand, ix.term_docs(t), assume_unique=True)
                continue
            ok |= together_mask(ix, alt)[cand]
        got += ok
    acc[cand] *= 1 + boost * got / len(units)
    if len(units) < QUOTED_UNITS:
        return False
    held = np.count_nonzero(got >= QUOTED_SHARE * len(units))
    return held == 1  # one paper, and only one, holds the sentence nearly word for word


def pair_counts(ix: lexical.LexIndex, cand: np.ndarray, pairs: list[tuple[str, str]]) -> np.ndarray:
    """For each of `cand` (sorted), how many of the word pairs stand together in it (float32)."""
    terms = [(ix.term(a), ix.term(b)) for a, b in pairs]
    found = [ix.pair_docs(ta, tb) for ta, tb in terms if ta is not None and tb is not None]
    docs = np.concatenate(found) if found else np.zeros(0, dtype=np.int32)
    if 32 * len(docs) > ix.n or len(cand) == 0:
        return np.bincount(docs, minlength=ix.n)[cand].astype(np.float32)
    at = np.minimum(np.searchsorted(cand, docs), len(cand) - 1)
    return np.bincount(at[cand[at] == docs], minlength=len(cand)).astype(np.float32)


def phrase_candidates(acc: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, bool]:
    """The best PHRASE_DEPTH of `mask` by score, in doc order, and whether no paper left out scores
    as much as the worst of them (the bonus only raises theirs: `Words.top`)."""
    if len(cand := above(acc, mask, PHRASE_DEPTH)) <= PHRASE_DEPTH:
        return cand, True
    part = cand[np.argpartition(-acc[cand], PHRASE_DEPTH - 1)[:PHRASE_DEPTH]]
    if np.count_nonzero(acc[cand] >= acc[part].min()) > PHRASE_DEPTH:  # a tie at the cut
        cand = np.flatnonzero(mask)
        part = cand[np.argpartition(-acc[cand], PHRASE_DEPTH - 1)[:PHRASE_DEPTH]]
        return np.sort(part), False
    return np.sort(part), True


def together_mask(ix: lexical.LexIndex, alt: tuple[str, ...]) -> np.ndarray:
    """The papers where the alternative's words stand together (the one place of ``alt_pairs``)."""
    ok = None
    for a, b in alt_pairs(alt):
        ta, tb = ix.term(a), ix.term(b)
        if ta is None or tb is None:
            return np.zeros(ix.n, dtype=bool)
        m = ix.pair_mask(ta, tb)
        ok = m if ok is None else ok & m
    return np.ones(ix.n, dtype=bool) if ok is None else ok

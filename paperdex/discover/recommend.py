"""Recommendations for a tag, and related work for a pasted text (the design and its
measurements: docs/recommendations.md, bench/recommend.py).

**For a tag**: arxiv-sanity-lite's per-tag linear SVM. The tag's papers are the positives, the
papers marked "not interested" and a fixed random sample the negatives; a paper's features are
its unit-length tf-idf vector (BM25 weights over the positives' terms) beside its embedding;
LinearSVC's loss, fitted in the primal by L-BFGS. No one model wins every tag, so each tag gets
the SVM or the tf-idf centroid, whichever ranks more of its held-out papers into the first 20
(:func:`fit`). Models are cached per tag contents and snapshot, fitted from zero (every process
fits the same model); each pick says why.

**Related work** (:func:`related`): a pasted text embedded whole and its key terms searched
lexically, the two rankings fused by reciprocal rank.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import re
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

from paperdex.discover import library
from paperdex.index import lexical
from paperdex.messages import message
from paperdex.paper import Paper, index_text
from paperdex.search import Hit, OverBudget, Searcher, mark, rrf, snippet, stems_of, top_k
from paperdex.search.corpus import Corpus as SearchCorpus
from paperdex.search.corpus import StoreCorpus
from paperdex.search.query import QueryError
from paperdex.store import Store
from paperdex.text import STOPWORDS, latex, split_cjk, stemmer, tokens, zh

# L-BFGS (nlopt), stopped as SciPy's L-BFGS-B stops (factr 1e7), with 30 correction pairs
FTOL_REL = 1e7 * float(np.finfo(float).eps)
LBFGS_MEMORY = 30
MAX_EVAL = 200
# The SVM's fit: the measured defaults (bench/recommend.py --grid tries the others)
C = 0.3  # regularisation
NEGATIVES = 3000  # random papers taken as negatives
DISMISSED_WEIGHT = 2.0  # a "not interested" counts this many random negatives
MIN_POSITIVES = 1
MODEL_CACHE = 32  # models kept per process at least; as many as the store has tags, if more (_every_tag)
# Choosing the model per tag (:func:`fit`): candidates, compared on the tag's own papers
CANDIDATES = ("svm", "tf-idf centroid")  # the first is the default, kept on ties and small tags
MIN_VALIDATE = 8  # a tag needs this many papers (in the store) to be validated
FOLDS = 4  # the tag's papers are split in this many parts, each held out once
MIN_TOP20 = 0.05  # another candidate must put at least this share of them in the first 20
CHOICE_CACHE = 256
EXPLAIN_NEIGHBOURS = 3
EXPLAIN_TERMS = 6
EXPLAIN_MAX_DF = 0.05  # words in more than this share of papers are not shown as reasons
_CORPUS_LOCK = threading.Lock()
_CORPORA: dict[str, Corpus] = {}
LABELS = {"svm": "SVM", "tf-idf centroid": "tf-idf centroid"}


# --- sparse matrices as arrays -----------------------------------------------------------------
class Sparse(NamedTuple):
    """A sparse matrix by rows (CSR), as the lexical index's postings are: a few numpy passes
    over such arrays are all the recommender needs of a sparse-matrix library."""

    ptr: np.ndarray
    idx: np.ndarray
    val: np.ndarray
    ncols: int


def spans(ptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the entries of `rows` are (their positions, row after row), and how many each has."""
    lo = ptr[rows]
    n = ptr[np.asarray(rows) + 1] - lo
    at = np.repeat(lo - (np.cumsum(n) - n), n)
    at += np.arange(len(at))
    return at, n


def segment_sums(x: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """x summed over each segment x[ptr[i]:ptr[i+1]] (0 for an empty one); ptr[-1] == len(x)."""
    out = np.zeros(len(ptr) - 1, dtype=x.dtype)
    full = np.flatnonzero(ptr[:-1] < ptr[1:])
    if len(full):
        out[full] = np.add.reduceat(x, ptr[full])
    return out


def matvec(A: Sparse, w: np.ndarray, block: int = 1 << 20) -> np.ndarray:
    """A @ w, in runs of rows of about `block` entries, whose temporaries stay in the CPU's cache."""
    n = len(A.ptr) - 1
    if A.ptr[-1] <= block:
        return segment_sums(A.val * np.take(w, A.idx), A.ptr)
    out = np.zeros(n, dtype=np.result_type(A.val, w))
    cuts = np.searchsorted(A.ptr, np.arange(0, A.ptr[-1], block), side="right") - 1
    cuts = np.unique(np.r_[0, cuts, n]).tolist()
    for a, b in zip(cuts[:-1], cuts[1:], strict=False):
        lo, hi = A.ptr[a], A.ptr[b]
        out[a:b] = segment_sums(A.val[lo:hi] * np.take(w, A.idx[lo:hi]), A.ptr[a : b + 1] - lo)
    return out


def stable_order(ids: np.ndarray) -> np.ndarray:
    """np.argsort(ids, kind="stable") for ids in [0, 2**32), as radix sorts of their two 16-bit
    halves: numpy radix-sorts 16-bit keys in linear time but merge-sorts wider ones."""
    order = np.argsort((ids & 0xFFFF).astype(np.uint16), kind="stable")
    high = (ids[order] >> 16).astype(np.uint16)
    if high.any():
        order = order[np.argsort(high, kind="stable")]
    return order


def transpose(A: Sparse) -> Sparse:
    """A by columns, as the rows of its transpose (row order kept within a column)."""
    order = stable_order(A.idx)
    ptr = np.zeros(A.ncols + 1, dtype=np.int64)
    np.cumsum(np.bincount(A.idx, minlength=A.ncols), out=ptr[1:])
    rows = np.repeat(np.arange(len(A.ptr) - 1, dtype=A.idx.dtype), np.diff(A.ptr))
    return Sparse(ptr, rows[order], A.val[order], len(A.ptr) - 1)


def select(A: Sparse, rows: np.ndarray, cols: np.ndarray) -> Sparse:
    """The rows `rows` of A (in that order) over the columns `cols` (unique), renumbered 0.."""
    at, n = spans(A.ptr, rows)
    col = np.full(A.ncols, -1, dtype=np.int64)  # a column's number in `cols`, -1 if not there
    col[cols] = np.arange(len(cols))
    j = col[A.idx[at]]
    keep = j >= 0
    per_row = np.bincount(np.repeat(np.arange(len(n)), n)[keep], minlength=len(n))
    ptr = np.zeros(len(n) + 1, dtype=np.int64)
    np.cumsum(per_row, out=ptr[1:])
    return Sparse(ptr, j[keep], A.val[at[keep]], len(cols))


def column_sums(A: Sparse) -> np.ndarray:
    return np.bincount(A.idx, weights=A.val, minlength=A.ncols)


# --- features of one snapshot -------------------------------------------------------------------
class Corpus:
    """The features of one pair of snapshots (lexical, dense), by the lexical index's documents:
    tf-idf as the snapshot's own BM25 postings (no copy), its row norms, and the dense vectors."""

    def __init__(self, ix, vindex) -> None:
        self.ix = ix
        self.n = ix.n
        self.rowids = ix.rowids
        self.n_terms = len(ix.vocab)
        val = np.asarray(ix.bm_score, dtype=np.float32)
        self.by_term = Sparse(np.asarray(ix.bm.ptr), np.asarray(ix.bm.doc), val, self.n)
        sq = np.bincount(self.by_term.idx, weights=val.astype(np.float64) ** 2, minlength=self.n)
        self.inv_norm = (1.0 / np.sqrt(np.where(sq > 0, sq, 1.0))).astype(np.float32)
        self._by_paper: Sparse | None = None
        self._lock = threading.Lock()
        self.D = None  # vectors.Rows: the papers' unit vectors, as a float32 matrix would answer
        self.has_vec = np.zeros(self.n, dtype=bool)
        if vindex is not None and len(vindex):
            self.D = (vindex if hasattr(vindex, "rows") else _read_whole(vindex, self.rowids)).rows(self.rowids)
            self.has_vec = self.D.ok
        self.key = _key(ix, vindex)

    def docs(self, rowids) -> np.ndarray:
        return self.ix.docs_of_rowids(np.asarray(rowids, dtype=np.int64))

    @property
    def by_paper(self) -> Sparse:
        """The tf-idf matrix by paper, made on first use: training reads its rows, scoring is one pass."""
        if self._by_paper is None:
            with self._lock:
                if self._by_paper is None:
                    self._by_paper = transpose(self.by_term)
        return self._by_paper

    def rows(self, docs: np.ndarray, terms: np.ndarray) -> Sparse:
        """tf-idf rows of `docs` over the columns `terms`, unit length."""
        docs = np.asarray(docs, dtype=np.int64)
        A = select(self.by_paper, docs, terms)
        return A._replace(val=A.val * np.repeat(self.inv_norm[docs], np.diff(A.ptr)))

    def terms_in(self, docs: np.ndarray) -> np.ndarray:
        """The term ids of `docs`' entries, paper after paper (repeated across papers)."""
        A = self.by_paper
        return A.idx[spans(A.ptr, np.asarray(docs, dtype=np.int64))[0]]

    def score_terms(self, terms: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Every paper's tf-idf vector dotted with w (weights of `terms`)."""
        full = np.zeros(self.n_terms, dtype=np.float32)
        full[terms] = w
        return matvec(self.by_paper, full) * self.inv_norm


def _read_whole(vectors, rowids: np.ndarray, chunk: int = 50_000):
    """A backend's (Milvus') vectors read into memory, int8 as the store keeps its own, a chunk at a time."""
    from paperdex.index.vectors import VectorIndex, quantize

    keys: list[int] = []
    parts = [np.zeros((0, 0), dtype=np.int8)]
    for at in range(0, len(rowids), chunk):
        got = vectors.vectors([int(r) for r in rowids[at : at + chunk]])
        if got:
            keys += sorted(got)
            parts.append(quantize(np.stack([got[k] for k in sorted(got)])))
    vecs = np.concatenate(parts[1:]) if keys else parts[0]
    return VectorIndex(np.array(keys, dtype=np.int64), vecs, {"model": vectors.model, "epoch": len(vectors)})


def _key(ix, vindex) -> tuple:
    """What identifies a pair of snapshots: the store, the lexical generation, the vectors' model and epoch."""
    return ix.store_id, ix.generation, None if vindex is None else (vindex.model, getattr(vindex, "epoch", len(vindex)))


def _source(store: Store, source: SearchCorpus | None) -> SearchCorpus:
    return source if source is not None else StoreCorpus(store)


def corpus(store: Store, source: SearchCorpus | None = None) -> Corpus:
    """The features of the snapshots searches use now (shared by the process): the store's, or
    those of `source`, the corpus searches read (a Milvus collection: `--backend`)."""
    src = _source(store, source)
    ix, vindex = src.lexical(), src.vectors()
    name = str(store.data_dir.resolve()) if isinstance(src, StoreCorpus) else ix.store_id
    with _CORPUS_LOCK:
        c = _CORPORA.get(name)
        if c is not None and c.key == _key(ix, vindex) and c.ix is ix:
            return c
    c = Corpus(ix, vindex)
    with _CORPUS_LOCK:
        _CORPORA[name] = c
    return c


# --- the model -----------------------------------------------------------------------------------
@dataclass
class Model:
    """A linear model over [tf-idf of `terms`, dense] plus a bias, and the tag's tf-idf centroid."""

    terms: np.ndarray  # term ids (columns of the tf-idf matrix)
    w_terms: np.ndarray
    w_dense: np.ndarray | None
    bias: float
    c_terms: np.ndarray  # mean tf-idf vector of the positives (over `terms`)
    pos_df: np.ndarray  # how many positives contain each of `terms`
    positives: np.ndarray  # docs
    negatives: int
    kind: str = "svm"  # a key of LABELS: how `scores` ranks
    choice: Choice | None = None  # why this kind (set by `fit`)
    # :func:`scores` over the corpus it was fitted on, once asked (:func:`scored`); not copied by replace()
    z: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)


@dataclass
class Choice:
    """Which model a tag gets, and per candidate :func:`validate`'s figures behind it."""

    kind: str
    metrics: dict[str, dict[str, float]]  # candidate -> {"top20", "mrr", "recall@100"}
    folds: int
    positives: int

    def text(self) -> str:
        """One line for the page: the model and why."""
        label = LABELS[self.kind]
        if not self.metrics:
            return message("model_too_few", model=label, n=self.positives, needed=MIN_VALIDATE)
        me = self.metrics[self.kind]
        others = [k for k in self.metrics if k != self.kind]
        top = " vs ".join(f"{self.metrics[k]['top20']:.0%} {LABELS[k]}" for k in others)
        mrr = " vs ".join(f"{self.metrics[k]['mrr']:.2f}" for k in others)
        figures = message("model_figures", top20=f"{me['top20']:.0%} vs {top}", mrr=f"{me['mrr']:.2f} vs {mrr}")
        return message("model_better" if self.kind != CANDIDATES[0] else "model_default", model=label, figures=figures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.kind,
            "why": self.text(),
            "validation": {k: {m: round(v, 4) for m, v in d.items()} for k, d in self.metrics.items()},
            "folds": self.folds,
        }


def _rng(seed: str) -> np.random.Generator:
    """Random numbers fixed by `seed`: the same tag of the same store draws the same papers."""
    return np.random.default_rng(int.from_bytes(hashlib.blake2b(seed.encode(), digest_size=8).digest(), "little"))


def _negatives(c: Corpus, seed: str, exclude: np.ndarray, k: int) -> np.ndarray:
    """A fixed random sample (same tag, same store: same sample), without `exclude`."""
    k = min(k, max(0, c.n - len(exclude)))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    cand = _rng(seed).choice(c.n, min(c.n, k + len(exclude)), replace=False)
    return np.setdiff1d(cand, exclude, assume_unique=True)[:k]


class _Svm:
    """The SVM's problem: the features of the positives and negatives (tf-idf over `terms`, then
    dense), labels, balanced class weights (a dismissal weighs DISMISSED_WEIGHT), the objective."""

    def __init__(self, c: Corpus, pos: np.ndarray, neg: np.ndarray, dismissed: int, terms: np.ndarray):
        idx = np.concatenate([pos, neg])
        self.y = np.r_[np.ones(len(pos)), -np.ones(len(neg))]
        m = len(idx)
        w_neg = np.ones(len(neg))
        w_neg[:dismissed] = DISMISSED_WEIGHT
        self.cw = np.r_[np.full(len(pos), m / (2 * len(pos))), w_neg * m / (2 * w_neg.sum())]
        self.terms = terms
        dk = self.dk = len(terms)
        self.P = c.rows(pos, terms) if dk else None  # the positives' tf-idf (their mean: the centroid)
        self.Zs = self.ZsT = None
        if dk:
            Zs = c.rows(idx, terms)
            self.Zs = Zs._replace(val=Zs.val.astype(np.float64))  # float64 like the weights
            self.ZsT = transpose(self.Zs)
        self.Zd = np.asarray(c.D[idx], dtype=np.float64) if c.D is not None else None
        self.dd = self.Zd.shape[1] if self.Zd is not None else 0

    def objective(self, wb: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss at weights and bias `wb`, and its gradient."""
        dk, dd, y, cw = self.dk, self.dd, self.y, self.cw
        ws, wd, b = wb[:dk], wb[dk : dk + dd], wb[-1]
        s = np.full(len(y), b)
        if self.Zs is not None:
            s += matvec(self.Zs, ws)
        if self.Zd is not None:
            s += self.Zd @ wd
        h = np.maximum(0.0, 1.0 - y * s)
        g = -2.0 * C * cw * h * y
        grad = np.empty_like(wb)
        grad[:dk] = ws + (matvec(self.ZsT, g) if self.ZsT is not None else 0.0)
        grad[dk : dk + dd] = wd + (self.Zd.T @ g if self.Zd is not None else 0.0)
        grad[-1] = g.sum()
        w = wb[:-1]
        return 0.5 * float(w @ w) + C * float(np.sum(cw * h * h)), grad

    def start(self, warm: Model | None) -> np.ndarray:
        """The first point: zero, or (incremental) the last fit of this tag."""
        dk, dd = self.dk, self.dd
        x0 = np.zeros(dk + dd + 1)
        if warm is not None:
            if dd and warm.w_dense is not None and len(warm.w_dense) == dd:
                x0[dk : dk + dd] = warm.w_dense
            if dk and len(warm.terms):
                at = np.clip(np.searchsorted(warm.terms, self.terms), 0, len(warm.terms) - 1)
                hit = warm.terms[at] == self.terms
                x0[:dk][hit] = warm.w_terms[at[hit]]
            x0[-1] = warm.bias
        return x0


def train(
    c: Corpus,
    pos: np.ndarray,
    dismissed: np.ndarray | None = None,
    *,
    seed: str = "",
    warm: Model | None = None,
    unlabelled: np.ndarray | None = None,
) -> Model:
    """Fit the tag's SVM: positives `pos` against `dismissed` and a random sample, from `warm`
    (the tag's last fit); `unlabelled` (a fold's held-out papers) are never sampled as negatives."""
    pos = np.unique(np.asarray(pos, dtype=np.int64))
    dismissed = np.setdiff1d(_docs(dismissed), pos)
    exclude = np.union1d(pos, dismissed)
    if unlabelled is not None:
        exclude = np.union1d(exclude, _docs(unlabelled))
    neg = np.concatenate([dismissed, _negatives(c, seed, exclude, NEGATIVES)]).astype(np.int64)
    svm = _Svm(c, pos, neg, len(dismissed), _terms_of(c, pos))
    with threadpool_limits(limits=1, user_api="blas"):
        x = lbfgs(svm.objective, svm.start(warm))
    dk, dd, P = svm.dk, svm.dd, svm.P
    return Model(
        terms=svm.terms,
        w_terms=x[:dk].astype(np.float32),
        w_dense=x[dk : dk + dd].astype(np.float32) if dd else None,
        bias=float(x[-1]),
        c_terms=(column_sums(P) / len(pos)).astype(np.float32) if P is not None else np.zeros(0, np.float32),
        pos_df=np.bincount(P.idx, minlength=dk).astype(np.int32) if P is not None else np.zeros(0, np.int32),
        positives=pos,
        negatives=len(neg),
    )


def _docs(docs: np.ndarray | None) -> np.ndarray:
    return np.asarray(docs if docs is not None else [], dtype=np.int64)


def lbfgs(f: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: np.ndarray) -> np.ndarray:
    """The minimum of f (value, gradient) from x0 by nlopt's L-BFGS: the best point evaluated,
    also when nlopt gives up near the minimum (it raises then, without its point)."""
    import nlopt

    best: list[Any] = [np.inf, x0]

    def objective(x: np.ndarray, grad: np.ndarray) -> float:
        v, g = f(x)
        if grad.size:
            grad[:] = g
        if v < best[0]:
            best[:] = [v, x.copy()]
        return v

    opt = nlopt.opt(nlopt.LD_LBFGS, len(x0))
    opt.set_min_objective(objective)
    opt.set_ftol_rel(FTOL_REL)
    opt.set_maxeval(MAX_EVAL)
    opt.set_vector_storage(LBFGS_MEMORY)
    with contextlib.suppress(nlopt.RoundoffLimited, nlopt.runtime_error):
        opt.optimize(x0)
    return best[1]


def _terms_of(c: Corpus, docs: np.ndarray) -> np.ndarray:
    """The terms any of `docs` contains (the columns a model of them can weigh)."""
    return np.unique(c.terms_in(docs)).astype(np.int64)


def _z(a: np.ndarray) -> np.ndarray:
    sd = float(a.std())
    return (a - float(a.mean())) / (sd if sd > 0 else 1.0)


def scores(c: Corpus, model: Model) -> np.ndarray:
    """Every paper's score under the model, as a z-score over the corpus whatever the kind."""
    with threadpool_limits(limits=1, user_api="blas"):
        if model.kind == "tf-idf centroid":
            return _z(c.score_terms(model.terms, model.c_terms)) if len(model.terms) else np.zeros(c.n, np.float32)
        s = np.full(c.n, model.bias, dtype=np.float32)
        if len(model.terms):
            s += c.score_terms(model.terms, model.w_terms)
        if model.w_dense is not None:
            s += c.D @ model.w_dense
        return _z(s)


def scored(c: Corpus, model: Model) -> np.ndarray:
    """:func:`scores`, computed once per cached model and kept with it (read only): a model is of
    one pair of snapshots (`tag_model`'s key), so its scores change only with a new model. For you
    scored the whole corpus again per tag on every request: 41 tags on 63k papers, 1.4-2.9 s of a
    2 s budget (docs/recommendations.md, "How many models a process keeps")."""
    if model.z is None:
        model.z = scores(c, model)
    return model.z


# --- choosing the model per tag ------------------------------------------------------------------
def validate(c: Corpus, full: Model, dismissed: np.ndarray | None, seed: str) -> dict[str, dict[str, float]]:
    """How well each of CANDIDATES ranks the tag's papers it did not see: each of FOLDS parts of
    the tag (`full`'s positives) is held out once, every candidate fitted on the rest (held-out
    papers never sampled as negatives), and the held-out papers ranked among every paper no
    candidate saw, as a recommendation list ranks them. Per candidate: "top20" (the share in the
    first 20 of their fold: the choice), "mrr" and "recall@100"."""
    pos = full.positives
    dis = np.setdiff1d(_docs(dismissed), pos)
    neg = _negatives(c, seed, np.union1d(pos, dis), NEGATIVES)
    terms = _terms_of(c, pos)
    k = max(2, min(FOLDS, len(pos)))
    parts = [np.sort(part) for part in np.array_split(_rng(f"folds:{seed}").permutation(pos), k)]
    cols: list[tuple[int, str]] = []
    Wt, Wd = [], []
    dim = c.D.shape[1] if c.D is not None else 0
    for f, held in enumerate(parts):
        m = train(c, np.setdiff1d(pos, held, assume_unique=True), dis, seed=seed, warm=full, unlabelled=held)
        at = np.searchsorted(terms, m.terms)
        for kind in CANDIDATES:  # the SVM's weights, or the centroid's (none on the dense side)
            svm = kind == "svm"
            wt = np.zeros(len(terms), dtype=np.float32)
            wt[at] = m.w_terms if svm else m.c_terms
            cols.append((f, kind))
            Wt.append(wt)
            Wd.append(m.w_dense if svm and m.w_dense is not None else np.zeros(dim, dtype=np.float32))
    with threadpool_limits(limits=1, user_api="blas"):
        S = np.stack([c.score_terms(terms, wt) for wt in Wt], axis=1)
        if dim:
            S += c.D @ np.stack(Wd, axis=1)
    pool = np.ones(c.n, dtype=bool)  # the unseen papers: what a recommendation list is made of
    pool[pos] = pool[dis] = pool[neg] = False
    ranks: dict[str, list[np.ndarray]] = {k: [] for k in CANDIDATES}
    for j, (f, kind) in enumerate(cols):
        others = np.sort(S[pool, j])
        # rank of each held-out paper among the unseen papers (ties count against it)
        ranks[kind].append(1 + len(others) - np.searchsorted(others, S[parts[f], j], side="right"))
    out = {}
    for kind, v in ranks.items():
        r = np.concatenate(v)
        out[kind] = {
            "top20": float(np.mean(r <= 20)),
            "mrr": float(np.mean(1.0 / r)),
            "recall@100": float(np.mean(r <= 100)),
        }
    return out


def fit(
    c: Corpus,
    pos: np.ndarray,
    dismissed: np.ndarray | None = None,
    *,
    seed: str = "",
    warm: Model | None = None,
    choice: Choice | None = None,
) -> Model:
    """The tag's model, chosen on the tag's own papers (:func:`validate`); tags under
    MIN_VALIDATE papers keep the SVM. A `choice` made for the same contents is reused."""
    pos = np.unique(np.asarray(pos, dtype=np.int64))
    m = train(c, pos, dismissed, seed=seed, warm=warm)
    if choice is None and len(pos) < MIN_VALIDATE:
        choice = Choice(CANDIDATES[0], {}, 0, len(pos))
    elif choice is None:
        got = validate(c, m, dismissed, seed)
        best = CANDIDATES[0]  # another candidate must do strictly better to be chosen
        for k in CANDIDATES[1:]:
            if got[k]["top20"] > got[best]["top20"] and got[k]["top20"] >= MIN_TOP20:
                best = k
        choice = Choice(best, got, max(2, min(FOLDS, len(pos))), len(pos))
    return replace(m, kind=choice.kind, choice=choice)


# --- recommendations for a tag -----------------------------------------------------------------
@dataclass
class Reason:
    neighbours: list[tuple[str, str, float]]  # (id, title, cosine) of the nearest saved papers
    terms: list[str]  # the paper's words that weigh most for the tag
    model: str = ""  # the tag's model and why it was chosen (Choice.text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nearest_saved": [{"id": i, "title": t, "cosine": round(s, 4)} for i, t, s in self.neighbours],
            "terms": self.terms,
            "model": self.model,
        }


@dataclass
class Recommendation:
    paper: Paper
    score: float
    reason: Reason | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper.to_dict(),
            "score": round(float(self.score), 4),
            "why": self.reason.to_dict() if self.reason else None,
        }


@dataclass
class Recommendations:
    tag: str
    items: list[Recommendation]
    positives: int  # tag papers the model learned from (in the store)
    negatives: int
    candidates: int  # papers ranked
    took_ms: float
    trained: bool  # fitted for this call (False: the cached model)
    notices: list[str] = field(default_factory=list)
    choice: Choice | None = None  # which model ranked, and why

    def to_dict(self) -> dict[str, Any]:
        return {
            **{k: getattr(self, k) for k in "tag positives negatives candidates took_ms trained notices".split()},
            "took_ms": round(self.took_ms, 1),
            "model": self.choice.to_dict() if self.choice else None,
            "recommendations": [r.to_dict() for r in self.items],
        }


_MODELS_LOCK = threading.Lock()
_MODELS: OrderedDict[tuple, Model] = OrderedDict()
_FITTING: dict[tuple, threading.Lock] = {}  # per tag contents being fitted: one fit, the others wait for it
# the model chosen per tag contents (snapshots, papers, dismissals): re-validated when they change
_CHOICES: OrderedDict[tuple, Choice] = OrderedDict()
_ROOM = {"models": MODEL_CACHE}  # the cache's size: grown to the most tags a store had (_every_tag)


def _docs_of(c: Corpus, src: SearchCorpus, ids: list[str]) -> np.ndarray:
    return c.docs([r for r in (src.rowid(i) for i in ids) if r is not None])


def tag_model(
    store: Store, tag: str, c: Corpus | None = None, source: SearchCorpus | None = None
) -> tuple[Model | None, bool, Corpus]:
    """The tag's model over the current snapshots (the store's, or `source`'s), cached or fitted;
    negatives sampled by the store's id, so a migrated backend recommends the same. A fit starts
    from zero, never from this process's last fit: the model is a function of the tag's contents
    and the snapshots alone, so every server worker ranks alike (warm starts gave two workers two
    "For you" orders: docs/recommendations.md)."""
    src = _source(store, source)
    c = c or corpus(store, source)
    pos = _docs_of(c, src, library.tag_papers(store, tag))
    dis = _docs_of(c, src, library.dismissed(store))
    if len(pos) < MIN_POSITIVES:
        return None, False, c
    key = (c.key, tag.lower(), hashlib.blake2b(pos.tobytes() + b"|" + dis.tobytes(), digest_size=16).digest())
    with _MODELS_LOCK:
        if (m := _cached(key)) is not None:
            return m, False, c
        fitting = _FITTING.setdefault(key, threading.Lock())
    with fitting:  # a second request for the same contents waits for the first's fit
        with _MODELS_LOCK:
            if (m := _cached(key)) is not None:
                return m, False, c
            choice = _CHOICES.get(key)  # the model chosen for these contents, if it was evicted since
        m = fit(c, pos, dis, seed=f"{store.store_id()}:{tag.lower()}", choice=choice)
        with _MODELS_LOCK:
            _keep(key, m, choice)
    return m, True, c


def _cached(key: tuple) -> Model | None:
    """The cached model of these contents, as the most recently used (caller holds _MODELS_LOCK)."""
    m = _MODELS.get(key)
    if m is not None:
        _MODELS.move_to_end(key)
    return m


def _keep(key: tuple, m: Model, choice: Choice | None) -> None:
    """Cache a fitted model and its choice, evicting the least recently used (caller holds _MODELS_LOCK)."""
    _MODELS[key] = m
    _FITTING.pop(key, None)
    while len(_MODELS) > _ROOM["models"]:
        _MODELS.popitem(last=False)
    if choice is None and m.choice is not None:
        _CHOICES[key] = m.choice
        while len(_CHOICES) > max(CHOICE_CACHE, _ROOM["models"]):
            _CHOICES.popitem(last=False)


def _every_tag(store: Store) -> list[str]:
    """The tags with papers, each of whose models a ranking by every tag reads, and room in the
    cache for them all: a least-recently-used cache smaller than the tags, read in one order on
    every request, keeps none of them (with 32 models and 40 tags, every For you refitted all
    40, twice: docs/recommendations.md, "How many models a process keeps")."""
    names = [t.name for t in library.tags(store) if t.count]
    with _MODELS_LOCK:
        _ROOM["models"] = max(_ROOM["models"], len(names))
    return names


def prepare(store: Store, tags: list[str] | None = None, source: SearchCorpus | None = None) -> None:
    """Fit the models of `tags` (default: every tag with papers), and score the corpus with them
    (:func:`scored`), before a request's time budget starts, as a search's models are loaded
    before its own: the budget is for the request's work, and a fit after the tag or the store
    changed (seconds, on a busy machine) was a 503 telling the user to narrow a search they never
    made. An unknown tag is the caller's LibraryError."""
    names = [library.get_tag(store, t).name for t in tags] if tags is not None else _every_tag(store)
    c = corpus(store, source) if names else None  # no tag: the features are not even loaded
    for name in names:
        model, _, c = tag_model(store, name, c, source)
        if model is not None:
            scored(c, model)


def recommend(
    store: Store,
    tag: str,
    k: int = 20,
    *,
    page: int = 1,
    within: np.ndarray | list[int] | None = None,
    explain: bool = True,
    source: SearchCorpus | None = None,
) -> Recommendations:
    """The tag's best unseen papers (not in the tag, not dismissed), best first; `within` (rowids)
    limits the candidates (one day's papers); `source`: the corpus searches read, else the store."""
    t0 = time.perf_counter()
    tag = library.get_tag(store, tag).name
    k, page = max(1, int(k)), max(1, int(page))  # how many one request may ask for: service.MAX_K
    src = _source(store, source)
    model, trained, c = tag_model(store, tag, source=source)
    if model is None:
        return Recommendations(
            tag, [], 0, 0, 0, (time.perf_counter() - t0) * 1000, False, [message("tag_has_no_papers")]
        )
    s = scored(c, model)
    ok = np.ones(c.n, dtype=bool)
    if within is not None:
        ok[:] = False
        ok[c.docs(within)] = True
    ok[model.positives] = False
    ok[_docs_of(c, src, library.dismissed(store))] = False
    cand = np.flatnonzero(ok)
    docs = top_k(s, cand, page * k)[(page - 1) * k :]
    rowids = [int(c.rowids[d]) for d in docs]
    papers = src.papers(rowids)
    items = [
        Recommendation(p, float(s[d]), explain_one(src, c, model, int(d), p) if explain else None)
        for d, r in zip(docs, rowids, strict=True)
        if (p := papers.get(r)) is not None
    ]
    notices: list[str] = [message("more_papers_better")] if len(model.positives) < 3 else []
    took = (time.perf_counter() - t0) * 1000
    n_pos, n_neg = len(model.positives), model.negatives
    return Recommendations(tag, items, n_pos, n_neg, len(cand), took, trained, notices, model.choice)


def explain_one(src: SearchCorpus, c: Corpus, model: Model, doc: int, p: Paper) -> Reason:
    """The tag's papers nearest to `doc`, and its words that weigh most for the tag's model
    (the SVM's weights, or a centroid's: the tag's mean tf-idf vector), and the model's why."""
    neighbours: list[tuple[str, str, float]] = []
    if c.D is not None and c.has_vec[doc] and len(model.positives):
        pos = model.positives[c.has_vec[model.positives]]
        sims = c.D[pos] @ c.D[doc]
        best = np.argsort(-sims, kind="stable")[:EXPLAIN_NEIGHBOURS]
        got = src.papers([int(c.rowids[pos[i]]) for i in best])
        neighbours = [
            (q.id, q.title, float(sims[i])) for i in best if (q := got.get(int(c.rowids[pos[i]]))) is not None
        ]
    terms: list[str] = []
    if len(model.terms):
        A = c.by_paper
        tids, vals = A.idx[A.ptr[doc] : A.ptr[doc + 1]], A.val[A.ptr[doc] : A.ptr[doc + 1]]
        at = np.clip(np.searchsorted(model.terms, tids), 0, len(model.terms) - 1)
        hit = model.terms[at] == tids
        w = model.w_terms if model.kind == "svm" else model.c_terms
        contrib = np.where(hit, vals * np.where(hit, w[at], 0.0), 0.0)
        contrib[c.ix.df[tids] > max(EXPLAIN_MAX_DF * c.n, 100)] = 0.0  # common words explain nothing
        # words several saved papers share come first; a word of one only when there are too few
        shared = hit & (model.pos_df[at] >= min(2, len(model.positives)))
        order = np.lexsort((np.arange(len(tids)), -contrib, ~shared))
        stems = [str(c.ix.vocab[tids[i]]) for i in order[: EXPLAIN_TERMS * 3] if contrib[i] > 0]
        n_shared = int((shared & (contrib > 0)).sum())
        if n_shared >= 3:
            stems = stems[:n_shared]
        terms = _surface(stems, f"{p.title} {p.abstract}")[:EXPLAIN_TERMS]
    return Reason(neighbours, terms, model.choice.text() if model.choice else LABELS[model.kind])


def _surface(stems: list[str], text: str) -> list[str]:
    """Each stem as the paper's title or abstract writes it (its first word with that stem);
    stems only in its author names, numbers and one- or two-letter words are left out."""
    st = stemmer()
    first: dict[str, str] = {}
    for w in tokens(index_text(text)):
        first.setdefault(st.stemWord(w), w)
    return [first[s] for s in stems if s in first and len(first[s]) > 2 and not s.isdigit()]


# --- "for you": the daily page's order and its "for TAG" chips ----------------------------------
# The chance that a paper is on a tag's topic, from its z-score: sigmoid(a + b z); a card says
# "for TAG" from CHIP_P, "strong" from STRONG_P. Fitted and chosen: docs/recommendations.md.
ON_TOPIC = (-4.511, 1.010)
CHIP_P = 0.8
STRONG_P = 0.9
MIN_CHIP_PAPERS = 3  # a smaller tag orders "for you" but marks no card (too often wrong)


def on_topic(z: Any) -> Any:
    """The calibrated chance (0..1) for z-scores of :func:`scores`."""
    return 1.0 / (1.0 + np.exp(-(ON_TOPIC[0] + ON_TOPIC[1] * np.asarray(z, dtype=np.float64))))


def chip_z() -> float:
    """The z-score from which a paper earns the chip (on_topic = CHIP_P)."""
    return float((np.log(CHIP_P / (1 - CHIP_P)) - ON_TOPIC[0]) / ON_TOPIC[1])


def strength(chance: float) -> str | None:
    """What a card says of a chance: "strong", "likely", or nothing (no chip)."""
    return "strong" if chance >= STRONG_P else "likely" if chance >= CHIP_P else None


def for_you(store: Store, rowids: list[int], source: SearchCorpus | None = None) -> dict[int, tuple[float, str]]:
    """Each paper's (rowids of `source`, else of the store) best chance of being on one of the
    user's tags' topics (:func:`on_topic`), and that tag; papers marked "not interested" left out,
    and a tag's own papers for that tag (a saved paper was "for TAG · strong" and first)."""
    out: dict[int, tuple[float, str]] = {}
    if not rowids:
        return out
    c = corpus(store, source)
    gone = {_source(store, source).rowid(i) for i in library.dismissed(store)}
    docs = c.docs([r for r in rowids if r not in gone])  # "not interested" stays out
    for name in _every_tag(store):
        model = tag_model(store, name, c, source)[0]
        if model is None:
            continue
        mine = docs[~np.isin(docs, model.positives)]  # a tag's own papers are not recommendations for it
        for d, v in zip(mine, on_topic(scored(c, model)[mine]), strict=True):
            r = int(c.rowids[d])
            if r not in out or v > out[r][0]:
                out[r] = (float(v), name)
    return out


def for_you_notices(store: Store, papers: int, scored: bool) -> list[str]:
    """Why a day "for you" lists nothing, when it does not: no tags, or every paper of the day in a
    tag or marked "not interested". A day without papers says so itself (it said "No tags yet")."""
    if scored or not papers:
        return []
    return [message("for_you_none" if any(t.count for t in library.tags(store)) else "no_tags")]


def for_you_order(store: Store, rowids: list[int]) -> tuple[list[int], dict[int, tuple[float, str]]]:
    """`rowids` (a period's papers, in date order) by their best :func:`for_you` score, ties in
    date order (one order in every process: pages are slices of it); then, in date order, papers
    no tag scores (each in every tag already), and last those marked "not interested". Also the
    scores, empty when there is no tag."""
    scored = for_you(store, rowids) if any(t.count for t in library.tags(store)) else {}
    if not scored:
        return list(rowids), {}
    gone = {store.rowid(i) for i in library.dismissed(store)}
    at = {r: i for i, r in enumerate(rowids)}

    def key(r: int) -> tuple[int, float, int]:
        return (0, -scored[r][0], at[r]) if r in scored else (2 if r in gone else 1, 0.0, at[r])

    return sorted(rowids, key=key), scored


# --- related work for a pasted text --------------------------------------------------------------
MAX_TEXT = 5000  # characters of a pasted text read (a longer one is cut, saying so)
# Characters of it the model embeds, as of a document; the model's cost grows steeply with
# length, and a searcher is held meanwhile.
EMBED_CHARS = 512
KEY_TERMS = 25  # terms of the lexical query (docs/recommendations.md)
_OPERATORS = {"and", "or", "not"}
RELATED_DEPTH = 100  # candidates per side


def pasted_prefix(text: str) -> str:
    """What of a pasted text the model embeds: its opening EMBED_CHARS characters as a reader
    sees them (:func:`legible`), cut at a word; Chinese in it as the search box gives it to the
    model (`Plan.dense_text`: the dictionary's English, and the Chinese it could not read), since
    the Chinese itself ranked papers of the wrong field (推测解码, speculative decoding: a
    DNA-storage and a decoding-error paper in the first five, where its English gave none)."""
    from paperdex.index.embed import _cut
    from paperdex.search import plan

    shown = _cut(legible(" ".join(str(text or "").split())[:MAX_TEXT]), EMBED_CHARS)
    if not zh.has_cjk(shown):
        return shown
    try:
        return plan(shown, literal=True).dense_text or shown
    except QueryError:
        return shown


# A paste from a web page or a .tex file brings markup; its tags, entities and TeX commands are
# not the text's words ("amp", "script", "eta" were key terms: docs/recommendations.md)
_HTML_HIDDEN = re.compile(r"<(script|style)\b[^>]{0,500}>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]{0,500}>", re.DOTALL)
_MATH_OR_LINK = re.compile(
    f"{latex.MATH_ON}[^{latex.MATH_OFF}]*{latex.MATH_OFF}|{latex.LINK_ON}[^{latex.LINK_OFF}]*{latex.LINK_OFF}"
)
# a letter alone, not in a Greek word, as text.greek_names reads it: a variable (\eta, {\lambda}opt, λ)
_LONE_GREEK = re.compile("(?<![\u0370-\u03ff\u1f00-\u1fff])[\u0370-\u03ff](?![\u0370-\u03ff\u1f00-\u1fff])")


def _tex_of(text: str) -> str:
    """The text without HTML (tags, scripts, entities), its TeX made legible with markers
    (latex.parse_tex, unbounded cache of pasted texts avoided)."""
    if "<" in text or "&" in text:
        text = _HTML_TAG.sub(" ", _HTML_HIDDEN.sub(" ", html.unescape(text)))
    return latex.parse_tex.__wrapped__(text)[0] if "\\" in text or "$" in text else text


def legible(text: str) -> str:
    """A pasted text as a reader sees it: what the model embeds."""
    return " ".join(latex.MARKERS.sub("", _tex_of(text)).split())


def words_of(text: str) -> str:
    """A pasted text's words, what key terms are chosen from: :func:`legible` without its math,
    links and lone Greek letters (variables: \\eta is a symbol, not a topic)."""
    return _LONE_GREEK.sub(" ", latex.MARKERS.sub("", _MATH_OR_LINK.sub(" ", _tex_of(text))))


@dataclass
class Related:
    text: str
    key_terms: list[str]
    hits: list[Hit]  # fused
    took_ms: float
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key_terms": self.key_terms,
            "took_ms": round(self.took_ms, 1),
            "notices": self.notices,
            "hits": [h.to_dict() for h in self.hits],
        }


class KeyTerm(NamedTuple):
    label: str  # as the page shows it: the text's word, or a Chinese word's English reading
    query: str  # as the lexical query asks for it: the word, or the Chinese word (search reads it)


def key_terms(ix, text: str, n: int = KEY_TERMS, zh_dict: bool = True) -> list[str]:
    """The words of `text` with the highest tf-idf against the papers, each as the text writes
    it, a Chinese word as its English reading (:func:`terms_of_text`)."""
    return [t.label for t in terms_of_text(ix, text, n, zh_dict)]


def terms_of_text(ix, text: str, n: int = KEY_TERMS, zh_dict: bool = True) -> list[KeyTerm]:
    """The key terms of a pasted text: its words (markup left out: :func:`words_of`) and its
    Chinese words read as the search box reads them (`zh.concepts`: a word stands for its
    English alternatives, scored by the rarest word of the first), by tf-idf against the
    lexical snapshot `ix`; words no paper has are left out."""
    words = words_of(text)
    st = stemmer()
    tf: Counter[tuple[str, ...]] = Counter()
    said: dict[tuple[str, ...], KeyTerm] = {}
    for w in tokens(index_text(words)):
        if w not in STOPWORDS and len(w) >= 2 and not w.isdigit():
            key: tuple[str, ...] = (st.stemWord(w),)
            tf[key] += 1
            said.setdefault(key, KeyTerm(w, w))
    for word, label, alts in _chinese_words(words, zh_dict):
        tf[alts[0]] += 1
        said.setdefault(alts[0], KeyTerm(label, word))
    N = max(ix.n, 1)
    scored = []
    for key, count in tf.items():
        df = [0 if (t := ix.term(s)) is None else int(ix.df[t]) for s in key]
        if min(df):  # words papers have
            scored.append(((1 + np.log(count)) * float(lexical.idf(min(df), N)), said[key].label, key))
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [said[key] for _, _, key in scored[:n]]


def _chinese_words(text: str, zh_dict: bool) -> list[tuple[str, str, list[tuple[str, ...]]]]:
    """Each concept of `text`'s Chinese words as the search box reads them: the word, its English
    reading (the first alternative) and the stems of its alternatives; the question's frame
    (如何) left out, as search leaves it out."""
    from paperdex.search.planning import Concept, alt_of, is_filler
    from paperdex.store import PrefixCounts

    out: list[tuple[str, str, list[tuple[str, ...]]]] = []
    for part, cjk in split_cjk(text) if zh_dict and zh.has_cjk(text) else []:
        for word in zh.segment(part, PrefixCounts) if cjk else []:
            for alts in zh.concepts(word, zh_dict, table=PrefixCounts):
                stems = list(dict.fromkeys(filter(None, map(alt_of, alts))))
                if stems and not is_filler(Concept(alts[0], stems)):
                    out.append((word, alts[0], stems))
    return out


def related(
    s: Searcher,
    text: str,
    k: int = 20,
    *,
    filters=None,
    deadline: float | None = None,
    query_vector: np.ndarray | None = None,
    dense: bool = True,
) -> Related:
    """Papers related to a pasted abstract or paragraph: its opening EMBED_CHARS characters
    embedded as documents are, fused by reciprocal rank with BM25 over its KEY_TERMS key terms,
    any of which may match (requiring half leaves almost nothing to rank). `query_vector`: the
    text's vector if the caller embedded it already; `dense=False`: the words alone."""
    t0 = time.perf_counter()
    whole = " ".join(str(text or "").split())
    text = whole[:MAX_TEXT]
    k = max(1, int(k))  # how many one request may ask for: service.MAX_RELATED
    notices: list[str] = [message("text_cut", read=MAX_TEXT, given=len(whole))] if len(whole) > MAX_TEXT else []
    found_terms = terms_of_text(s.lex, text, zh_dict=s.zh_dict)
    terms = [t.label for t in found_terms]
    lex_hits = _lexical_side(s, [t.query for t in found_terms], filters, deadline)
    dense_hits: list[Hit] = []
    vindex = s.index
    if dense and vindex is not None and len(vindex) and text:
        allowed = None if filters is None else s.allowed_rowids(filters, deadline)
        qv = query_vector if query_vector is not None else s.embed_query(pasted_prefix(text), vindex.model)
        if deadline is not None and time.monotonic() > deadline:
            raise OverBudget()
        found = vindex.search(qv, RELATED_DEPTH, allowed) if qv is not None else []
        got = s.corpus.papers([r for r, _ in found])
        dense_hits = [Hit(got[r], sc, dense_score=sc) for r, sc in found if r in got]
    elif dense:
        notices.append(message("no_vectors"))
    if not text:
        notices.append(message("paste_paragraph"))
    return Related(text, terms, _fused(lex_hits, dense_hits, terms, k), (time.perf_counter() - t0) * 1000, notices)


def _lexical_side(s: Searcher, terms: list[str], filters, deadline: float | None) -> list[Hit]:
    """BM25 over the key terms, any one matching; as plain text if the query language misreads one."""
    words = list(dict.fromkeys(t for t in terms if t.lower() not in _OPERATORS))
    if not words:
        return []
    kw = {"mode": "lexical", "per_page": RELATED_DEPTH, "filters": filters, "facets": False, "deadline": deadline}
    try:
        return s.search(" OR ".join(words), **kw).hits
    except QueryError:
        return s.search(" ".join(words), literal=True, **kw).hits


def _fused(lex_hits: list[Hit], dense_hits: list[Hit], terms: list[str], k: int) -> list[Hit]:
    """The first `k` of the two sides by reciprocal rank, each keeping its rank on both."""
    papers = {h.paper.id: h.paper for h in [*dense_hits, *lex_hits]}  # the lexical side's when both
    ids = list(dict.fromkeys(h.paper.id for h in [*lex_hits, *dense_hits]))
    pos = {pid: j for j, pid in enumerate(ids)}
    fused = rrf([[pos[h.paper.id] for h in lex_hits], [pos[h.paper.id] for h in dense_hits]])
    lex = {h.paper.id: (i, h.lexical_score) for i, h in enumerate(lex_hits, 1)}
    dense = {h.paper.id: (i, h.dense_score) for i, h in enumerate(dense_hits, 1)}
    stems = stems_of(terms)
    hits = []
    for j in sorted(fused, key=lambda j: (-fused[j], j))[:k]:
        p = papers[ids[j]]
        (lr, ls), (dr, ds) = lex.get(p.id, (None, None)), dense.get(p.id, (None, None))
        hits.append(
            Hit(p, fused[j], lr, ls, dr, ds, title_marked=mark(p.title, stems), snippet=snippet(p.abstract, stems))
        )
    return hits

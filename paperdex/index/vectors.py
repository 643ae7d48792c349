"""The dense side: the store's int8 vectors read from SQLite into memory and searched with
numkong's SIMD dot products: a first pass over a four-bit copy of every row, the best few
thousand rows scored again in int8 and the best of those with the float query. SQLite's table
stays the one copy on disk (why a scan, not an ANN graph: docs/performance.md).

Writers publish (``publish``) by replacing the pointer ``vectors.json`` (store, model, epoch,
count) atomically; readers (``VectorIndex.current``) read every vector again, in one
transaction, when it changes, shared by a process's searchers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from paperdex.index.lexical import find_sorted, position_table
from paperdex.index.snapshots import shared, stamp
from paperdex.store import quantize

if TYPE_CHECKING:
    from paperdex.store import Store

FORMAT = 5  # a pointer only (4 and below: a folder with rows and an HNSW graph)
POINTER = "vectors.json"
CANDIDATES = 4  # int8 candidates per wanted hit, scored again with the float query (`candidates`)
# OpenBLAS's float product of a matrix and a vector takes the rows four at a time and the last
# n % 4 another way: a row's bits do not depend on its place in a matrix of 4k rows, so `_exact`
# rescores candidates in any order only then (tests/test_vectors.py checks it of the BLAS loaded)
BLAS_ROWS = 4
SCAN_ALL_ABOVE = 0.25  # a filter allowing more than this share of rows: scan all, mask the rest
SUBSET_CACHE_BYTES = 128 << 20
CHUNK = 65_536
# The first pass (`_four_bits`): the FIRST_PASS x `candidates(k)` best rows, if 1/FIRST_PASS_SHARE at most
FOUR_BIT_STEP = 12
FIRST_PASS = 4
FIRST_PASS_SHARE = 8


@lru_cache(maxsize=1)
def _numkong():
    """numkong's SIMD kernels, imported on first use (tests/test_embed.py: import order)."""
    import numkong

    return numkong


def unit(v: np.ndarray) -> np.ndarray:
    """Stored (int8) rows as L2-normalised float32, what cosine scoring multiplies."""
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 0, n, 1)


@dataclass(frozen=True)
class Query8:
    """A scan's state for `cosines_of`: `scores` of every row, or of the rows at `known`, or None."""

    q8: np.ndarray
    scores: np.ndarray | None = None
    known: np.ndarray | None = None


class VectorIndex:
    """The store's vectors as one process reads them at one moment."""

    def __init__(self, keys: np.ndarray, vecs: np.ndarray, meta: dict) -> None:
        self.keys = keys  # rowids, ascending
        self.vecs = np.ascontiguousarray(vecs, dtype=np.int8)  # each row scaled to ±127 (store.quantize)
        self.model: str | None = meta.get("model")
        self.epoch: int = int(meta.get("epoch", -1))
        self.norms = _norms(self.vecs)  # `unit`'s divisors, kept for rescoring
        self.inv = np.divide(1, self.norms, out=np.zeros_like(self.norms), where=self.norms > 0)
        self._lock = threading.Lock()
        self._subsets: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._at = position_table(self.keys)
        self._four, self._off4, self._inv4 = _four_bits(self.vecs)  # the first pass's rows (`_fours`)

    def __len__(self) -> int:
        return len(self.keys)

    def warm(self) -> None:
        _numkong()

    # --- reading ----------------------------------------------------------------------
    @classmethod
    def current(cls, store: Store) -> VectorIndex | None:
        """The vectors searches use now (shared per process; None without a model)."""
        if (model := store.model) is None:
            return None
        key = (stamp(store.data_dir / POINTER), store.store_id(), model)
        return shared(store.data_dir, "vectors", key, lambda: cls.from_store(store))

    @classmethod
    def from_store(cls, store: Store) -> VectorIndex:
        with store.read_snapshot():
            meta = {"model": store.model, "epoch": store.vectors_epoch()}
            keys, vecs = store.load_vectors()
        return cls(keys, vecs, meta)

    def vector(self, rowid: int) -> np.ndarray | None:
        return self.vectors([rowid]).get(rowid)

    def vectors(self, rowids: list[int]) -> dict[int, np.ndarray]:
        """The unit vectors of those of `rowids` that have one."""
        wanted = np.asarray(rowids, dtype=np.int64)
        pos, ok = self._find(wanted)
        return dict(zip(wanted[ok].tolist(), self._unit(pos[ok]), strict=True))

    def _unit(self, pos: np.ndarray) -> np.ndarray:
        """`unit` of the rows at `pos`, by the norms kept (the same floats: computed alike)."""
        n = self.norms[pos][:, None]
        # cast and divided in one pass: the quotients of a cast, then a division
        return np.divide(self._gather(pos), np.where(n > 0, n, 1), dtype=np.float32)

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine) for a unit query vector, among `allowed` rowids if given."""
        if q is None or k <= 0:
            return []
        return self.nearest(q, k) if allowed is None else self.scan_within(q, k, allowed)[0]

    def scan(
        self, q: np.ndarray, k_all: int, k_in: int, allowed: np.ndarray | None = None
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], Query8]:
        """The top k_all over all rows (a filter only narrows close matches), k_in among `allowed`."""
        if len(self.keys) == 0 or q is None:
            return [], [], Query8(np.zeros(0, dtype=np.int8))
        q = np.asarray(q, dtype=np.float32)
        q8 = quantize(q)
        fours = self._fours(q8)
        if allowed is None:
            ranked, state = self._ranked(q, q8, max(k_all, k_in), fours)
            return ranked[:k_all], ranked[:k_in], state
        pos = self._present(allowed)
        nearest, state = self._ranked(q, q8, k_all, fours)
        every = state.scores  # every row's, if read: not read again
        return nearest, self._ranked(q, q8, min(k_in, len(pos)), fours, pos, every)[0], state

    def nearest(self, q: np.ndarray, k: int) -> list[tuple[int, float]]:
        """`scan`'s first part alone: the same top k over all rows."""
        return self.scan(q, k, 0)[0]

    def scan_within(self, q: np.ndarray, k_in: int, allowed: np.ndarray) -> tuple[list[tuple[int, float]], Query8]:
        """`scan`'s second and third parts alone, to the bit (int8 products are exact), for a
        filtered query with no close match possible (`Searcher._dense_side`)."""
        q = np.asarray(q, dtype=np.float32)
        pos = self._present(allowed)
        if len(pos) > SCAN_ALL_ABOVE * len(self.keys):  # a loose filter: gathering costs more than it saves
            _, ranked, state = self.scan(q, 0, k_in, allowed)
            return ranked, state
        q8 = quantize(q)
        scores = self._cosines8(q8, pos)
        ranked = self._exact(q, scores, min(k_in, len(pos)), pos)
        if np.any(pos[1:] < pos[:-1]):  # the engine's filters come in rowid order; others are sorted
            order = np.argsort(pos)
            pos, scores = pos[order], scores[order]
        return ranked, Query8(q8, scores, pos)

    def _fours(self, q8: np.ndarray) -> np.ndarray | None:
        """Every row's first-pass score (four-bit product over the row's norm), None if none."""
        if self._four is None:
            return None
        u = _uint4(q8[None, :])
        dots = np.asarray(_numkong().dots_packed(_nibbles(u), self._four))[0].view(np.int32)
        dots -= self._off4 + (8 * int(u.sum()) - 64 * u.shape[1])
        return np.multiply(dots, self._inv4, dtype=np.float32)

    def _ranked(
        self,
        q: np.ndarray,
        q8: np.ndarray,
        k: int,
        fours: np.ndarray | None,
        pos: np.ndarray | None = None,
        every: np.ndarray | None = None,
    ) -> tuple[list[tuple[int, float]], Query8]:
        """`_exact`'s top k, int8 scores read for the first pass's best rows alone where that
        pays (docs/performance.md); a tie at the cut reads every row (`every`, if read)."""
        if k <= 0:
            return [], Query8(q8)
        m = candidates(k)
        rows = len(self.keys) if pos is None else len(pos)
        if fours is not None and m % BLAS_ROWS == 0 and FIRST_PASS_SHARE * FIRST_PASS * m <= rows:
            cand = _at_least(fours if pos is None else fours[pos], FIRST_PASS * m)
            if pos is not None:
                cand = pos[cand]
            scores = self._cosines8(q8, cand, keep=False)
            if (best := _best(scores, m)) is not None:
                return self._rescored(q, cand[best], k), Query8(q8)
        scores = every if every is not None else self._cosines8(q8)
        return self._exact(q, scores if pos is None else scores[pos], k, pos), Query8(q8, scores)

    def _gather(self, pos: np.ndarray) -> np.ndarray:
        """The int8 rows at `pos` (`np.take` copies whole rows: faster than fancy indexing)."""
        return np.take(self.vecs, pos, axis=0)

    def _find(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`find_sorted` in `keys`, by their `position_table` when they have one."""
        return find_sorted(self.keys, rowids, self._at)

    def _present(self, rowids: np.ndarray) -> np.ndarray:
        pos, ok = self._find(rowids)
        return pos[ok]

    def _cosines8(self, q8: np.ndarray, pos: np.ndarray | None = None, keep: bool = True) -> np.ndarray:
        """The int8 cosines with every row (or those at `pos`, kept if `keep`), the same floats."""
        if pos is not None and len(pos) == 0:
            return np.zeros(0, dtype=np.float32)
        rows = self.vecs if pos is None else self._rows(pos) if keep else self._gather(pos)
        scores = _dots8(q8[None, :], rows)[0]
        scores *= self.inv if pos is None else self.inv[pos]
        scores /= max(float(np.linalg.norm(q8.astype(np.float32))), 1e-9)
        return scores

    def cosines_of(self, state: Query8, rowids: np.ndarray) -> np.ndarray:
        """These papers' int8 cosines with a scan's query (NaN without a vector)."""
        pos, ok = self._find(rowids)
        out = np.full(len(pos), np.nan, dtype=np.float32)
        if state.scores is None:
            out[ok] = self._cosines8(state.q8, pos[ok], keep=False)
        elif state.known is None:
            out[ok] = state.scores[pos[ok]]
        else:
            at = np.searchsorted(state.known, pos)
            found = ok & (at < len(state.known))
            found[found] = state.known[at[found]] == pos[found]
            out[found] = state.scores[at[found]]
            out[ok & ~found] = -np.inf
        return out

    def _exact(
        self, q: np.ndarray, scores: np.ndarray, k: int, pos: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The best k by the int8 `scores` (of the rows at `pos`), rescored, older first on ties."""
        if k <= 0:
            return []
        m = candidates(k)
        if (cand := _best(scores, m) if m % BLAS_ROWS == 0 else None) is None:
            cand = self._as_scanned(scores, m, pos)
        elif pos is not None:
            cand = pos[cand]
        return self._rescored(q, cand, k)

    def _rescored(self, q: np.ndarray, cand: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The best k of the rows at `cand` by the float query, equal cosines older first."""
        exact = self._unit(cand) @ q
        found = self.keys[cand]
        best = np.lexsort((found, -exact))[:k]
        return list(zip(found[best].tolist(), exact[best].tolist(), strict=True))

    def _as_scanned(self, scores: np.ndarray, m: int, pos: np.ndarray | None) -> np.ndarray:
        """`_exact`'s m candidates where `_best` has none: argpartition's over every row's."""
        if pos is None:
            return _top(scores, min(len(scores), m))
        whole = np.full(len(self.keys), -np.inf, dtype=np.float32)
        whole[pos] = scores
        cand = _top(whole, min(len(whole), m))
        return cand[whole[cand] > -np.inf]

    def dots(self, w: np.ndarray) -> np.ndarray:
        """unit(row) @ w for every row, w in two int8 parts (no float32 copy of the rows)."""
        W = np.ascontiguousarray(np.atleast_2d(np.asarray(w, dtype=np.float32).T))  # [m, dim]
        out = np.zeros((len(W), len(self.keys)), dtype=np.float32)
        for _ in range(2):
            W8, scale = quantize(W), np.abs(W).max(axis=1, keepdims=True) / 127  # W ≈ W8 * scale
            out += _dots8(W8, self.vecs) * scale
            W = W - W8 * scale
        out *= self.inv
        return out[0] if np.ndim(w) == 1 else out.T

    def rows(self, rowids: np.ndarray) -> Rows:
        """These papers' unit rows, in this order (zero rows for papers without a vector)."""
        return Rows(self, rowids)

    def _rows(self, pos: np.ndarray) -> np.ndarray:
        """The int8 rows at `pos`, the last few subsets kept: a filter recurs across queries."""
        key = hashlib.blake2b(pos.tobytes(), digest_size=16).digest()
        with self._lock:
            if (sub := self._subsets.get(key)) is not None:
                self._subsets.move_to_end(key)
                return sub
        sub = self._gather(pos)
        with self._lock:
            self._subsets[key] = sub
            while sum(a.nbytes for a in self._subsets.values()) > SUBSET_CACHE_BYTES:
                self._subsets.popitem(last=False)
        return sub


class Rows:
    """Some papers' unit rows, as a float32 matrix answers ``rows[docs]`` and ``rows @ w``."""

    def __init__(self, index: VectorIndex, rowids: np.ndarray) -> None:
        self.index = index
        self.pos, self.ok = index._find(rowids)
        self.same = len(rowids) == len(index.keys) and bool(self.ok.all())  # every row, in order
        self.shape = (len(rowids), index.vecs.shape[1])

    def __getitem__(self, docs) -> np.ndarray:
        return unit(self.index.vecs[self.pos[docs]]) * self.ok[docs][..., None]

    def __matmul__(self, w: np.ndarray) -> np.ndarray:
        s = self.index.dots(w)
        return s if self.same else s[self.pos] * (self.ok if s.ndim == 1 else self.ok[:, None])


def _dots8(a8: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """[len(a8), len(rows)] dot products of int8 rows, with numkong's SIMD kernels."""
    return np.asarray(_numkong().cdist(a8, rows, metric="dot", out_dtype="float32"))


def candidates(k: int) -> int:
    """int8 candidates rescored for a top k: CANDIDATES per hit for the first 100, one beyond."""
    return max(64, CANDIDATES * min(k, 100) + max(0, k - 100))


def _norms(vecs: np.ndarray) -> np.ndarray:
    """‖row‖ as float32, as `unit` computes it, a chunk at a time (the same floats)."""
    norms = np.zeros(len(vecs), dtype=np.float32)
    for at in range(0, len(vecs), CHUNK):
        norms[at : at + CHUNK] = np.linalg.norm(vecs[at : at + CHUNK].astype(np.float32), axis=1)
    return norms


def _uint4(v8: np.ndarray) -> np.ndarray:
    """int8 rows in four bits: over FOUR_BIT_STEP, rounded, in [-8, 7], plus 8 (unsigned), even."""
    v = np.clip((v8.astype(np.int16) + FOUR_BIT_STEP // 2) // FOUR_BIT_STEP, -8, 7).astype(np.int8)
    v += 8
    return np.pad(v, ((0, 0), (0, v.shape[1] % 2)), constant_values=8).view(np.uint8)


def _nibbles(u4: np.ndarray) -> np.ndarray:
    """Four-bit rows two values a byte, the first in the low half (numkong's "uint4")."""
    return u4[:, 0::2] | (u4[:, 1::2] << 4)


def _four_bits(vecs: np.ndarray, block: int = 8192):
    """The first pass's packed rows, their offsets' part of a product (8 x sum) and 1/‖row‖, or Nones."""
    if len(vecs) < FIRST_PASS_SHARE * FIRST_PASS * candidates(1):
        return None, None, None
    four = np.empty((len(vecs), (vecs.shape[1] + 1) // 2), dtype=np.uint8)
    off = np.empty(len(vecs), dtype=np.int32)
    inv = np.empty(len(vecs), dtype=np.float32)
    for at in range(0, len(vecs), block):
        u = _uint4(vecs[at : at + block])
        four[at : at + block] = _nibbles(u)
        off[at : at + block] = 8 * u.sum(axis=1, dtype=np.int32)
        v = u.view(np.int8) - np.int8(8)
        inv[at : at + block] = 1 / np.sqrt(np.maximum(np.einsum("ij,ij->i", v, v, dtype=np.int32), 1))
    return _numkong().dots_pack(four, dtype="uint4"), off, inv


def _at_least(scores: np.ndarray, m: int) -> np.ndarray:
    """Positions (ascending) of the m highest scores and maybe a quarter more."""
    if (stride := len(scores) // (4 * m)) >= 2:
        sample = scores[::stride]
        take = 5 * m // 4 // stride + 1
        among = np.flatnonzero(scores >= np.partition(sample, len(sample) - take)[len(sample) - take])
        if len(among) >= m:
            return among
    return np.sort(np.argpartition(-scores, m - 1)[:m])


def _top(scores: np.ndarray, m: int, block: int = 128) -> np.ndarray:
    """Positions of the m highest scores, in no order, from the m blocks with the highest maxima."""
    if m >= (n := len(scores)):
        return np.arange(n)
    full = n // block * block
    if full // block <= 4 * m:
        return np.argpartition(-scores, m - 1)[:m]
    maxima = scores[:full].reshape(-1, block).max(axis=1)
    best = np.argpartition(-maxima, m - 1)[:m]
    idx = np.concatenate([(best[:, None] * block + np.arange(block)).ravel(), np.arange(full, n)])
    return idx[np.argpartition(-scores[idx], m - 1)[:m]]


def _best(scores: np.ndarray, m: int) -> np.ndarray | None:
    """Positions (ascending) of the m highest scores, or None when they are not one set (a tie
    at the cut, or m is every score); found above a floor, as `rank.above` finds a pool."""
    if m >= (n := len(scores)):
        return None
    among = None
    if (stride := n // (8 * m)) >= 4:
        sample = scores[::stride]
        take = 2 * m // stride + 1  # about 2m of the scores pass the take-th best of the sample
        floor = np.partition(sample, len(sample) - take)[len(sample) - take]
        if len(among := np.flatnonzero(scores >= floor)) < m:
            among = None
    s = scores if among is None else scores[among]
    part = np.argpartition(-s, m - 1)[:m]
    return None if np.count_nonzero(s >= s[part].min()) > m else np.sort(part if among is None else among[part])


# --- writing (writers only) ---------------------------------------------------------------


def published(store: Store) -> dict | None:
    try:
        ptr = json.loads((store.data_dir / POINTER).read_text())
    except (OSError, ValueError):
        return None
    return ptr if ptr.get("format") == FORMAT and ptr.get("store_id") == store.store_id() else None


def publish(store: Store) -> dict | None:
    """Tell readers the vectors changed (see module doc); the pointer, or None without a model."""
    with store.read_snapshot():
        meta = {
            "format": FORMAT,
            "store_id": store.store_id(),
            "model": store.model,
            "epoch": store.vectors_epoch(),
            "count": store.vector_count(),
        }
    d = store.data_dir
    ptr_path = d / POINTER
    for old in d.glob("vectors.*"):  # folders of format 4 and below, no longer read
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    if meta["model"] is None:
        ptr_path.unlink(missing_ok=True)
        return None
    ptr_tmp = d / f"{POINTER}.{os.getpid()}.tmp"
    ptr_tmp.write_text(json.dumps(meta, indent=1))
    os.replace(ptr_tmp, ptr_path)
    return meta

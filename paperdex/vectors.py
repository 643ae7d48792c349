"""The dense side of the store: vectors as plain arrays and an HNSW graph (usearch), derived
from the vectors table in SQLite.

Lifecycle, kept simple enough to be obviously right:

* **Writers publish** (``publish``, called by `embed`, vector import and ingest): every vector
  read in one transaction, with the store's identity, model and vectors epoch; arrays and
  graph written into a new folder; the pointer ``vectors.json`` replaced atomically.
* **Readers only read** (``VectorIndex.current``): the published snapshot of *this* store
  (same ``store_id``) and model, mapped from disk and shared by every searcher of a process.
  A snapshot older than the store's vectors still answers (new vectors join at the next
  publish). With no usable snapshot a reader loads the vectors from SQLite into memory and
  searches them exactly; it never writes a file.

Vectors are int8 everywhere (``store.quantize``): in SQLite, in the snapshot's rows and in
the graph, which is given the same int8 rows and the query quantised alike, so its cosines
are the answer (within ~1e-3), with no second, wider copy to re-score from.

Filtered queries (a category, a date range) search the allowed rows exactly when they are
few, and over-fetch from the graph when they are many: both measured in bench/search.py.
Nothing is pickled.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np

from .store import Store, prune_snapshots, quantize, unit

FORMAT = 4
# An int8 graph. Given float32, usearch quantises with one fixed scale, which left recall@10
# at 0.93 and needed a float16 copy to re-score from; given rows already scaled one by one
# (store.quantize), it finds 0.99 of the exact top 10 (63k MiniLM vectors, 200 queries).
PARAMS = {"metric": "cos", "dtype": "i8", "connectivity": 32, "expansion_add": 200, "expansion_search": 256}


def search_breadth(n: int) -> int:
    """The graph's search breadth for n vectors: wider for big corpora, where the same
    breadth finds fewer of the true neighbours. bench/scale.py, int8 rows, recall@10 against
    exact float search: 63k 0.969 at 256; 250k 0.926 at 256, 0.962 at 512; 1M 0.866 at 256,
    0.936 at 1024, 0.966 at 2048 (8.6 ms a graph search); exact int8 search finds 0.987."""
    base = PARAMS["expansion_search"]
    return base if n <= 100_000 else 2 * base if n <= 400_000 else 8 * base


EXACT_BELOW = 5000  # fewer vectors than this: exact search is as fast as a graph
EXACT_SUBSET = 12_000  # a filter allowing at most this many rows is searched exactly
SUBSET_CACHE_BYTES = 128 << 20
POINTER = "vectors.json"


def _usearch_index():
    """usearch's Index class. onnxruntime must be loaded before usearch's numkong extension:
    the other order segfaults inside onnxruntime's import (usearch 2.26, onnxruntime 1.2x),
    so a store whose model runs on onnxruntime would crash on its first dense query."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pass
    from usearch.index import Index

    return Index


@lru_cache(maxsize=1)
def _one_blas_thread() -> None:
    """Scoring a query is a matrix-vector product: OpenBLAS's threads only wait on each other
    at that size, and under load they cost 20 ms a query instead of 0.3 (measured in
    bench/search.py). Searches run concurrently in several threads or workers instead."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


class VectorIndex:
    """One immutable snapshot of the store's vectors."""

    def __init__(self, keys: np.ndarray, vecs: np.ndarray, meta: dict, ann=None) -> None:
        self.keys = keys  # rowids, ascending
        self.vecs = vecs  # int8 [n, dim], each row scaled to ±127 (store.quantize)
        self.meta = meta
        self.model: str | None = meta.get("model")
        self.epoch: int = int(meta.get("epoch", -1))
        self._ann = ann
        self._f32: np.ndarray | None = None
        self._lock = threading.Lock()
        self._subsets: OrderedDict[bytes, np.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def f32(self) -> np.ndarray:
        """L2-normalised float32 rows for exact search (BLAS), made once per process."""
        if self._f32 is None:
            with self._lock:
                if self._f32 is None:
                    self._f32 = np.ascontiguousarray(unit(self.vecs))
        return self._f32

    def warm(self) -> None:
        """Fault the rows into memory before the first query needs them: without a graph,
        as the float32 copy every query scores; with one, only the int8 rows that filtered
        (exact) searches gather from, since a float32 copy of 1M rows would be 1.5 GB."""
        if self._ann is None:
            self.f32  # noqa: B018
        else:
            int(np.asarray(self.vecs).sum(dtype=np.int64))

    # --- reading ----------------------------------------------------------------------
    @classmethod
    def current(cls, store: Store) -> VectorIndex | None:
        """The snapshot searches should use now (shared per process), None without vectors."""
        from .search import _shared, _stamp

        model = store.model
        if model is None:
            return None
        stamp = (_stamp(store.data_dir / POINTER), store.store_id(), model)
        return _shared(store, "vectors", stamp, lambda: cls.load(store, model) or cls.from_store(store))

    @classmethod
    def load(cls, store: Store, model: str) -> VectorIndex | None:
        """The published snapshot, if it was made for this store and model."""
        d = store.data_dir
        try:
            ptr = json.loads((d / POINTER).read_text())
            if ptr.get("format") != FORMAT or ptr.get("params") != PARAMS:
                return None
            if ptr.get("store_id") != store.store_id() or ptr.get("model") != model:
                return None
            folder = d / ptr["dir"]
            keys = np.asarray(np.load(folder / "keys.npy", mmap_mode="r", allow_pickle=False))
            vecs = np.asarray(np.load(folder / "vecs.npy", mmap_mode="r", allow_pickle=False))
            if len(keys) != ptr["count"] or len(vecs) != ptr["count"]:
                return None
            ann = None
            if (folder / "ann.usearch").exists():
                ann = _usearch_index().restore(str(folder / "ann.usearch"), view=True)
                if ann is None or len(ann) != len(keys):
                    return None
                ann.expansion_search = search_breadth(len(keys))  # not kept by a saved graph
        except (OSError, ValueError, KeyError, RuntimeError):
            return None
        return cls(keys, vecs, ptr, ann)

    @classmethod
    def from_store(cls, store: Store) -> VectorIndex:
        """Every vector, read in one transaction; searched exactly (no graph is built by a
        reader: that is a writer's job)."""
        with store.read_snapshot():
            keys, vecs = store.load_vectors()
            meta = {"model": store.model, "epoch": store.vectors_epoch(), "store_id": store.store_id()}
        return cls(keys, vecs, meta)

    def vector(self, rowid: int) -> np.ndarray | None:
        i = int(np.searchsorted(self.keys, rowid))
        if i < len(self.keys) and self.keys[i] == rowid:
            return unit(self.vecs[i])
        return None

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine) for a unit query vector; `allowed` (rowids) restricts it."""
        n = len(self.keys)
        if n == 0 or k <= 0 or q is None:
            return []
        q = np.asarray(q, dtype=np.float32)
        if allowed is None:
            if self._ann is not None:
                return self._ann_search(q, k)
            return self._exact(q, k, None)
        pos = _present(self.keys, np.asarray(allowed, dtype=np.int64))
        if len(pos) == 0:
            return []
        if self._ann is None or len(pos) <= EXACT_SUBSET:
            return self._exact(q, k, pos)
        # many allowed rows: over-fetch from the graph, keep the allowed ones
        want = min(n, int(k * n / len(pos) * 2) + 16)
        ok = np.zeros(n, dtype=bool)
        ok[pos] = True
        found = self._ann_search(q, want)
        keep = [(r, s) for r, s in found if ok[np.searchsorted(self.keys, r)]]
        if len(keep) >= k:
            return keep[:k]
        return self._exact(q, k, pos)

    def _ann_search(self, q: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The graph's nearest rows (the query quantised like them), scored as exact search
        scores them, so a paper's cosine is the same whichever path found it."""
        found = self._ann.search(quantize(q), k).keys
        pos = np.searchsorted(self.keys, np.sort(found))  # ascending positions read the map in order
        scores = unit(np.asarray(self.vecs[pos])) @ q
        top = np.argsort(-scores, kind="stable")
        return [(int(self.keys[pos[i]]), float(scores[i])) for i in top]

    def _rows(self, pos: np.ndarray) -> np.ndarray:
        """The f32 rows at `pos`; the last few subsets are kept, since a filter (a category,
        a date range) recurs across queries and gathering its rows costs more than scoring."""
        key = hashlib.blake2b(pos.tobytes(), digest_size=16).digest()
        with self._lock:
            sub = self._subsets.get(key)
            if sub is not None:
                self._subsets.move_to_end(key)
                return sub
        sub = self.f32[pos] if self._f32 is not None else unit(np.asarray(self.vecs[pos]))
        with self._lock:
            self._subsets[key] = sub
            while sum(a.nbytes for a in self._subsets.values()) > SUBSET_CACHE_BYTES:
                self._subsets.popitem(last=False)
        return sub

    def _exact(self, q: np.ndarray, k: int, pos: np.ndarray | None) -> list[tuple[int, float]]:
        _one_blas_thread()
        sub = self.f32 if pos is None else self._rows(pos)
        scores = sub @ q
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        keys = self.keys if pos is None else self.keys[pos]
        return [(int(keys[i]), float(scores[i])) for i in top]


def _present(keys: np.ndarray, rowids: np.ndarray) -> np.ndarray:
    """Positions in `keys` of those `rowids` that have a vector."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    pos = np.clip(np.searchsorted(keys, rowids), 0, len(keys) - 1)
    return pos[keys[pos] == rowids]


# --- writing (writers only) ---------------------------------------------------------------


def published(store: Store) -> dict | None:
    """The pointer of the published snapshot of this store, if any."""
    try:
        ptr = json.loads((store.data_dir / POINTER).read_text())
    except (OSError, ValueError):
        return None
    ok = ptr.get("format") == FORMAT and ptr.get("params") == PARAMS and ptr.get("store_id") == store.store_id()
    return ptr if ok else None


def _graph(store: Store, keys: np.ndarray, vecs: np.ndarray):
    """The HNSW graph of these vectors: the published one with only what changed removed and
    added (an `embed` of 32 papers into 63k took 158 s rebuilding, a second or two this way),
    or a new one when there is none or most vectors changed."""
    prev = VectorIndex.load(store, store.model or "") if published(store) else None
    if prev is not None and prev._ann is not None:
        common, i_new, i_old = np.intersect1d(keys, prev.keys, assume_unique=True, return_indices=True)
        changed = common[np.any(vecs[i_new] != np.asarray(prev.vecs)[i_old], axis=1)]
        gone = np.concatenate([np.setdiff1d(prev.keys, keys, assume_unique=True), changed])
        fresh_mask = ~np.isin(keys, common, assume_unique=True) | np.isin(keys, changed, assume_unique=True)
        if len(gone) + int(fresh_mask.sum()) < 0.3 * max(len(keys), 1):
            folder = store.data_dir / published(store)["dir"]
            ann = _usearch_index().restore(str(folder / "ann.usearch"), view=False)
            if ann is not None and len(ann) == len(prev.keys):
                if len(gone):
                    ann.remove(gone.astype(np.int64))
                if fresh_mask.any():
                    _add(ann, keys[fresh_mask], vecs[fresh_mask])
                ann.expansion_search = search_breadth(len(keys))
                return ann
    ann = _usearch_index()(
        ndim=vecs.shape[1],
        metric=PARAMS["metric"],
        dtype=PARAMS["dtype"],
        connectivity=PARAMS["connectivity"],
        expansion_add=PARAMS["expansion_add"],
        expansion_search=PARAMS["expansion_search"],
    )
    _add(ann, keys, vecs)
    return ann


def _add(ann, keys: np.ndarray, vecs: np.ndarray) -> None:
    """The stored int8 rows into the graph as they are (usearch would re-quantise floats)."""
    ann.add(keys, np.ascontiguousarray(vecs, dtype=np.int8))


def publish(store: Store) -> VectorIndex | None:
    """Snapshot every vector of the store and publish it for readers (see module doc)."""
    with store.read_snapshot():
        keys, vecs = store.load_vectors()
        meta = {
            "format": FORMAT,
            "params": PARAMS,
            "store_id": store.store_id(),
            "model": store.model,
            "epoch": store.vectors_epoch(),
            "count": int(len(keys)),
        }
    d = store.data_dir
    ptr_path = d / POINTER
    if meta["model"] is None:
        ptr_path.unlink(missing_ok=True)
        return None
    name = f"vectors.{meta['epoch']}.{os.getpid()}"
    tmp = d / (name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    np.save(tmp / "keys.npy", keys, allow_pickle=False)
    np.save(tmp / "vecs.npy", vecs, allow_pickle=False)
    ann = _graph(store, keys, vecs) if len(keys) >= EXACT_BELOW else None
    if ann is not None:
        ann.save(str(tmp / "ann.usearch"))
    final = d / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    meta["dir"] = name
    ptr_tmp = d / f"{POINTER}.{os.getpid()}.tmp"
    ptr_tmp.write_text(json.dumps(meta, indent=1))
    os.replace(ptr_tmp, ptr_path)
    prune_snapshots(d, "vectors.", name)
    return VectorIndex(keys, vecs, meta, ann)

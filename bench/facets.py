"""Facet counts against what their clicks return, and filters that only narrow, on a store.

    python bench/facets.py --data-dir D [--queries N]

For each query (the first N English and Chinese queries of ../shared/data/load-queries.txt
without field syntax) and mode, every category facet listed is clicked (the category filter
added) and the click's `total` compared with the facet's count; prints the mismatches and the
share of queries that had any. Run it with PYTHONPATH pointing at an older checkout to see
that checkout's figures on the same store."""

from __future__ import annotations

import argparse
from pathlib import Path

from paperdex.search import Filters, Searcher
from paperdex.store import Store

QUERIES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "load-queries.txt"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--facets", type=int, default=3, help="facets clicked per query")
    args = ap.parse_args()
    s = Searcher(Store(args.data_dir, readonly=True))
    qs = [q for q in QUERIES.read_text().splitlines() if q.strip() and ":" not in q][: args.queries]
    checked = bad = 0
    bad_queries = set()
    for mode in ("hybrid", "lexical", "dense"):
        for q in qs:
            res = s.search(q, mode=mode, per_page=1, highlight=False)
            for cat, n in res.facets.get("category", [])[: args.facets]:
                got = s.search(q, mode=mode, per_page=1, filters=Filters(category=cat), facets=False).total
                checked += 1
                if got != n:
                    bad += 1
                    bad_queries.add((mode, q))
                    print(f"  {mode:7} {q[:50]!r:52} {cat:8} facet {n:5} click {got:5}")
    print(f"{checked} facet clicks checked, {bad} mismatched; {len(bad_queries)} of {3 * len(qs)} queries affected")


if __name__ == "__main__":
    main()

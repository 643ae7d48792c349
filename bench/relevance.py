"""Fusion sweeps for a query set: each query is searched once per side (lexical, dense) at
depth 200, then every fusion setting is scored offline from those two rankings.

    python bench/relevance.py --data-dir D ../shared/data/eval-zh-tldr-dev-21k.jsonl

Prints Recall@1/10/100 and MRR@10 for lexical, dense and RRF over a grid of dense weights
and k, plus query latency of each side. The figures in docs/relevance.md come from here and
from `paperdex eval`.
"""

from __future__ import annotations

import argparse
import statistics
import time

from paperdex import query as Q
from paperdex import zh
from paperdex.evaluate import load_queries, metrics
from paperdex.search import Searcher, rrf
from paperdex.store import Store

DEPTH = 200


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("queries")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    qs = load_queries(args.queries)[: args.limit]
    s = Searcher(Store(args.data_dir))
    id_of = dict(s.store.conn.execute("SELECT rowid, id FROM papers"))
    runs = []
    t_lex, t_dense = [], []
    for q in qs:
        tree = zh.expand(Q.parse_literal(q["query"]))
        c = Q.compile_query(tree)
        s.prune_common(c)
        t = time.perf_counter()
        lex = [r for r, _ in s.lexical(c, DEPTH)] if c.rank else []
        t_lex.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        dense = [r for r, _ in s.dense(c, DEPTH, s.embed_query(c))]
        t_dense.append((time.perf_counter() - t) * 1000)
        runs.append((lex, dense, set(q["relevant"])))
    lex_ms, dense_ms = statistics.median(t_lex), statistics.median(t_dense)
    print(f"{len(qs)} queries; lexical p50 {lex_ms:.1f} ms, dense p50 {dense_ms:.1f} ms")

    def score(name: str, rank_fn) -> None:
        keys = ("recall@1", "recall@10", "recall@100", "mrr@10")
        tot = dict.fromkeys(keys, 0.0)
        for lex, dense, rel in runs:
            m = metrics([id_of[r] for r in rank_fn(lex, dense)], rel)
            for k in keys:
                tot[k] += m[k]
        print(f"{name:32} " + "  ".join(f"{k} {tot[k] / len(runs):.4f}" for k in keys))

    score("lexical", lambda lex, dense: lex)
    score("dense", lambda lex, dense: dense)
    for k in (10, 30, 60):
        for w in (0.2, 0.35, 0.5, 0.75, 1.0, 1.5):
            for depth in (100,):

                def fused(lex, dense, k=k, w=w, depth=depth):
                    f = rrf([lex[:depth], dense[:depth]], [1.0, w], k=k)
                    return [d for d, _ in sorted(f.items(), key=lambda x: (-x[1], x[0]))]

                score(f"rrf k={k} w_dense={w} depth={depth}", fused)


if __name__ == "__main__":
    main()

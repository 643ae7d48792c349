"""Relevance of every mode on every development query class, and the fusion grid.

    python bench/relevance.py --data-dir D [--grid] [--per-topic]

D is a store of ../shared/data/arxiv-21k.jsonl.gz (with vectors of the default model for
the dense and hybrid rows). Query classes:

* topics-en / topics-zh: the 37 topic queries in English and Chinese (nDCG@10);
* known-zh: one-sentence Chinese summaries, known-item (Recall@1);
* known-en: English sentences, known-item (Recall@1). No English summaries are shared, so a
  sentence from the middle of each abstract (12-40 words, fixed seed) stands in: a harder
  proxy for the dense side than titles, an easier one for the lexical side.

`--grid` searches (k, lexical weight, dense weight) per class, as `search.FUSION` is set.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import random
import re
from pathlib import Path

from paperdex.evaluate import evaluate, load_queries, metrics
from paperdex.search import Searcher, rrf
from paperdex.store import Store

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def sentence_queries(n: int = 400, seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    with gzip.open(SHARED / "arxiv-21k.jsonl.gz", "rt") as f:
        recs = [json.loads(line) for line in f]
    for r in rnd.sample(recs, n * 2):
        sents = [s for s in re.split(r"(?<=[.!?])\s+", r["abstract"])[1:] if 12 <= len(s.split()) <= 40]
        if sents:
            out.append({"query": rnd.choice(sents), "relevant": [r["id"]]})
        if len(out) == n:
            break
    return out


def classes() -> dict[str, tuple[list[dict], str]]:
    return {
        "topics-en": (load_queries(SHARED / "eval-topics-21k-en-dev.jsonl"), "ndcg@10"),
        "topics-zh": (load_queries(SHARED / "eval-topics-21k-zh-dev.jsonl"), "ndcg@10"),
        "known-zh": (load_queries(SHARED / "eval-zh-tldr-dev-21k.jsonl"), "recall@1"),
        "known-en": (sentence_queries(), "recall@1"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--per-topic", action="store_true")
    ap.add_argument("--only", nargs="*", help="class names")
    args = ap.parse_args()
    s = Searcher(Store(args.data_dir, readonly=True))
    sets = {k: v for k, v in classes().items() if not args.only or k in args.only}
    print(f"{'class':10} {'metric':9} {'lexical':>8} {'dense':>8} {'hybrid':>8}")
    for name, (qs, metric) in sets.items():
        row = [evaluate(s, qs, mode=m)[metric] for m in ("lexical", "dense", "hybrid")]
        print(f"{name:10} {metric:9} " + " ".join(f"{x:8.4f}" for x in row), flush=True)
    if args.per_topic:
        for name in ("topics-en", "topics-zh"):
            if name not in sets:
                continue
            for q in sets[name][0]:
                got = [evaluate(s, [q], mode=m)["ndcg@10"] for m in ("lexical", "dense", "hybrid")]
                print(f"  {name} {q['query'][:40]:40} " + " ".join(f"{x:.2f}" for x in got))
    if args.grid:
        # each side searched once per query; the fusion is then replayed for every setting
        for name, (qs, metric) in sets.items():
            runs = []
            for q in qs:
                lex = s.search(q["query"], mode="lexical", per_page=100, facets=False, literal=True, highlight=False)
                den = s.search(q["query"], mode="dense", per_page=100, facets=False, literal=True, highlight=False)
                runs.append(([h.paper.id for h in lex.hits], [h.paper.id for h in den.hits], set(q["relevant"])))
            scores = {}
            for k, wd in itertools.product((5, 10, 30, 60, 100), (0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5)):
                vals = []
                for lex, den, rel in runs:
                    fused = rrf([lex, den], [1.0, wd], k=k)
                    ranked = sorted(fused, key=lambda d: -fused[d])
                    vals.append(metrics(ranked, rel)[metric])
                scores[(k, wd)] = sum(vals) / len(vals)
            best = max(scores.items(), key=lambda x: x[1])
            print(f"grid {name}: best k={best[0][0]} dense={best[0][1]} {metric} {best[1]:.4f}")
            for (k, wd), v in sorted(scores.items()):
                print(f"  {name} k={k:3} dense={wd:4}: {v:.4f}")


if __name__ == "__main__":
    main()

"""Effectiveness metrics for known-item and ad-hoc query sets (binary relevance)."""

from __future__ import annotations

import json
import math
from pathlib import Path

K_MAX = 100


class EvalError(ValueError):
    pass


def load_queries(path: str | Path) -> list[dict]:
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                msg = e.msg.removesuffix(" at")  # json's message ends "... at", the position in its fields
                raise EvalError(f"{path}:{lineno}: invalid JSON at column {e.colno}: {msg}") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("query"), str) or not rec.get("relevant"):
                raise EvalError(f'{path}:{lineno}: expected {{"query": str, "relevant": [ids]}}')
            out.append(rec)
    if not out:
        raise EvalError(f"{path}: no queries")
    return out


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    """Per-query Recall@1/10/100, reciprocal rank within 10, nDCG@10."""
    hits = [1 if d in relevant else 0 for d in ranked[:K_MAX]]
    n_rel = len(relevant)
    rr = next((1.0 / (i + 1) for i, h in enumerate(hits[:10]) if h), 0.0)
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits[:10]))
    idcg = sum(1 / math.log2(i + 2) for i in range(min(n_rel, 10)))
    return {
        "recall@1": sum(hits[:1]) / n_rel,
        "recall@10": sum(hits[:10]) / n_rel,
        "recall@100": sum(hits[:100]) / n_rel,
        "mrr@10": rr,
        "ndcg@10": dcg / idcg if idcg else 0.0,
    }


def evaluate(searcher, queries: list[dict], mode: str = "hybrid") -> dict:
    """Mean metrics over the queries, searched as plain text (`literal`: they are prose)."""
    runs = (searcher.search(q["query"], mode=mode, per_page=K_MAX, facets=False, literal=True) for q in queries)
    per_query = [metrics([h.paper.id for h in r.hits], set(q["relevant"])) for q, r in zip(queries, runs, strict=True)]
    return {k: round(sum(m[k] for m in per_query) / len(queries), 4) for k in per_query[0]} | {"queries": len(queries)}

"""The guard for speed work on the engine: the same queries give the same results, exactly.

    python bench/identical.py dump  OUT.jsonl [--store DIR] [--queries 40]
    python bench/identical.py check OUT.jsonl [--store DIR]

`dump` runs a few hundred development queries of every kind (full titles, their first three
words, sentences from abstracts, English and Chinese topics, Chinese known-item summaries, the
load test's fielded and mixed queries) in every mode (lexical, dense, hybrid), each without a
filter, with the category filter (cs.RO), with a date range, and typed with `cat:` in the query,
and writes per search the first 100 hits (id, fused score, lexical rank and score, dense rank
and cosine, all as repr), `total`, `ranked`, the notices and the facets. The query vectors are
computed once and saved beside the dump (OUT.npz), so `check` gives the engine the same
vectors and compares nothing but the engine: it runs the same searches and reports every
difference. A speed change that is meant to keep today's ranking must report 0.

Why a dump and not a test: the differences that matter show at 63k papers (a cap that is exact
on a toy corpus and not on a real one), and the store is too big for the unit tests.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

from paperdex.search import Filters, Searcher, plan
from paperdex.store import Store

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
STORE = "/tmp/recbench/full"
MODES = ("lexical", "dense", "hybrid")
TOP = 100


def queries(n: int) -> list[tuple[str, str]]:
    """(kind, query) with fixed seeds: n of each kind."""
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt") as f:
        recs = [json.loads(line) for line in f]
    rnd = random.Random(7)
    titles = [r["title"] for r in rnd.sample(recs, n)]
    out = [("title", t) for t in titles]
    out += [("3 words", " ".join(t.split()[:3])) for t in titles]
    sents: list[str] = []
    for r in rnd.sample(recs, 4 * n):
        cand = [x for x in re.split(r"(?<=[.!?])\s+", r["abstract"])[1:] if 12 <= len(x.split()) <= 40]
        if cand:
            sents.append(rnd.choice(cand))
        if len(sents) == n:
            break
    out += [("sentence", s) for s in sents]
    for name, kind in (("eval-topics-63k-en-dev.jsonl", "topic en"), ("eval-topics-63k-zh-dev.jsonl", "topic zh")):
        qs = [json.loads(line)["query"] for line in (SHARED / name).read_text().splitlines() if line.strip()]
        out += [(kind, q) for q in qs[:n]]
    zh = [json.loads(line)["query"] for line in (SHARED / "eval-zh-tldr-dev.jsonl").read_text().splitlines()]
    out += [("zh summary", q) for q in rnd.sample(zh, n)]
    load = (SHARED / "load-queries.txt").read_text().splitlines()
    fielded = [q for q in load if re.search(r"\b(ti|au|cat|date|abs):", q)]
    out += [("fielded", q) for q in rnd.sample(fielded, min(n, len(fielded)))]
    out += [("load", q) for q in rnd.sample(load, n)]
    return out


def searches(qs: list[tuple[str, str]]):
    """(key, query, mode, filters): every query in every mode, unfiltered and filtered."""
    for kind, q in qs:
        for mode in MODES:
            yield (kind, q, mode, ""), q, mode, None
            yield (kind, q, mode, "cat"), q, mode, Filters(category="cs.RO")
            yield (kind, q, mode, "date"), q, mode, Filters(date_from="2025-09", date_to="2026-02")
            if kind in ("3 words", "topic en", "sentence"):
                yield (kind, q, mode, "typed"), f"{q} cat:cs.CV", mode, None


def record(s: Searcher, q: str, mode: str, filters: Filters | None, qv: np.ndarray | None) -> dict:
    try:
        r = s.search(q, mode=mode, per_page=TOP, filters=filters, query_vector=qv, highlight=False)
    except Exception as e:  # a refused query is a result too
        return {"error": f"{type(e).__name__}: {e}"}
    return {
        "total": r.total,
        "ranked": r.ranked,
        "mode": r.mode,
        "notices": r.notices,
        "facets": r.facets,
        "hits": [
            [h.paper.id, repr(h.score), h.lexical_rank, repr(h.lexical_score), h.dense_rank, repr(h.dense_score)]
            for h in r.hits
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("action", choices=("dump", "check"))
    ap.add_argument("out")
    ap.add_argument("--store", default=STORE)
    ap.add_argument("--queries", type=int, default=40, help="queries of each kind (dump)")
    ap.add_argument("--notices-apart", action="store_true", help="check: count notice-only differences apart")
    args = ap.parse_args()
    out = Path(args.out)
    s = Searcher(Store(args.store))
    if args.action == "dump":
        qs = queries(args.queries)
        texts = sorted({plan(q).dense_text for _, q in qs} | {plan(f"{q} cat:cs.CV").dense_text for _, q in qs})
        emb = s.embedder()
        vecs = {t: emb.embed_query(t) for t in texts if t}
        np.savez(out.with_suffix(".npz"), texts=np.array(list(vecs), dtype=object), vecs=np.array(list(vecs.values())))
        out.with_suffix(".queries.json").write_text(json.dumps(qs, ensure_ascii=False))
    else:
        qs = [tuple(x) for x in json.loads(out.with_suffix(".queries.json").read_text())]
        z = np.load(out.with_suffix(".npz"), allow_pickle=True)
        vecs = dict(zip(z["texts"].tolist(), z["vecs"], strict=True))
        want = {}
        with open(out) as f:
            for line in f:
                d = json.loads(line)
                want[tuple(d["key"])] = d["got"]
    n = diffs = notice_only = 0
    t0 = time.perf_counter()
    f = open(out, "w") if args.action == "dump" else None
    for key, q, mode, filters in searches(qs):
        qv = vecs.get(plan(q).dense_text)
        got = record(s, q, mode, filters, qv)
        n += 1
        if f is not None:
            f.write(json.dumps({"key": key, "got": got}, ensure_ascii=False) + "\n")
        elif (now := json.loads(json.dumps(got))) != (was := want.get(tuple(key))):
            if args.notices_apart and was is not None and {**now, "notices": 0} == {**was, "notices": 0}:
                notice_only += 1
                continue
            diffs += 1
            if diffs <= 10:
                print(f"DIFFERENT: {key}", file=sys.stderr)
                print(f"  was {json.dumps(want.get(tuple(key)), ensure_ascii=False)[:600]}", file=sys.stderr)
                print(f"  now {json.dumps(got, ensure_ascii=False)[:600]}", file=sys.stderr)
    if f is not None:
        f.close()
    took = time.perf_counter() - t0
    apart = f" (and {notice_only} in the notices alone)" if args.notices_apart else ""
    head = f"{args.action}: {n} searches ({len(qs)} queries x modes x filters) in {took:.0f} s"
    print(f"{head}; differences: {diffs}{apart}")
    if diffs:
        sys.exit(1)


if __name__ == "__main__":
    main()

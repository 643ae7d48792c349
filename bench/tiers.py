"""The two tiers of a results list, measured on a store (docs/search.md, "Tiers").

    python bench/tiers.py counts --store /tmp/recbench/full        # ~30 typed queries: count == cards per tier
    python bench/tiers.py relevance --store /tmp/recbench/full     # fused order vs matched first, per class

`counts` runs queries as a researcher types them (two words, a question, Chinese, mixed, an id,
nonsense; with and without a `cat:` facet; relevance and Newest) and checks, on page 1, the
page where the tiers meet and the last page, that each hit's tier is the one its place in the
list gives (the first `total` papers "match", the rest "related"; one "ranked" list for a
query read as a question), so every tier's count equals the cards it lists; with at most 12
pages it reads every page and counts the cards. `relevance` runs every development class
twice in one process, the fused order (every query one list) and the matched set first (every
query two tiers), and prints per class and per reading (`engine.read_as`) the mean metric of
each, their difference with its paired standard error, and the rule's (`engine.ONE_TIER`).
The store is opened read-only.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import defaultdict

import judge  # bench/judge.py
import relevance  # bench/relevance.py

from paperdex.search import engine as S
from paperdex.search.evaluate import load_queries, metrics
from paperdex.store import Store

QUERIES = [
    "speculative decoding",
    "speculative decoding cat:cs.IT",
    "weight decay",
    "weight decay cat:cs.CV",
    "diffusion models for image editing",
    "diffusion transformer video cat:cs.RO",
    "graph neural networks cat:math.OC",
    "kv cache compression",
    "how can large language models use less memory during inference",
    "how can large language models use less memory during inference cat:cs.CL",
    "why does reinforcement learning with verifiable rewards improve reasoning",
    "training a small network to copy the behaviour of a much bigger one",
    "storing a model's numbers with fewer bits so it fits and runs on a phone cat:cs.LG",
    "大语言模型 推理",
    "扩散模型 图像编辑 cat:cs.CV",
    "如何减少大语言模型的幻觉",
    "模型量化",
    "LoRA 微调 方法",
    "Mamba 视觉骨干网络 cat:cs.CV",
    "YOLO 小目标检测",
    "2505.13738",
    "arXiv:2503.13646",
    "qwxzv plorbnik",
    "transformerz attention",
    'ti:"reinforcement learning" cat:cs.LG',
    "abs:(robot OR robotic) date:2025",
    "protein structure prediction cat:q-bio.BM",
    "polar codes decoding",
    "tokamak divertor",
    "federated learning privacy cat:cs.CR",
]
NEWEST = ["speculative decoding cat:cs.IT", "大语言模型 推理", "weight decay"]
FULL_PAGES = 12  # queries with at most this many pages are read page by page


def check_page(res: S.Result) -> list[str]:
    """What is wrong with one page: a hit whose tier is not the one its place gives, or a page
    shorter or longer than the list leaves for it."""
    errs = []
    start = (res.page - 1) * res.per_page
    want = max(0, min(res.per_page, min(res.listed, S.MAX_WINDOW) - start))
    if len(res.hits) != want and res.mode != "lookup":
        errs.append(f"page {res.page}: {len(res.hits)} cards, the list leaves {want}")
    for i, h in enumerate(res.hits, start=start):
        expect = "ranked" if res.one_list else "match" if i < res.total else "related"
        if h.tier != expect:
            errs.append(f"page {res.page}: card {i + 1} is {h.tier}, its place says {expect}")
    return errs


def counts(s: S.Searcher) -> int:
    bad = 0
    print(f"{'query':72} {'sort':9} {'tiers':26} {'pages':>5} {'checked':>9} ok", flush=True)
    for q, sort in [(q, "relevance") for q in QUERIES] + [(q, "newest") for q in NEWEST]:
        first = s.search(q, sort=sort, facets=False)
        pages = first.pages
        meet = first.total // first.per_page + 1  # where the first related card is
        visit = range(1, pages + 1) if pages <= FULL_PAGES else sorted({1, min(meet, pages), pages})
        errs, cards = check_page(first), defaultdict(int)
        for h in first.hits:
            cards[h.tier] += 1
        for n in visit:
            if n == 1:
                continue
            res = s.search(q, sort=sort, page=n, facets=False)
            errs += check_page(res)
            for h in res.hits:
                cards[h.tier] += 1
        if pages <= FULL_PAGES and dict(first.tiers) != {t: cards.get(t, 0) for t, _ in first.tiers}:
            errs.append(f"cards per tier {dict(cards)} != counts {first.tiers}")
        tiers = " + ".join(f"{n} {t}" for t, n in first.tiers)
        print(f"{q[:72]:72} {sort:9} {tiers:26} {pages:5} {len(visit):>9} {'ok' if not errs else 'FAIL'}")
        for e in errs:
            print("    " + e)
        bad += bool(errs)
    print(f"{bad} of {len(QUERIES) + len(NEWEST)} failed")
    return bad


def _shared() -> None:
    """relevance.py finds the shared data beside its checkout; from a worktree it is judge.py's."""
    relevance.SHARED = judge.CORPUS.parent
    relevance.CORPUS = {k: relevance.SHARED / v.name for k, v in relevance.CORPUS.items()}


def classes() -> dict[str, list[tuple[str, object, str]]]:
    """class -> [(query, its judgement, metric)]: the graded questions (bench/questions/ and
    its dev-en, dev-zh, dev-kw: judge.SETS), the 63k topics and 200 known items of each language."""
    _shared()
    out: dict[str, list[tuple[str, object, str]]] = defaultdict(list)
    for sub in judge.SETS:
        d = judge.QDIR / sub
        grades: dict[str, dict[str, int]] = {}
        for r in judge.read_jsonl(d / "qrels.jsonl"):
            grades.setdefault(r["query"], {})[r["id"]] = int(r["grade"])
        for r in judge.read_jsonl(d / "queries.jsonl"):
            out[r["class"]].append((r["query"], grades.get(r["query"], {}), "graded"))
    for lang in ("en", "zh"):
        for r in load_queries(relevance.SHARED / f"eval-topics-63k-{lang}-dev.jsonl"):
            out[f"topics-{lang}"].append((r["query"], set(r["relevant"]), "ndcg@10"))
    known_zh = load_queries(relevance.SHARED / "eval-zh-tldr-dev.jsonl")
    out["known-zh"] = [(r["query"], set(r["relevant"]), "recall@1") for r in random.Random(11).sample(known_zh, 200)]
    out["known-en"] = [(r["query"], set(r["relevant"]), "recall@1") for r in relevance.sentence_queries("63k", 200)]
    return out


def score(ids: list[str], judged, metric: str) -> float:
    return judge.ndcg(ids, judged) if metric == "graded" else metrics(ids, judged)[metric]


def run(s: S.Searcher, q: str, matched_first: bool) -> tuple[list[str], str]:
    """The query's first 10 as two tiers (`matched_first`) or in the fused order, and what
    `read_as` reads it as."""
    S.ONE_TIER, S.matched_first = frozenset(), MATCHED_FIRST if matched_first else _fused
    res = s.search(q, per_page=10, facets=False, literal=True, highlight=False)
    return [h.paper.id for h in res.hits], res.read_as or res.mode


MATCHED_FIRST = S.matched_first


def _fused(fused, order, info, M, want, listed):
    return order, info  # the fused order, not split


def mean_se(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd / math.sqrt(len(xs))


def relevance_table(s: S.Searcher) -> None:
    rule = S.ONE_TIER
    print(f"{'class':18} {'reading':9} {'n':>4} {'metric':9} {'fused':>7} {'M first':>7} {'diff':>16} {'rule':>7}")
    for name, qs in classes().items():
        t0, rows = time.time(), defaultdict(list)
        for q, judged, metric in qs:
            before, reading = run(s, q, False)
            after, _ = run(s, q, True)
            a, b = score(before, judged, metric), score(after, judged, metric)
            for key in ("all", reading):
                rows[key].append((a, b, a if reading in rule else b))
        for key, got in sorted(rows.items(), key=lambda kv: kv[0] != "all"):
            fused, first, ruled = (sum(r[i] for r in got) / len(got) for i in range(3))
            d, se = mean_se([r[1] - r[0] for r in got])
            took = f"  [{time.time() - t0:.0f} s]" if key == "all" else ""
            print(f"{name:18} {key:9} {len(got):4} {qs[0][2]:9} {fused:7.4f} {first:7.4f}", end="")
            print(f" {d:+8.4f} ±{se:.4f} {ruled:7.4f}{took}", flush=True)
    S.ONE_TIER, S.matched_first = rule, MATCHED_FIRST


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["counts", "relevance"])
    ap.add_argument("--store", required=True, help="a store directory (opened read-only)")
    args = ap.parse_args()
    s = S.Searcher(Store(args.store, readonly=True))
    if args.what == "counts":
        sys.exit(1 if counts(s) else 0)
    relevance_table(s)


if __name__ == "__main__":
    main()

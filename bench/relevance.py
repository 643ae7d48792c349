"""Relevance of every mode on every development query class, beside textbook baselines in the
same run, and the fusion grid.

    python bench/relevance.py --store claims=DIR --store 63k=DIR [--store 21k=DIR] [--grid]

Each store holds one corpus (with vectors for the dense and hybrid rows):

* ``claims``: ../shared/data/claims-corpus.jsonl.gz (SciFact, 5,183 abstracts); class
  ``claims``: its 809 training claims (nDCG@10, and recall@100 in brackets).
* ``63k``: ../shared/data/arxiv-2025-2026.jsonl.gz; classes ``topics-63k-en`` / ``-zh`` (the
  37 development topics, nDCG@10), ``known-zh-63k`` (500 of the one-sentence Chinese
  summaries, fixed seed; Recall@1), ``known-en-63k`` (400 sentences from the middle of
  abstracts, fixed seed; Recall@1), and the graded questions of bench/questions/ and its
  dev-en/, dev-zh/, dev-kw/ (``q-*``, graded nDCG@10; unjudged papers count as not relevant)
  when that folder exists.
* ``21k``: ../shared/data/arxiv-21k.jsonl.gz; the same classes on the sub-corpus, the graded
  questions (``q21-*``) judged on the grades of the papers it holds (a question none of whose
  relevant papers it holds is left out).

Beside paperdex's three modes, every run prints two textbook systems on the same queries:
``bm25s`` (BM25, k1 1.5, b 0.75, English stopwords and Porter stemmer, title + abstract) and
``rrf`` (reciprocal-rank fusion, k 60, equal weights, of bm25s's top 100 and paperdex's dense
top 100). `--grid` replays the hybrid fusion for each dense weight per class (the pool of
candidates does not depend on the weight, so a replay is the full run).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import time
from functools import lru_cache
from pathlib import Path

import judge  # bench/judge.py: the graded questions' metric
import numpy as np

from paperdex.search import engine as S
from paperdex.search import masks
from paperdex.search.evaluate import load_queries, metrics
from paperdex.store import Store

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CORPUS = {
    "claims": SHARED / "claims-corpus.jsonl.gz",
    "63k": SHARED / "arxiv-2025-2026.jsonl.gz",
    "21k": SHARED / "arxiv-21k.jsonl.gz",
}
GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


@lru_cache(maxsize=4)
def corpus(kind: str) -> list[dict]:
    with gzip.open(CORPUS[kind], "rt") as f:
        return [json.loads(line) for line in f]


def sentence_queries(kind: str, n: int = 400, seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for r in rnd.sample(corpus(kind), n * 2):
        sents = [s for s in re.split(r"(?<=[.!?])\s+", r["abstract"])[1:] if 12 <= len(s.split()) <= 40]
        if sents:
            out.append({"query": rnd.choice(sents), "relevant": [r["id"]]})
        if len(out) == n:
            break
    return out


def graded_questions(only: set[str] | None = None) -> dict[str, list[dict]]:
    """The graded questions of bench/questions/ and its dev-en/, dev-zh/, dev-kw/ by class; with `only`
    (a sub-corpus's ids), their grades of those papers, and the questions that keep a relevant
    one: the 21k store is judged on what it holds."""
    out: dict[str, list[dict]] = {}
    for sub in judge.SETS:
        d = ROOT / "bench" / "questions" / sub
        if not (d / "queries.jsonl").exists() or not (d / "qrels.jsonl").exists():
            continue
        grades: dict[str, dict[str, int]] = {}
        for r in judge.read_jsonl(d / "qrels.jsonl"):
            if only is None or r["id"] in only:
                grades.setdefault(r["query"], {})[r["id"]] = int(r["grade"])
        for r in judge.read_jsonl(d / "queries.jsonl"):
            g = grades.get(r["query"], {})
            if any(v > 0 for v in g.values()):
                out.setdefault("q-" + r["class"], []).append({"query": r["query"], "grades": g})
    return out


def classes(kinds: list[str]) -> dict[str, tuple[str, list[dict], str]]:
    """name -> (store kind, queries, metric)."""
    out: dict[str, tuple[str, list[dict], str]] = {}
    if "claims" in kinds:
        out["claims"] = ("claims", load_queries(SHARED / "eval-claims-train.jsonl"), "ndcg@10")
    for k in ("63k", "21k"):
        if k not in kinds:
            continue
        for lang in ("en", "zh"):
            out[f"topics-{k}-{lang}"] = (k, load_queries(SHARED / f"eval-topics-{k}-{lang}-dev.jsonl"), "ndcg@10")
        known = load_queries(SHARED / ("eval-zh-tldr-dev.jsonl" if k == "63k" else "eval-zh-tldr-dev-21k.jsonl"))
        out[f"known-zh-{k}"] = (k, random.Random(11).sample(known, min(500, len(known))), "recall@1")
        out[f"known-en-{k}"] = (k, sentence_queries(k), "recall@1")
    if "63k" in kinds:
        for name, qs in graded_questions().items():
            out[name] = ("63k", qs, "graded")
    if "21k" in kinds:
        for name, qs in graded_questions({d["id"] for d in corpus("21k")}).items():
            out[name.replace("q-", "q21-", 1)] = ("21k", qs, "graded")
    return out


def graded_ndcg(ranked: list[str], grades: dict[str, int], k: int = 10) -> float:
    """judge.py's graded nDCG@10 (linear gain, trec_eval's): one rule for both scripts."""
    return judge.ndcg(ranked, grades, k)


def score(ranked: list[str], q: dict, metric: str) -> tuple[float, float]:
    """(the class's metric, recall@100 where it means something)."""
    if metric == "graded":
        return graded_ndcg(ranked, q["grades"]), 0.0
    m = metrics(ranked, set(q["relevant"]))
    return m[metric], m["recall@100"]


# --- the textbook baselines ----------------------------------------------------------------


class BM25s:
    """bm25s as its README builds it, over title + abstract."""

    def __init__(self, kind: str) -> None:
        import bm25s
        import Stemmer

        self.bm25s, self.stemmer = bm25s, Stemmer.Stemmer("english")
        docs = corpus(kind)
        self.ids = [d["id"] for d in docs]
        toks = bm25s.tokenize(
            [f"{d['title']}. {d['abstract']}" for d in docs], stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        self.model = bm25s.BM25(k1=1.5, b=0.75)
        self.model.index(toks, show_progress=False)

    def search(self, q: str, k: int = 100) -> list[str]:
        toks = self.bm25s.tokenize([q], stopwords="en", stemmer=self.stemmer, show_progress=False)
        if not toks.vocab:
            return []
        docs, scores = self.model.retrieve(toks, k=k, show_progress=False)
        return [self.ids[i] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]


def rrf(a: list[str], b: list[str], k: int = 60) -> list[str]:
    s: dict[str, float] = {}
    for ranking in (a, b):
        for r, d in enumerate(ranking, start=1):
            s[d] = s.get(d, 0.0) + 1 / (k + r)
    return sorted(s, key=lambda d: -s[d])


# --- paperdex ------------------------------------------------------------------------------


class Engine:
    """paperdex's searcher with each query embedded once (the same vector for every mode)."""

    def __init__(self, data_dir: str) -> None:
        self.s = S.Searcher(Store(data_dir, readonly=True))
        self.vi = self.s.index
        self.model = self.vi.model if self.vi is not None else None
        self._qv: dict[str, np.ndarray] = {}

    def qv(self, q: str) -> np.ndarray | None:
        text = S.plan(q, literal=True).dense_text
        if self.model is None or not text:
            return None
        if text not in self._qv:
            self._qv[text] = self.s.embed_query(text, self.model)
        return self._qv[text]

    def run(self, q: str, mode: str) -> list[str]:
        res = self.s.search(
            q, mode=mode, per_page=100, facets=False, literal=True, highlight=False, query_vector=self.qv(q)
        )
        return [h.paper.id for h in res.hits]

    def dense_top(self, q: str, k: int = 100) -> list[str]:
        qv = self.qv(q)
        if qv is None:
            return []
        got = self.vi.search(qv, k)
        papers = self.s.store.get_many([r for r, _ in got])
        return [papers[r].id for r, _ in got if r in papers]

    def replay(self, q: str, weights) -> dict[float, list[str]]:
        """The hybrid order for each dense weight, from one pass over both sides."""
        p = S.plan(q, mode="hybrid", per_page=100, literal=True)
        ix = self.s.lex
        ev = masks.Eval(ix, self.s.corpus)
        C = masks.constraints(ev, p.hard)
        words = masks.find_words(ev, p, C, [])
        dense = self.s._dense_side(ix, p, C, self.qv(q), [], bool(words.A.any()))
        M = S.matched_set(ix.n, words, dense, p)
        out = {}
        for w in weights:
            order, _, _ = S.relevance_order(ix, M, words, dense, w, 100)
            rowids = [int(ix.rowids[d]) for d in order]
            papers = self.s.store.get_many(rowids)
            out[w] = [papers[r].id for r in rowids if r in papers]
        return out


def fold_spread(scores: list[float], folds: int, seeds: int = 3) -> float:
    """The standard deviation of a system's per-fold means over `folds` folds of the class's
    queries, dealt after three shuffles (the spread bench/cv.py reports for a held-out rule;
    a system with nothing fitted has no held-out side, so this is its spread alone)."""
    means = []
    for seed in range(seeds):
        order = list(range(len(scores)))
        random.Random(seed).shuffle(order)
        for k in range(folds):
            part = [scores[i] for i in order[k::folds]]
            if part:
                means.append(sum(part) / len(part))
    return float(np.std(means)) if means else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", action="append", required=True, help="KIND=DIR, KIND one of claims, 63k, 21k")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--only", nargs="*", help="class names")
    ap.add_argument("--json", help="write the table here too")
    ap.add_argument("--folds", type=int, default=0, help="also each system's spread over K query folds (3 shuffles)")
    ap.add_argument("--weight", action="append", default=[], help="LANG,FORM=W: a dense weight of search.FUSION")
    args = ap.parse_args()
    for spec in args.weight:
        key, w = spec.split("=")
        S.FUSION[tuple(key.split(","))] = float(w)  # type: ignore[index]

    stores = dict(s.split("=", 1) for s in args.store)
    engines = {k: Engine(v) for k, v in stores.items()}
    sets = {k: v for k, v in classes(list(stores)).items() if not args.only or k in args.only}
    systems = ["lexical", "dense", "hybrid"] + ([] if args.no_baselines else ["bm25s", "rrf"])
    print(f"{'class':16} {'n':>4} {'metric':9} " + " ".join(f"{s:>15}" for s in systems), flush=True)
    table = {}
    for name, (kind, qs, metric) in sets.items():
        e = engines[kind]
        base = None if args.no_baselines else BM25s(kind)
        sums = {s: [0.0, 0.0] for s in systems}
        per_query: dict[str, list[float]] = {s: [] for s in systems}
        t0 = time.time()
        for q in qs:
            runs = {m: e.run(q["query"], m) for m in ("lexical", "dense", "hybrid")}
            if base is not None:
                runs["bm25s"] = base.search(q["query"])
                runs["rrf"] = rrf(runs["bm25s"], e.dense_top(q["query"]))
            for sname in systems:
                a, b = score(runs[sname], q, metric)
                sums[sname][0] += a
                sums[sname][1] += b
                per_query[sname].append(a)
        row = {s: (v[0] / len(qs), v[1] / len(qs)) for s, v in sums.items()}
        table[name] = {s: round(v[0], 4) for s, v in row.items()}
        cells = [f"{v[0]:.4f}" + (f" ({v[1]:.3f})" if name == "claims" else "") for v in row.values()]
        print(
            f"{name:16} {len(qs):4} {metric:9} "
            + " ".join(f"{c:>15}" for c in cells)
            + f"  [{time.time() - t0:.0f} s]",
            flush=True,
        )
        if args.folds:
            spread = {s: fold_spread(v, args.folds) for s, v in per_query.items()}
            table[name] |= {f"{s} fold sd": round(v, 4) for s, v in spread.items()}
            print(f"  {args.folds}-fold sd {name}: " + "  ".join(f"{s} {v:.4f}" for s, v in spread.items()), flush=True)
        if args.grid:
            acc = dict.fromkeys(GRID, 0.0)
            for q in qs:
                for w, ranked in e.replay(q["query"], GRID).items():
                    acc[w] += score(ranked, q, metric)[0]
            print(f"  grid {name}: " + "  ".join(f"{w}:{v / len(qs):.4f}" for w, v in acc.items()), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()

"""Pool, judge and score researchers' questions over the 63k arXiv corpus.

The silver yardsticks (topics, known items) reward word matching and are saturated; this set is
graded by reading, so a ranking change is measured on what a researcher types. Its labels are
only as complete as its pool: every system that is scored should first be pooled (``pool
--system``) and its new documents graded, or its unjudged hits count against it.

    python bench/judge.py pool --paperdex DIR                  # the five reference systems
    python bench/judge.py run --mode hybrid --out FILE         # a run of the working tree's paperdex
    python bench/judge.py pool --system NAME --run FILE        # add another run to the pool
    python bench/judge.py show [--query N]                     # ungraded pooled documents, blind
    python bench/judge.py grade N ID=G [ID=G ...]              # record grades for query N
    python bench/judge.py score --run FILE [--run FILE ...]    # graded nDCG@10 per class
    python bench/judge.py table [--system NAME ...]            # pooled systems, per class
    python bench/judge.py --set dev-en show                    # any command, on another set

A run file is JSONL of {"query": ..., "ids": [...]} in rank order. The pool and the runs live in
bench/out/ (regenerable); the queries and grades live in bench/questions/ (committed).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QDIR = ROOT / "bench" / "questions"
OUT = ROOT / "bench" / "out"
# every graded question set: the first 42 questions, then the development sets beside them
SETS = ("", "dev-en", "dev-zh", "dev-kw")
QUERIES = QDIR / "queries.jsonl"
QRELS = QDIR / "qrels.jsonl"
POOL = OUT / "pool.jsonl"
RUNS = OUT / "runs"
CORPUS = Path("/work/shared/data/arxiv-2025-2026.jsonl.gz")
STORE = OUT / "s63k"
BM25_DIR = OUT / "bm25s-63k"
DEPTH = 10  # pooled and scored depth
FETCH = 100  # depth of each first stage fed to RRF
CLASSES = ["en-question", "zh-question", "mixed", "en-keywords"]  # the 36 of the brief: "all" is over these
# Questions worded without their field's name for the thing ("answer faster without changing the
# output", not "speculative decoding"), reported apart so they never move the 36's figures.
EXTRA = ["en-question-plain"]
REFERENCE = ["paperdex-hybrid", "paperdex-lexical", "paperdex-dense", "bm25s", "rrf-bm25s-dense"]


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{n}: not JSON ({e})")
    return out


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(path)


def queries() -> list[dict]:
    qs = read_jsonl(QUERIES)
    for q in qs:
        if q.get("class") not in CLASSES + EXTRA:
            sys.exit(f"query {q.get('query')!r}: class must be one of {CLASSES + EXTRA}")
    return qs


def corpus() -> tuple[list[str], dict[str, dict]]:
    ids, docs = [], {}
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ids.append(r["id"])
            docs[r["id"]] = {"title": r["title"], "abstract": r["abstract"]}
    return ids, docs


# --- the reference systems ------------------------------------------------------------------


def bm25s_runs(qs: list[dict], docs: tuple[list[str], dict[str, dict]] | None) -> list[list[str]]:
    """Textbook BM25 (k1 1.5, b 0.75, English stopwords, Snowball English stemmer) over
    title + ". " + abstract; the index is built once and cached in bench/out/bm25s-63k."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    if (BM25_DIR / "ids.json").exists():
        ret = bm25s.BM25.load(str(BM25_DIR))
        ids = json.loads((BM25_DIR / "ids.json").read_text())
    else:
        ids, d = docs or corpus()
        texts = [d[i]["title"] + ". " + d[i]["abstract"] for i in ids]
        toks = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
        ret = bm25s.BM25(k1=1.5, b=0.75)
        ret.index(toks, show_progress=False)
        ret.save(str(BM25_DIR))
        (BM25_DIR / "ids.json").write_text(json.dumps(ids))
    out = []
    for q in qs:
        # Queries are tokenised as typed: a Chinese question is one token bm25s does not know.
        qt = bm25s.tokenize([q["query"]], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)[0]
        if not any(t in ret.vocab_dict for t in qt):
            out.append([])
            continue
        res, scores = ret.retrieve([qt], k=FETCH, show_progress=False)
        out.append([ids[int(j)] for j, s in zip(res[0], scores[0], strict=True) if s > 0])
    return out


def paperdex_runs(qs: list[dict], mode: str, searcher) -> list[list[str]]:
    out = []
    for q in qs:
        r = searcher.search(q["query"], mode=mode, per_page=FETCH, facets=False, literal=True, highlight=False)
        out.append([h.paper.id for h in r.hits])
    return out


def rrf(runs: list[list[str]], k: int = 60) -> list[str]:
    score: dict[str, float] = defaultdict(float)
    for run in runs:
        for rank, pid in enumerate(run, 1):
            score[pid] += 1.0 / (k + rank)
    return sorted(score, key=lambda p: (-score[p], p))


def save_run(name: str, qs: list[dict], ranked: list[list[str]]) -> None:
    write_jsonl(RUNS / f"{name}.jsonl", [{"query": q["query"], "ids": ids} for q, ids in zip(qs, ranked, strict=True)])


def load_run(path: Path) -> dict[str, list[str]]:
    return {r["query"]: list(r["ids"]) for r in read_jsonl(path)}


def add_to_pool(name: str, run: dict[str, list[str]], qs: list[dict]) -> int:
    """Add a run's top DEPTH to the pool; returns how many (query, id) pairs are new."""
    pool = read_jsonl(POOL)
    at = {(p["query"], p["id"]): p for p in pool}
    new = 0
    for q in qs:
        for pid in run.get(q["query"], [])[:DEPTH]:
            p = at.get((q["query"], pid))
            if p is None:
                p = at[(q["query"], pid)] = {"query": q["query"], "id": pid, "systems": []}
                pool.append(p)
                new += 1
            if name not in p["systems"]:
                p["systems"].append(name)
    write_jsonl(POOL, pool)
    return new


def load_searcher(paperdex_dir: str | None, store: str | None = None):
    if paperdex_dir:
        # A snapshot of the committed engine (`git archive HEAD paperdex | tar -x -C DIR`), so
        # the reference runs are today's engine and not a working tree someone is editing.
        sys.path.insert(0, str(Path(paperdex_dir).resolve()))
    import paperdex
    from paperdex.search import Searcher
    from paperdex.store import Store

    print(f"paperdex from {Path(paperdex.__file__).parent}", file=sys.stderr)
    return Searcher(Store(store or STORE, readonly=True))


def cmd_run(args) -> None:
    """Write a run of the paperdex found on the path (the working tree by default), to pool
    and score: `run --mode hybrid --out x.jsonl`, `pool --system x --run x.jsonl`, `show`."""
    qs = queries()
    ranked = paperdex_runs(qs, args.mode, load_searcher(args.paperdex, args.store))
    out = Path(args.out)
    write_jsonl(out, [{"query": q["query"], "ids": ids} for q, ids in zip(qs, ranked, strict=True)])
    print(f"{out}: {len(qs)} queries")


def cmd_pool(args) -> None:
    qs = queries()
    if args.run:
        if not args.system:
            sys.exit("pool --run needs --system NAME")
        run = load_run(Path(args.run))
        missing = [q["query"] for q in qs if q["query"] not in run]
        if missing:
            print(f"warning: the run has no ranking for {len(missing)} queries", file=sys.stderr)
        new = add_to_pool(args.system, run, qs)
        write_jsonl(RUNS / f"{args.system}.jsonl", [{"query": q, "ids": ids} for q, ids in run.items()])
        print(f"{args.system}: {new} new pooled documents to grade")
        return
    searcher = load_searcher(args.paperdex)
    runs = {m: paperdex_runs(qs, m, searcher) for m in ("hybrid", "lexical", "dense")}
    bm = bm25s_runs(qs, None)
    fused = [rrf([b, d]) for b, d in zip(bm, runs["dense"], strict=True)]
    for name, ranked in [
        ("paperdex-hybrid", runs["hybrid"]),
        ("paperdex-lexical", runs["lexical"]),
        ("paperdex-dense", runs["dense"]),
        ("bm25s", bm),
        ("rrf-bm25s-dense", fused),
    ]:
        save_run(name, qs, ranked)
        new = add_to_pool(name, load_run(RUNS / f"{name}.jsonl"), qs)
        print(f"{name}: {new} new pooled documents")


# --- grading ---------------------------------------------------------------------------------


def graded() -> dict[tuple[str, str], int]:
    return {(r["query"], r["id"]): int(r["grade"]) for r in read_jsonl(QRELS)}


def blind_key(query: str, pid: str) -> str:
    """A fixed shuffle of a query's pool that says nothing about which system found a paper."""
    return hashlib.sha1(f"{query}\0{pid}".encode()).hexdigest()


def cmd_show(args) -> None:
    qs = queries()
    g = graded()
    pool = read_jsonl(POOL)
    _, docs = corpus()
    for n, q in enumerate(qs):
        if args.query is not None and n != args.query:
            continue
        todo = sorted(
            {p["id"] for p in pool if p["query"] == q["query"] and (q["query"], p["id"]) not in g},
            key=lambda pid: blind_key(q["query"], pid),
        )
        if not todo:
            continue
        print(f"=== [{n}] {q['query']}  ({len(todo)} to grade)")
        for pid in todo:
            d = docs[pid]
            print(f"--- {pid}  {d['title']}")
            print(textwrap.fill(" ".join(d["abstract"].split()), 160))
        print()


def cmd_grade(args) -> None:
    qs = queries()
    q = qs[args.n]["query"]
    pooled = {p["id"] for p in read_jsonl(POOL) if p["query"] == q}
    rows = read_jsonl(QRELS)
    at = {(r["query"], r["id"]): r for r in rows}
    for item in args.grades:
        pid, _, g = item.partition("=")
        if g not in ("0", "1", "2"):
            sys.exit(f"{item!r}: a grade is ID=0, ID=1 or ID=2")
        if pid not in pooled:
            sys.exit(f"{pid} is not in the pool of query {args.n}")
        if (q, pid) in at:
            at[(q, pid)]["grade"] = int(g)
        else:
            at[(q, pid)] = {"query": q, "id": pid, "grade": int(g)}
            rows.append(at[(q, pid)])
    write_jsonl(QRELS, rows)
    left = len(pooled - {pid for (qq, pid) in at if qq == q})
    print(f"[{args.n}] graded {len(args.grades)}; {left} left for this query")


# --- scoring ---------------------------------------------------------------------------------


def ndcg(ranked: list[str], grades: dict[str, int], k: int = DEPTH) -> float:
    """Graded nDCG@k with linear gain (trec_eval's), the ideal order taken from every grade."""
    dcg = sum(grades.get(pid, 0) / math.log2(i + 2) for i, pid in enumerate(ranked[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def score(run: dict[str, list[str]], qs: list[dict]) -> dict[str, tuple[float, int, int]]:
    """Per class: mean nDCG@10, unjudged documents among the top 10, queries."""
    g = graded()
    by_q: dict[str, dict[str, int]] = defaultdict(dict)
    for (q, pid), gr in g.items():
        by_q[q][pid] = gr
    acc: dict[str, list[float]] = defaultdict(list)
    unjudged: dict[str, int] = defaultdict(int)
    for q in qs:
        ranked = run.get(q["query"], [])
        acc[q["class"]].append(ndcg(ranked, by_q[q["query"]]))
        unjudged[q["class"]] += sum((q["query"], pid) not in g for pid in ranked[:DEPTH])
    out = {c: (sum(v) / len(v), unjudged[c], len(v)) for c, v in acc.items()}
    allv = [x for c in CLASSES for x in acc.get(c, [])]
    if allv:
        out["all"] = (sum(allv) / len(allv), sum(unjudged[c] for c in CLASSES), len(allv))
    return out


def cmd_score(args) -> None:
    qs = queries()
    for path in args.run:
        res = score(load_run(Path(path)), qs)
        print(f"{path}")
        for c in [*CLASSES, "all", *EXTRA]:
            if c in res:
                v, u, n = res[c]
                print(f"  {c:<17} nDCG@10 {v:.3f}   ({n} queries, {u} of their top {DEPTH}s unjudged)")


def cmd_table(args) -> None:
    qs = queries()
    if args.system:
        names = args.system
    else:
        names = [n for n in REFERENCE if (RUNS / f"{n}.jsonl").exists()]
        names += sorted(p.stem for p in RUNS.glob("*.jsonl") if p.stem not in REFERENCE)
    res = {n: score(load_run(RUNS / f"{n}.jsonl"), qs) for n in names}
    count = {c: sum(q["class"] == c for q in qs) for c in CLASSES + EXTRA}
    count["all"] = sum(count[c] for c in CLASSES)
    print("| class | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for c in [*CLASSES, "all", *EXTRA]:
        if count[c]:
            print(f"| {c} ({count[c]}) | " + " | ".join(f"{res[s][c][0]:.3f}" for s in names) + " |")
    unj = {s: sum(res[s][c][1] for c in CLASSES + EXTRA if c in res[s]) for s in names}
    print("unjudged in top 10: " + ", ".join(f"{s} {unj[s]}" for s in names))


def use_set(name: str) -> None:
    """Point every command at bench/questions/NAME/ (queries, grades) and bench/out/NAME/ (pool,
    runs): two question sets can be written and graded at once without sharing a file."""
    global QUERIES, QRELS, POOL, RUNS
    QUERIES, QRELS = QDIR / name / "queries.jsonl", QDIR / name / "qrels.jsonl"
    POOL, RUNS = OUT / name / "pool.jsonl", OUT / name / "runs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", help="a question set under bench/questions/ (default: the first 42 questions)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pool", help="pool the reference systems, or add --run under --system")
    p.add_argument("--system")
    p.add_argument("--run")
    p.add_argument("--paperdex", help="directory holding the paperdex package to pool (default: installed)")
    p.set_defaults(func=cmd_pool)
    p = sub.add_parser("run", help="write a run of paperdex (working tree unless --paperdex)")
    p.add_argument("--mode", choices=["hybrid", "lexical", "dense"], default="hybrid")
    p.add_argument("--out", required=True)
    p.add_argument("--paperdex", help="directory holding the paperdex package to run (default: installed)")
    p.add_argument("--store", help=f"the 63k store to search (default {STORE}), e.g. one of another model")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("show", help="print ungraded pooled documents, shuffled, without systems")
    p.add_argument("--query", type=int)
    p.set_defaults(func=cmd_show)
    p = sub.add_parser("grade", help="record grades ID=G for query number N")
    p.add_argument("n", type=int)
    p.add_argument("grades", nargs="+")
    p.set_defaults(func=cmd_grade)
    p = sub.add_parser("score", help="graded nDCG@10 per class of one or more runs")
    p.add_argument("--run", action="append", required=True)
    p.set_defaults(func=cmd_score)
    p = sub.add_parser("table", help="class x system table of pooled runs (all, or those named)")
    p.add_argument("--system", action="append", help="a pooled run's name; repeat for several")
    p.set_defaults(func=cmd_table)
    args = ap.parse_args()
    if args.set:
        use_set(args.set)
    args.func(args)


if __name__ == "__main__":
    main()

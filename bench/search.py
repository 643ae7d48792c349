"""Search latency on the full shared corpus, beside its peers, in one run.

    python bench/search.py [--queries 200] [--peers bm25s,milvus,milvus3] [--growth]
                           [--milvus3-python /work/venvs/milvus3/bin/python] [--milvus-budget 60]
                           [--store DIR] [--previous CHECKOUT --previous-store DIR]
                           [--no-e2e-default] [--pair-store DIR] [--no-embed] [--embed-papers 200]
                           [--only-user-rows] [--cpu]

Same 63,104 papers, same queries, same all-MiniLM-L6-v2 query vectors for every engine:

* paperdex: its own store (bench/out/full: SQLite + published lexical and vector snapshots);
* bm25s + exact numpy f32 + RRF: the forty lines a person would write by hand;
* Milvus Lite 2.5 (`milvus`: BM25 function over title + abstract with the "english" analyzer,
  dense FLAT index, RRF hybrid, categories as an ARRAY field), persisted in
  bench/out/milvus-63k.db between runs;
* Milvus Lite 3.x (`milvus3`: the same schema; HNSW, and the "standard" analyzer with English
  stopwords, since 3.x has no "english" one), persisted in bench/out/milvus3-63k.db.

Both Milvus peers are `bench/milvus_peer.py`, run as a subprocess on inputs written to
bench/out/peer/ (texts, categories, vectors, queries, query vectors): 2.5 with this interpreter,
3.x with `--milvus3-python`, a venv of its own, since pymilvus 3.0 and 2.5 cannot share one:

    python3 -m venv /work/venvs/milvus3
    /work/venvs/milvus3/bin/pip install milvus-lite==3.2.2 'pymilvus==3.0.*' numpy

A Milvus cell stops after `--milvus-budget` seconds of queries (3.2.2 spends seconds on one
ARRAY-filtered query) and says how many ran. The run ends with paperdex's hybrid p50 divided
by each Milvus peer's, plain and filtered (issue #13: at least 3x Milvus Lite 2.5, 20x 3.x).

"Engine time" is the search call with the query vector given (no query encoder, no
snippets); "end to end" adds the query encoder and highlighting, as a user waits for them.

`--cpu` reads every in-process cell from the CPU time of the process (all its threads) instead
of the wall clock: on a machine shared with other jobs the wall clock of a 2 ms query is mostly
waiting for a core. Milvus Lite runs in a process of its own and is timed by the wall clock.

Queries: 200 titles sampled with a fixed seed, whole and cut to their first three words.
`--growth` repeats paperdex's figures on the first 16k and 32k papers. Needs the bench extra
(`pip install -e '.[bench]'`) and ../shared.

Two more rows, after the peers (bench/search_user.py): end to end with the default model
(`multilingual-e5-small+all-MiniLM-L6-v2`, 768 dimensions) on the timing store
bench/out/full-pair (built on the first run: the shared MiniLM vectors in both halves under the
pair's name, so only its timing counts), with the encoder's share; and `paperdex embed` timed
as a user runs it on a fresh store of the first `--embed-papers` SciFact abstracts (papers/s,
cores used). `--no-e2e-default` and `--no-embed` leave one out; `--only-user-rows` runs only
them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from paperdex.ingest import import_vectors, ingest_file
from paperdex.store import Store

try:
    from paperdex.index.publish import publish
    from paperdex.search import Filters, Searcher
except ImportError:  # --previous: a checkout from before issue 33's layout, the same names at their old homes
    from paperdex.search.engine import Filters, Searcher

    def publish(store: Store) -> None:
        store.publish()


# ../shared/data beside the clone; from a worktree (/work/wt/NAME), the first ancestor that has one
SHARED = next(
    (p / "shared" / "data" for p in Path(__file__).resolve().parents[1:] if (p / "shared" / "data").is_dir()),
    Path(__file__).resolve().parents[1].parent / "shared" / "data",
)
CORPUS = SHARED / "arxiv-2025-2026.jsonl.gz"
VECTORS = SHARED / "arxiv-2025-2026.all-MiniLM-L6-v2.f16.npy"
IDS = SHARED / "arxiv-2025-2026.ids.txt"
OUT = Path(__file__).resolve().parent / "out"
CAT = "cs.RO"
K = 10
CELLS = ("lexical", "dense", "hybrid", f"hybrid+cat:{CAT}")
MILVUS3_PYTHON = "/work/venvs/milvus3/bin/python"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


# what a cell's times are read from: the wall clock, or (--cpu) the CPU time of this process,
# all its threads, which the other jobs of a shared machine leave out (Milvus Lite's rows are
# its own process's wall clock either way)
CLOCK = time.perf_counter


def use_cpu_clock(cpu: bool) -> None:
    """--cpu: the cells' times from this process's CPU time."""
    global CLOCK
    if cpu:
        CLOCK = time.process_time
        print("times: CPU time of this process (--cpu); Milvus Lite's: the wall clock of its own")


def timed(fn, items) -> tuple[float, float]:
    times = []
    for it in items:
        t = CLOCK()
        fn(it)
        times.append((CLOCK() - t) * 1000)
    return statistics.median(times), pct(times, 99)


def rrf_lists(a: list[int], b: list[int], k: int = 60) -> list[int]:
    s: dict[int, float] = {}
    for lst in (a, b):
        for r, d in enumerate(lst, 1):
            s[d] = s.get(d, 0.0) + 1 / (k + r)
    return sorted(s, key=lambda d: -s[d])[:K]


def build_store(d: Path, limit: int | None = None, pair: bool = False) -> Store:
    """The 63k store (or its first `limit` papers) with the shared MiniLM vectors; `pair`: the
    timing store of the default model, those vectors in both halves under the pair's name
    (`Pair.join(m, m)`, 768 dimensions: its rankings mean nothing, its timing counts)."""
    if (d / "paperdex.db").exists():
        store = Store(d)
        publish(store)  # a no-op unless the snapshot formats changed since the last run
        return store
    store = Store(d)
    src = CORPUS
    if limit:
        src = d.parent / f"{d.name}.jsonl"
        with gzip.open(CORPUS, "rt") as f, open(src, "w") as out:
            for _, line in zip(range(limit), f, strict=False):
                out.write(line)
        ids = d.parent / f"{d.name}.ids.txt"
        ids.write_text("".join(IDS.read_text().splitlines(keepends=True)[:limit]))
        vec = d.parent / f"{d.name}.npy"
        np.save(vec, np.load(VECTORS)[:limit])
    t = time.perf_counter()
    s = ingest_file(store, src)
    print(f"  ingest {s.added} papers (lexical snapshot included): {time.perf_counter() - t:.1f} s")
    if s.errors:
        raise SystemExit(f"{src}: {s.errors[0]}")
    t = time.perf_counter()
    if limit:
        import_vectors(store, vec, ids, "all-MiniLM-L6-v2")
    elif pair:
        from paperdex.index.embed import Pair

        m = np.load(VECTORS).astype(np.float32)
        import_vectors(store, Pair.join(m, m), IDS, Pair.name)
    else:
        import_vectors(store, VECTORS, IDS, "all-MiniLM-L6-v2")
    print(f"  vector import + publish: {time.perf_counter() - t:.1f} s")
    return store


def paperdex_rows(store: Store, short, full, qv, label: str, sentences=None) -> dict[str, list[tuple[float, float]]]:
    s = Searcher(store)
    s.search("warm up", mode="hybrid", query_vector=qv[short[0]])
    s.search("warm up", filters=Filters(category=CAT), query_vector=qv[short[0]])

    def run(q, mode, cat=False, **kw):
        return s.search(
            q,
            mode=mode,
            per_page=K,
            facets=False,
            literal=True,
            filters=Filters(category=CAT) if cat else None,
            **kw,
        )

    rows = {}
    for name, qs in (("3 words", short), ("full title", full), ("sentence", sentences or [])):
        if not qs:
            continue
        cells = []
        for mode, cat in (("lexical", False), ("dense", False), ("hybrid", False), ("hybrid", True)):
            for q in qs:  # one untimed pass: the snapshot's pages into the page cache (steady state)
                run(q, mode, cat, query_vector=qv[q], highlight=False)
            cells.append(timed(lambda q, m=mode, c=cat: run(q, m, c, query_vector=qv[q], highlight=False), qs))
        e2e = timed(lambda q: run(q, "hybrid"), qs)
        print(
            f"{label:24} {name:10} "
            + " ".join(f"{a:6.2f} /{b:6.2f}" for a, b in cells)
            + f"   e2e hybrid {e2e[0]:6.2f} /{e2e[1]:6.2f}"
        )
        rows[name] = cells
    return rows


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--peers", default="bm25s,milvus,milvus3")
    ap.add_argument("--growth", action="store_true")
    ap.add_argument("--milvus3-python", default=MILVUS3_PYTHON, help="a venv's python with milvus-lite 3.x")
    ap.add_argument("--milvus-budget", type=float, default=60.0, help="seconds of queries per Milvus cell at most")
    ap.add_argument("--previous", help="a checkout of an earlier paperdex: its engine timed in this run too")
    ap.add_argument("--previous-store", help="the store the earlier engine reads (default: the same one)")
    ap.add_argument("--store", default=str(OUT / "full"), help="paperdex's store (another model's: no peers)")
    ap.add_argument("--pair-store", default=str(OUT / "full-pair"), help="the default model's timing store")
    ap.add_argument("--no-e2e-default", action="store_true", help="no end-to-end row with the default model")
    ap.add_argument("--no-embed", action="store_true", help="no `paperdex embed` row")
    ap.add_argument("--embed-papers", type=int, default=200, help="SciFact abstracts the embed row embeds")
    ap.add_argument("--only-user-rows", action="store_true", help="only those two rows: no engine rows, no peers")
    ap.add_argument("--cpu", action="store_true", help="time this process's CPU, not the wall (a loaded machine)")
    ap.add_argument("--only-paperdex", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--label", default="paperdex", help=argparse.SUPPRESS)
    return ap.parse_args()


def main() -> None:
    args = parse_args()
    peers = [p for p in args.peers.split(",") if p]
    print(f"load average at start: {loadavg()}")
    use_cpu_clock(args.cpu)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, "blas")  # for every engine: threaded BLAS only waits at these sizes

    recs = records()
    short, full, sentences = queries(recs, args.queries).values()
    if args.only_user_rows:
        user_rows(args, {"3 words": short, "full title": full, "sentence": sentences})
        print(f"\nload average at end: {loadavg()}")
        return
    print("paperdex store (63k):")
    store = build_store(Path(args.store))
    searcher = Searcher(store)
    emb = searcher.embedder()
    t = time.perf_counter()
    qv = {q: emb.embed_query(q) for q in short + full + sentences}
    print(f"query encoder ({emb.name}): {(time.perf_counter() - t) / len(qv) * 1000:.1f} ms/query")

    print(f"\nengine time p50 / p99 ms, top-{K}, 63,104 papers, {args.queries} queries per row")
    print(f"{'engine':24} {'queries':10} {'lexical':>15} {'dense':>15} {'hybrid':>15} {'hybrid+cat:' + CAT:>15}")
    pdx = paperdex_rows(store, short, full, qv, args.label, sentences)
    if args.only_paperdex:
        return
    previous_rows(args)

    # recall@10 of paperdex's dense side (int8 SIMD scan) against exact float search
    vi = searcher.index
    mat = np.load(VECTORS).astype(np.float32)
    if vi.vecs.shape[1] != mat.shape[1]:  # a store of another model's vectors: its timing only
        print(f"(the store's vectors have {vi.vecs.shape[1]} dimensions, the peers' {mat.shape[1]}: no peers)")
        return
    id_row = {pid: i for i, pid in enumerate(IDS.read_text().split())}
    rowid_of = {r[0]: r[1] for r in store.conn.execute("SELECT id, rowid FROM papers")}
    row_rowid = np.array([rowid_of[pid] for pid in IDS.read_text().split()])
    rec = []
    for q in full[:100] + short[:100]:
        exact = set(row_rowid[np.argsort(-(mat @ qv[q]))[:K]].tolist())
        got = {r for r, _ in vi.search(qv[q], K)}
        rec.append(len(exact & got) / K)
    print(f"dense recall@10 of paperdex (int8 rows, SIMD scan) against exact float search: {np.mean(rec):.3f}")

    cats = [set(r["categories"]) for r in recs]
    texts = [r["title"] + ". " + r["abstract"] for r in recs]
    order = [id_row[r["id"]] for r in recs]
    mat = mat[order]
    in_cat = np.array([CAT in c for c in cats])

    if "bm25s" in peers:
        import bm25s
        import Stemmer

        stem = Stemmer.Stemmer("english")
        t = time.perf_counter()
        ret = bm25s.BM25()
        ret.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
        print(f"\nbm25s index: {time.perf_counter() - t:.1f} s")
        sub_idx = np.flatnonzero(in_cat)
        sub = mat[sub_idx]

        def lex(q, mask=None):
            toks = bm25s.tokenize([q], stopwords="en", stemmer=stem, show_progress=False)
            docs, _ = ret.retrieve(toks, k=100, show_progress=False, weight_mask=mask, n_threads=1)
            return docs[0].tolist()

        def dense(q, k=100):
            s = mat @ qv[q]
            top = np.argpartition(-s, k)[:k]
            return top[np.argsort(-s[top])].tolist()

        def dense_cat(q, k=100):
            s = sub @ qv[q]
            top = np.argpartition(-s, k)[:k]
            return sub_idx[top[np.argsort(-s[top])]].tolist()

        mask = in_cat.astype(np.float32)
        for name, qs in (("3 words", short), ("full title", full), ("sentence", sentences)):
            cells = [
                timed(lambda q: lex(q), qs),
                timed(lambda q: dense(q, K), qs),
                timed(lambda q: rrf_lists(lex(q), dense(q)), qs),
                timed(lambda q: rrf_lists(lex(q, mask), dense_cat(q)), qs),
            ]
            print(f"{'bm25s+numpy+RRF':24} {name:10} " + " ".join(f"{a:6.2f} /{b:6.2f}" for a, b in cells))

    milvus = [
        (peer, python, OUT / db, label)
        for peer, python, db, label in (
            ("milvus", sys.executable, "milvus-63k.db", "Milvus Lite 2.5 (FLAT)"),
            ("milvus3", args.milvus3_python, "milvus3-63k.db", "Milvus Lite 3.x (HNSW)"),
        )
        if peer in peers
    ]
    if milvus:
        inp = write_peer_input(texts, [r["categories"] for r in recs], mat, {"3 words": short, "full title": full}, qv)
        print()
        got = {}
        for _, python, db, label in milvus:
            res = milvus_peer(python, db, inp, label, args.milvus_budget)
            if res:
                got[label] = res
        ratios(pdx, got)

    user_rows(args, {"3 words": short, "full title": full, "sentence": sentences})
    if args.growth:
        print("\npaperdex as the corpus grows (engine time p50 / p99 ms):")
        for n in (16_000, 32_000):
            st = build_store(OUT / f"grow{n // 1000}k", limit=n)
            paperdex_rows(st, short, full, qv, f"paperdex {n // 1000}k")
    print(f"\nload average at end: {loadavg()}")


def previous_rows(args: argparse.Namespace) -> None:
    """--previous: the earlier checkout's engine, this file run with its package, its rows printed."""
    if not args.previous:
        return
    import os

    env = dict(os.environ, PYTHONPATH=str(Path(args.previous).resolve()))
    cmd = [
        sys.executable,
        __file__,
        "--only-paperdex",
        "--queries",
        str(args.queries),
        "--label",
        "previous engine",
        "--store",
        args.previous_store or args.store,
        *(["--cpu"] if args.cpu else []),
    ]
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True).stdout
    print("\n".join(line for line in out.splitlines() if line.startswith("previous engine")))


def user_rows(args: argparse.Namespace, rows: dict[str, list[str]]) -> None:
    """What a user of the default model waits for (bench/search_user.py): a search end to end,
    and `paperdex embed` of a new corpus."""
    import search_user  # here: a --previous checkout's engine never needs it

    if not args.no_e2e_default:
        print("\nthe default model's timing store (63k):")
        search_user.e2e_default(build_store(Path(args.pair_store), pair=True), rows)
    if not args.no_embed:
        search_user.embed_row(SHARED / "claims-corpus.jsonl.gz", args.embed_papers)


def records() -> list[dict]:
    """The shared corpus's papers, in its file's order."""
    with gzip.open(CORPUS, "rt") as f:
        return [json.loads(line) for line in f]


def queries(recs: list[dict], n: int) -> dict[str, list[str]]:
    """The bench's queries by row: n titles sampled with a fixed seed, cut to their first three
    words and whole, and n claim-length sentences (bench/search_ab.py reads the same)."""
    full = [r["title"] for r in random.Random(42).sample(recs, n)]
    return {"3 words": [" ".join(q.split()[:3]) for q in full], "full title": full, "sentence": claim_length(recs, n)}


def claim_length(recs: list[dict], n: int) -> list[str]:
    """Claim-length queries: a sentence of 12-40 words from the middle of an abstract, as a
    researcher pastes a statement (fixed seed)."""
    import re

    rnd = random.Random(43)
    out = []
    for r in rnd.sample(recs, n * 2):
        sents = [x for x in re.split(r"(?<=[.!?])\s+", r["abstract"])[1:] if 12 <= len(x.split()) <= 40]
        if sents:
            out.append(rnd.choice(sents))
        if len(out) == n:
            break
    return out


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def write_peer_input(texts, cats, mat, queries: dict[str, list[str]], qv) -> Path:
    """What bench/milvus_peer.py reads: the papers in the order of their primary keys."""
    d = OUT / "peer"
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "docs.jsonl", "w") as f:
        for t, c in zip(texts, cats, strict=True):
            f.write(json.dumps({"text": t, "cats": c}) + "\n")
    np.save(d / "docs.npy", np.ascontiguousarray(mat, dtype=np.float32))
    (d / "queries.json").write_text(json.dumps(queries))
    np.savez(d / "queries.npz", **{k: np.array([qv[q] for q in qs], dtype=np.float32) for k, qs in queries.items()})
    return d


def milvus_peer(python: str, db: Path, inp: Path, label: str, budget: float) -> dict | None:
    """Run bench/milvus_peer.py with `python`; print its rows; return its JSON line."""
    if not Path(python).exists():
        print(f"{label:24} skipped: no {python} (see this file's docstring for the venv)")
        return None
    cmd = [python, str(Path(__file__).with_name("milvus_peer.py"))]
    cmd += ["--db", str(db), "--input", str(inp), "--budget", str(budget), "--label", label]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print(f"{label:24} failed (exit {p.returncode})")
        return None
    res = json.loads(p.stdout.strip().splitlines()[-1])
    (inp / f"{db.stem}.result.json").write_text(json.dumps(res, indent=1))
    for name, cells in res["cells"].items():
        row = " ".join(
            f"{cells[c]['p50']:6.2f} /{cells[c]['p99']:6.2f}"
            + ("" if cells[c]["n"] == cells[c]["of"] else f" ({cells[c]['n']})")
            for c in CELLS
        )
        print(f"{label:24} {name:10} {row}")
    rec = res["recall10"]
    print(
        f"{'':24} milvus-lite {res['milvus_lite']}, pymilvus {res['pymilvus']}, dense {res['index']} "
        f"{res['index_params'] or ''}{res['dense_params'].get('params', '')}; analyzer {res['analyzer']}; "
        + (f"built in {res['built_s']:.0f} s; " if res["built_s"] else "")
        + f"first lexical query {res['first_lexical_s']:.2f} s; dense recall@10 vs exact "
        + ", ".join(f"{k} {v['recall']:.3f} ({v['n']} q)" for k, v in rec.items())
        + f"; load {res['loadavg'][0]} -> {res['loadavg'][1]}"
    )
    return res


def ratios(pdx: dict[str, list[tuple[float, float]]], got: dict[str, dict]) -> None:
    """paperdex's hybrid p50 against each Milvus peer's, from this run."""
    if not got:
        return
    clocks = "; Milvus's wall clock over paperdex's CPU time" if CLOCK is time.process_time else ""
    print(f"\npaperdex speed-up, same run (Milvus p50 / paperdex p50; p99 in brackets{clocks}):")
    for label, res in got.items():
        for name, cells in res["cells"].items():
            parts = []
            for i, c in ((2, "hybrid"), (3, f"hybrid+cat:{CAT}")):
                m, me = cells[c], pdx[name][i]
                parts.append(f"{c} {m['p50'] / me[0]:6.1f}x ({m['p99'] / me[1]:.1f}x)")
            print(f"  vs {label:24} {name:10} " + "   ".join(parts))


if __name__ == "__main__":
    main()

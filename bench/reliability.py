"""Figures for issue 9: filtered dense search, and the first query after an embed batch.

    python bench/reliability.py --data-dir bench/out/load [--queries 60]

1. *Filtered dense search*: the same queries with and without a category filter (cat:cs.RO,
   about 3% of the corpus), hybrid and dense, on a warm searcher; p50 and p99 in ms.
2. *The first query after an embed batch*: on a scratch copy of the store, edit a few
   abstracts, run `embed` (which publishes new snapshots), then time the first query of a
   reader that loads the new snapshot inside the query (as a CLI search or a request does), and
   of a serve worker whose background watcher (``SearcherPool.watch``) loaded it first.

Needs a store with vectors (all-MiniLM-L6-v2), e.g. the one `make bench` builds:
`paperdex --data-dir bench/out/full ingest ../shared/data/arxiv-2025-2026.jsonl.gz --vectors
../shared/data/arxiv-2025-2026.all-MiniLM-L6-v2.f16.npy --ids ../shared/data/arxiv-2025-2026.ids.txt
--model all-MiniLM-L6-v2`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paperdex.index.embed import embed_store  # noqa: E402
from paperdex.search import Searcher  # noqa: E402
from paperdex.service import SearcherPool  # noqa: E402
from paperdex.store import Store  # noqa: E402

QUERIES = ROOT.parent / "shared" / "data" / "load-queries.txt"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def words_only(n: int) -> list[str]:
    qs = [q.strip() for q in QUERIES.read_text().splitlines() if q.strip()] if QUERIES.exists() else []
    qs = [q for q in qs if ":" not in q and q.isascii()]
    return (qs or ["robot grasping", "motion planning", "legged locomotion", "visual servoing"])[:n]


def filtered(data_dir: Path, n: int) -> None:
    s = Searcher(Store(data_dir, readonly=True))
    qs = words_only(n)
    for q in qs[:5]:  # warm: snapshots, model, the filter's rows
        s.search(q + " cat:cs.RO")
    print(f"filtered dense search ({len(qs)} queries, p50 / p99 ms, warm)")
    for label, suffix, mode in (
        ("hybrid", "", "hybrid"),
        ("hybrid cat:cs.RO", " cat:cs.RO", "hybrid"),
        ("dense", "", "dense"),
        ("dense cat:cs.RO", " cat:cs.RO", "dense"),
    ):
        ts = [timed(lambda q=q, x=suffix, m=mode: s.search(q + x, mode=m)) for q in qs]
        print(f"  {label:18s} {statistics.median(ts):7.1f} / {pct(ts, 99):7.1f}")
    s.store.close()


def scratch_copy(src: Path, dst: Path) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    a = sqlite3.connect(f"{(src / 'paperdex.db').absolute().as_uri()}?mode=ro", uri=True)
    b = sqlite3.connect(dst / "paperdex.db")
    a.backup(b)
    a.close()
    b.close()
    for p in src.iterdir():  # the published snapshots, so the copy starts current
        if p.is_dir() and p.name.startswith(("lexical.", "vectors.")):
            shutil.copytree(p, dst / p.name)
        elif p.name in ("lexical.json", "vectors.json"):
            shutil.copy2(p, dst / p.name)


def after_embed(data_dir: Path, scratch: Path, edits: int) -> None:
    print(f"first query after an embed batch ({edits} abstracts edited, then `embed`)")
    t = time.perf_counter()
    scratch_copy(data_dir, scratch)
    print(f"  (scratch copy {time.perf_counter() - t:.1f} s)")
    q = "robot grasping with tactile sensing"

    reader = Searcher(Store(scratch, readonly=True))  # a request thread's searcher, no watcher
    pool = SearcherPool(scratch, size=1)  # a serve worker: its watcher reloads in the background
    pool.warm()
    pool.watch(interval=0.2)
    reader.search(q)
    steady = [timed(lambda: reader.search(q)) for _ in range(5)]

    with Store(scratch) as w:
        rows = w.conn.execute("SELECT id FROM papers ORDER BY rowid DESC LIMIT ?", (edits,)).fetchall()
        papers = [w.get(r[0]) for r in rows]
        w.upsert([dataclasses.replace(p, abstract=p.abstract + " (revised)") for p in papers])
        from paperdex.index.publish import publish

        publish(w)
        t = time.perf_counter()
        n = embed_store(w, batch_size=32)
        print(f"  embed of {n} papers incl. publishing the snapshots: {time.perf_counter() - t:.1f} s")
    first = timed(lambda: reader.search(q))
    second = timed(lambda: reader.search(q))
    time.sleep(max(1.0, 3 * 0.2))  # the watcher's next ticks
    with pool.searcher() as s:
        watched = timed(lambda: s.search(q))
    print(f"  steady query                                  {statistics.median(steady):7.1f} ms")
    print(f"  first query, snapshot loaded inside the query {first:7.1f} ms (then {second:.1f} ms)")
    print(f"  first query in a serve worker (watcher)       {watched:7.1f} ms")
    pool.close()
    reader.store.close()
    shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=ROOT / "bench" / "out" / "load")
    ap.add_argument("--scratch", type=Path, default=ROOT / "bench" / "out" / "reliability-scratch")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--edits", type=int, default=32)
    ap.add_argument("--skip-embed", action="store_true")
    a = ap.parse_args()
    print(f"store {a.data_dir}; load average {os.getloadavg()[0]:.2f}")
    filtered(a.data_dir, a.queries)
    if not a.skip_embed:
        after_embed(a.data_dir, a.scratch, a.edits)


if __name__ == "__main__":
    main()

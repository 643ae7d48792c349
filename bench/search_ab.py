"""Two checkouts' engines in one process, alternating query by query: the small differences
a speed change makes, which separate runs of bench/search.py (cells move 10-15% between runs on a
shared machine) cannot show.

    python bench/search_ab.py OLD_CHECKOUT [NEW_CHECKOUT] [--store DIR] [--queries 200] [--reps 2] [--facets]
                              [--clock wall|cpu]

NEW_CHECKOUT defaults to this one. bench/search.py's queries (titles, their first three words,
sentences) and query vectors, its engine cells without the dense one (lexical, hybrid, hybrid
within cs.RO, top 10, no highlighting, no facets unless `--facets`), each search timed by the
CPU time of the process, all its threads (`--clock cpu`, the default: the work, steady on a
shared machine) or by the wall clock (`--clock wall`: the latency, which an engine that runs
part of a search in another thread would change while its CPU time does not fall); per cell
the p50 of both and their ratio. The order alternates query by query, so a machine's load
falls on both alike; an A/B of one checkout against itself reads 1.00 +- 0.02.

Each checkout's `paperdex` modules are imported under their own names in turn and put back in
`sys.modules` before each of its searches: the engine imports some modules inside functions,
which would otherwise find the other checkout's (its VectorIndex then fails an isinstance and
a filtered query takes the slow path).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(tree: str, store: str) -> tuple[dict, object, object]:
    """One checkout's modules, its searcher over `store` (read only) and its Filters."""
    for name in [m for m in sys.modules if m == "paperdex" or m.startswith("paperdex.")]:
        del sys.modules[name]
    sys.path.insert(0, tree)
    try:
        store_mod = importlib.import_module("paperdex.store")
        search_mod = importlib.import_module("paperdex.search")
    finally:
        sys.path.remove(tree)
    if not str(search_mod.__file__).startswith(str(Path(tree).resolve())):
        raise SystemExit(f"{tree}: imported {search_mod.__file__} instead")
    mods = {m: v for m, v in sys.modules.items() if m == "paperdex" or m.startswith("paperdex.")}
    return mods, search_mod.Searcher(store_mod.Store(store, readonly=True)), search_mod.Filters


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new", nargs="?", default=str(HERE.parent))
    ap.add_argument("--store", default=str(HERE / "out" / "full"))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu", help="wall: latency; cpu: CPU time")
    ap.add_argument("--facets", action="store_true", help="with the facets, as the web and the API ask")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, "blas")
    engines = [load(str(Path(t).resolve()), args.store) for t in (args.old, args.new)]
    sys.path.insert(0, str(HERE))
    import search as bench  # bench/search.py: its queries

    rows = bench.queries(bench.records(), args.queries)
    emb = engines[0][1].embedder()
    qv = {q: emb.embed_query(q) for qs in rows.values() for q in qs}

    clock = time.perf_counter if args.clock == "wall" else time.process_time  # not thread_time: every thread

    def run(i: int, q: str, mode: str, cat: bool) -> float:
        mods, searcher, filters = engines[i]
        sys.modules.update(mods)
        f = filters(category=bench.CAT) if cat else None
        t = clock()
        searcher.search(
            q,
            mode=mode,
            per_page=bench.K,
            facets=args.facets,
            literal=True,
            filters=f,
            query_vector=qv[q],
            highlight=False,
        )
        return clock() - t

    print(f"old: {args.old}\nnew: {args.new}\n{args.clock} p50 ms, old / new (new / old), {args.queries} a cell")
    for rep in range(args.reps):
        print(f"-- run {rep + 1}, load {bench.loadavg()}")
        for name, qs in rows.items():
            cells = []
            for mode, cat in (("lexical", False), ("hybrid", False), ("hybrid", True)):
                for q in qs:  # untimed: each engine's caches and the page cache in their steady state
                    run(0, q, mode, cat), run(1, q, mode, cat)
                times: list[list[float]] = [[], []]
                for j, q in enumerate(qs):
                    for i in (0, 1) if j % 2 else (1, 0):
                        times[i].append(run(i, q, mode, cat))
                a, b = (statistics.median(t) * 1000 for t in times)
                cells.append(f"{mode + (f'+cat:{bench.CAT}' if cat else '')} {a:.2f} / {b:.2f} ({b / a:.3f})")
            print(f"  {name:10} " + "   ".join(cells))


if __name__ == "__main__":
    main()

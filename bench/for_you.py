"""The day "for you" (`service.for_you`, what /for-you and /api/for-you answer), measured on a
store: how many of a busy day's papers it ranks, what a request costs, and how many tag models
each request fits (docs/recommendations.md, "/for-you" and "How many models a process keeps").

    python bench/for_you.py --store DIR [--day D] [--tags 40] [--requests 4] [--budget 2] [-k 50]

The day defaults to the store's busiest; `--tags N` first adds tags until the store has N, the
newest 3 papers before the day of each of its largest categories (named `bench-CAT`: they are
written to the store, so give it a copy). Each request runs as the server runs it, models fitted
before the time budget, the rest within it; a request over the budget is reported as its 503.
Runs against an older checkout too (PYTHONPATH=that tree): it then has no `page` and no `total`.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import time
from pathlib import Path

from paperdex import service
from paperdex.discover import library as L
from paperdex.discover import recommend as R
from paperdex.store import Period, Store

FITS = [0]


def _counting(fit):
    def counted(*args, **kw):
        FITS[0] += 1
        return fit(*args, **kw)

    return counted


def add_tags(st: Store, want: int, day: str) -> None:
    """Tags of 3 papers, one per large category, until the store has `want` tags."""
    have = len(L.tags(st))
    cats = st.conn.execute(
        "SELECT category FROM paper_categories GROUP BY category ORDER BY count(*) DESC LIMIT ?", (want,)
    )
    for (cat,) in cats:
        if have >= want:
            return
        ids = st.conn.execute(
            "SELECT p.id FROM papers p JOIN paper_categories c ON c.paper = p.rowid"
            " WHERE c.category = ? AND p.date < ? ORDER BY p.rowid DESC LIMIT 3",
            (cat, day),
        )
        L.add_to_tag(st, f"bench-{cat}", [i for (i,) in ids])
        have += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--day")
    ap.add_argument("--tags", type=int, default=0, help="add tags until the store has this many")
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--budget", type=float, default=service.TIME_BUDGET)
    ap.add_argument("-k", type=int, default=50)
    a = ap.parse_args()
    st = Store(a.store)
    day = a.day or st.conn.execute("SELECT date FROM papers GROUP BY date ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    if a.tags:
        add_tags(st, a.tags, day)
    listing = [p.id for p in st.papers_in(Period(day, day), "listing", 100_000)]
    print(f"{day}: {len(listing)} papers; {len(L.tags(st))} tags; budget {a.budget:g} s")
    R.fit = _counting(R.fit)  # type: ignore[method-assign]
    pool = service.Local(st, budget=a.budget)
    paged = "page" in inspect.signature(service.for_you).parameters
    took: list[float] = []
    for i in range(a.requests):
        FITS[0] = 0
        t0 = time.perf_counter()
        try:
            d, ranked = service.for_you(pool, day, a.k, 1) if paged else service.for_you(pool, day, a.k)
            said = f"200, {len(ranked)} listed" + (f" of {d.total} ranked, {d.pages} pages" if paged else "")
        except service.ServiceError as e:
            said, ranked = f"{e.status}", []
        took.append(time.perf_counter() - t0)
        print(f"request {i + 1}: {took[-1]:.2f} s, {FITS[0]} models fitted, {said}")
        if i == 0 and ranked:
            first = set(listing[:200])
            past = sum(p.id not in first for p, _, _ in ranked)
            print(f"  of the first {len(ranked)}, {past} are past the listing's first 200 papers")
    if len(took) > 1:
        print(f"after the first: median {statistics.median(took[1:]):.3f} s")


if __name__ == "__main__":
    main()

"""How well the daily page's default order surfaces what the community picked.

For every day of a store: take the day's K papers with the most Hugging Face upvotes (or, in a
store without upvotes, the most GitHub stars, the other community signal a source gives) and
count how many appear in the first 20 of the day as the page lists them: the digest order
(feed.listing sort "top", the default) and the old listing order ("newest", arXiv's order).

    .venv/bin/python bench/daily_digest.py [DATA_DIR] [--k 10] [--days 60]

Read-only (the store is opened read-only). Prints one line per signal and order, and the days
where the digest misses any.
"""

from __future__ import annotations

import argparse
import statistics
import time

from paperdex.discover import feed
from paperdex.store import Store

UPVOTES = "CAST(json_extract(extra, '$.hf.upvotes') AS INTEGER)"
STARS = "CAST(coalesce(json_extract(extra, '$.code_stars'), json_extract(extra, '$.hf.github_stars')) AS INTEGER)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", nargs="?", default="bench/out/s63k")
    ap.add_argument("--k", type=int, default=10, help="the day's most-voted papers looked for")
    ap.add_argument("--days", type=int, default=60, help="the newest days measured")
    args = ap.parse_args()
    st = Store(args.data_dir, readonly=True)
    n_up = st.conn.execute(f"SELECT count(*) FROM papers WHERE {UPVOTES} > 0").fetchone()[0]
    signal, expr = ("upvotes", UPVOTES) if n_up else ("stars", STARS)
    print(f"store {args.data_dir}: {st.count():,} papers; {n_up:,} with upvotes; community signal used: {signal}")
    days = [d for d, _ in feed.days(st, args.days)]
    found: dict[str, list[float]] = {"top": [], "newest": []}
    took: list[float] = []
    misses = []
    measured = 0
    for day in days:
        best = [
            r[0]
            for r in st.conn.execute(
                f"SELECT id FROM papers WHERE date = ? AND {expr} > 0 ORDER BY {expr} DESC, rowid LIMIT ?",
                [day, args.k],
            )
        ]
        if not best:
            continue
        measured += 1
        for sort in found:
            t = time.perf_counter()
            first = {p.id for p in feed.listing(st, "day", day, None, sort, 1, 20).papers}
            if sort == "top":
                took.append((time.perf_counter() - t) * 1000)
            share = sum(pid in first for pid in best) / len(best)
            found[sort].append(share)
            if sort == "top" and share < 1:
                misses.append((day, share))
    print(f"days with any {signal}: {measured} of the newest {len(days)}; K = up to {args.k} per day")
    for sort, shares in found.items():
        if shares:
            print(
                f"  {sort:<7} the day's top-{args.k} by {signal} in its first 20: mean {statistics.mean(shares):.0%}, "
                f"all of them on {sum(s == 1 for s in shares)} of {len(shares)} days"
            )
    if took:
        print(f"  digest listing time per day: median {statistics.median(took):.0f} ms")
    for day, share in misses[:10]:
        print(f"  missed on {day}: {share:.0%}")


if __name__ == "__main__":
    main()

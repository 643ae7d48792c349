"""Force the lexical build's split pair sort on a store and measure it against one sort.

    python bench/lexical_split.py DATA_DIR RANGES    # RANGES 1: one sort; 4: four ranges

The split path runs where the pair sort keys would pass 2^63 (about 3M stems at 1M papers);
lowering the key bound makes the same store take it. Builds from scratch (nothing published),
prints the time and this process's peak resident memory, and whether the arrays equal the
published snapshot's. Run each RANGES in its own process: the peak is the process's.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paperdex.index import lexical  # noqa: E402
from paperdex.store import Store  # noqa: E402


def peak_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


def main() -> None:
    data_dir, ranges = sys.argv[1], int(sys.argv[2])
    store = Store(data_dir, readonly=True)
    published = lexical.load(store)
    if published is None:
        raise SystemExit(f"{data_dir}: no published lexical snapshot to compare with")
    V, N = len(published.vocab), published.n
    del published
    if ranges > 1:
        lexical._KEY_MAX = V * N * -(-V // ranges)  # first terms per sort: V / ranges
    t = time.perf_counter()
    built = lexical.build(store, None)
    took = time.perf_counter() - t
    out = {"stems": V, "papers": N, "ranges": ranges, "build_s": round(took, 1), "peak_rss_mb": peak_mb()}
    out["load"] = round(os.getloadavg()[0], 1)
    published = lexical.load(store)
    out["identical"] = all(
        np.array_equal(np.asarray(built.arrays[k]), np.asarray(published.arrays[k])) for k in published.arrays
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()

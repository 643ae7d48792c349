"""How many papers a tag needs (issue 34): the page's model (recommend.fit, chosen per tag) on
tags of 1, 3, 5, 10 and 20 papers, with bench/recommend.py's topics, draws (seed 7, 5 per size)
and measures (P@20, its deviation, R@100, P@20 broad). Its 20-paper rows are that bench's
"chosen per tag" rows; the table is in docs/recommendations.md.

    python bench/tag_size.py [--store bench/out/full]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recommend as BR  # noqa: E402  (bench/recommend.py)

from paperdex.discover import recommend as R  # noqa: E402
from paperdex.store import Store  # noqa: E402

SIZES = (1, 3, 5, 10, 20)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default=str(BR.ROOT / "bench/out/full"))
    store = Store(ap.parse_args().store, readonly=True)
    c = R.corpus(store)
    topics, broad, fit = BR.topics(store, c), BR.broad_topics(store, c), BR.chosen_per_tag(c, {})
    print("| topic | tag papers | P@20 | sd | R@100 | P@20 broad |\n| --- | --- | --- | --- | --- | --- |")
    for topic in ("cs.RO", "speculative decoding"):
        for size in SIZES:
            rng, got = np.random.default_rng(7), []
            for i in range(5):
                perm = rng.permutation(topics[topic])
                tag = np.sort(perm[:size])
                got.append(BR.metrics(fit(tag, f"{topic}:{size}:{i}"), tag, perm[size:], broad.get(topic)))
            p, r, pb = np.array(got).T
            row = (topic, size, *(f"{x:.3f}" for x in (p.mean(), p.std(), r.mean(), pb.mean())))
            print("| " + " | ".join(map(str, row)) + " |", flush=True)


if __name__ == "__main__":
    main()

"""How long the search box waits for its suggestions: /api/suggest for every prefix of some
queries typed letter by letter, as the box asks while a user types (it waits 120 ms after a
keystroke), through the app in this process (no network), over a data directory opened
read-only (the endpoint only reads).

    .venv/bin/python bench/suggest_latency.py DATA_DIR [--repeat 3]

Prints the median, 95th percentile and slowest answer per query, and over all of them, from
the rounds after the first (which loads the Chinese dictionary and warms SQLite's pages); the
first round's slowest answer apart.
"""

from __future__ import annotations

import argparse
import statistics
import time

QUERIES = [
    ("speculative decoding", "en"),
    ("large language models", "en"),
    ("diffusion models for image editing", "en"),
    ("LLM agents", "en"),
    ("ti:graph neural", "en"),
    ("au:bengio", "en"),
    ("扩散模型", "zh"),
    ("大语言模型推理", "zh"),
    ("机器人", "zh"),
]


def _prefixes(q: str) -> list[str]:
    return [q[:i] for i in range(1, len(q) + 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--repeat", type=int, default=3, help="rounds over all prefixes (the first warms the caches)")
    args = ap.parse_args()
    if args.repeat < 2:
        ap.error("--repeat must be 2 or more: the first round only warms")
    from fastapi.testclient import TestClient

    from paperdex.web.app import create_app

    client = TestClient(create_app(args.data_dir, pool_size=1), base_url="http://127.0.0.1")
    every: list[float] = []
    first: list[float] = []
    print(f"{'query':<36} {'asks':>4} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7}")
    for q, lang in QUERIES:
        times: list[float] = []
        for round_ in range(args.repeat):
            for prefix in _prefixes(q):
                t = time.perf_counter()
                r = client.get("/api/suggest", params={"q": prefix, "lang": lang})
                dt = (time.perf_counter() - t) * 1000
                assert r.status_code == 200, (prefix, r.status_code)
                (times if round_ else first).append(dt)
        every += times
        p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]
        print(f"{q:<36} {len(_prefixes(q)):>4} {statistics.median(times):7.1f} {p95:7.1f} {max(times):7.1f}")
    p95 = statistics.quantiles(every, n=20)[-1]
    print(f"{'all':<36} {len(every):>4} {statistics.median(every):7.1f} {p95:7.1f} {max(every):7.1f}")
    print(f"first round: median {statistics.median(first):.1f} ms, slowest {max(first):.1f} ms")


if __name__ == "__main__":
    main()

"""How long the search box waits for its suggestions: /api/suggest for every prefix of some
queries typed letter by letter, as the box asks while a user types (it waits 120 ms after a
keystroke), through the app in this process (no network), over a data directory opened
read-only (the endpoint only reads).

    .venv/bin/python bench/suggest_latency.py DATA_DIR [--repeat 3]

Prints the median, 95th percentile and slowest answer per query, and over all of them, from
the rounds after the first (which loads the Chinese dictionary and warms SQLite's pages); the
first round's slowest answer apart. Wall time, and the CPU time the process spent per answer
(what the answer costs on a machine other jobs share, where the wall time is mostly waiting),
with the load average it ran under.
"""

from __future__ import annotations

import argparse
import os
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
    cpu_all: list[float] = []
    first: list[float] = []
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'query':<36} {'asks':>4} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'CPU p50':>8} {'CPU p95':>8}")
    for q, lang in QUERIES:
        times: list[float] = []
        cpu: list[float] = []
        for round_ in range(args.repeat):
            for prefix in _prefixes(q):
                t, c = time.perf_counter(), time.process_time()
                r = client.get("/api/suggest", params={"q": prefix, "lang": lang})
                dt, dc = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
                assert r.status_code == 200, (prefix, r.status_code)
                (times if round_ else first).append(dt)
                if round_:
                    cpu.append(dc)
        every += times
        cpu_all += cpu
        print(f"{q:<36} {len(_prefixes(q)):>4} {_row(times)} {_row(cpu, wall=False)}")
    print(f"{'all':<36} {len(every):>4} {_row(every)} {_row(cpu_all, wall=False)}")
    print(f"first round: median {statistics.median(first):.1f} ms, slowest {max(first):.1f} ms")
    print(f"load average {os.getloadavg()[0]:.1f}")


def _row(ms: list[float], wall: bool = True) -> str:
    p95 = statistics.quantiles(ms, n=20)[-1] if len(ms) > 1 else ms[0]
    if wall:
        return f"{statistics.median(ms):7.1f} {p95:7.1f} {max(ms):7.1f}"
    return f"{statistics.median(ms):8.1f} {p95:8.1f}"


if __name__ == "__main__":
    main()

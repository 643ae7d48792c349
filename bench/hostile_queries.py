"""How fast hostile queries are answered, and a static file beside them: the figures the test
suite no longer asserts (tests/web/test_hostile_queries.py checks only what each one answers).

    python bench/hostile_queries.py [--data-dir DIR] [--rounds 2] [--budget 2]

Starts `paperdex serve` (two workers) on a free loopback port over DIR (default: a scratch
store of the bundled sample, loaded with `paperdex demo --no-serve`), sends every query of the
test's list from three clients, `rounds` times, to /api/search and /, while a fourth fetches
/static/style.css every 20 ms. Prints each query's slowest answer and status, and the static
file's p50 / p99 / max, with the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "web"))
from live_server import LiveServer  # noqa: E402
from test_hostile_queries import HOSTILE  # noqa: E402


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run(data_dir: Path, rounds: int, budget: float, log: Path) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with LiveServer(data_dir, "--time-budget", str(budget), log=log) as srv:
        srv.wait_ready()
        stop = threading.Event()
        static: list[float] = []
        answers: list[tuple[str, str, int, float]] = []

        def fetch_static() -> None:
            with httpx.Client(timeout=10) as c:
                while not stop.is_set():
                    t = time.monotonic()
                    c.get(f"{srv.base}/static/style.css")
                    static.append(time.monotonic() - t)
                    time.sleep(0.02)

        def hammer(names: list[str]) -> None:
            with httpx.Client(timeout=60) as c:
                for _ in range(rounds):
                    for name in names:
                        for path in ("/api/search", "/"):
                            t = time.monotonic()
                            r = c.get(f"{srv.base}{path}", params={"q": HOSTILE[name]})
                            answers.append((name, path, r.status_code, time.monotonic() - t))

        s = threading.Thread(target=fetch_static, daemon=True)
        s.start()
        names = list(HOSTILE)
        threads = [threading.Thread(target=hammer, args=(names[i::3],)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        s.join(10)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"{'query':34} {'/api/search':>12} {'/ (page)':>9} {'slowest':>9}")
    for name in names:
        mine = [a for a in answers if a[0] == name]

        def codes(path: str, mine=mine) -> str:
            return ",".join(str(c) for c in sorted({a[2] for a in mine if a[1] == path}))

        print(f"{name:34} {codes('/api/search'):>12} {codes('/'):>9} {max(a[3] for a in mine) * 1000:7.0f} ms")
    over = [a for a in answers if a[3] > budget]
    print(f"answers over the {budget:g} s budget: {len(over)} of {len(answers)}")
    ms = [x * 1000 for x in static]
    print(
        f"static file while they ran: {len(ms)} fetches, p50 {statistics.median(ms):.1f} ms, "
        f"p99 {_pct(ms, 0.99):.1f} ms, max {max(ms):.1f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, help="A store to serve (default: the bundled sample in a scratch dir).")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--budget", type=float, default=2.0, help="serve --time-budget, seconds (the default's).")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = a.data_dir
        if d is None:
            d = Path(tmp) / "sample"
            cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(d), "demo", "--no-serve"]
            subprocess.run(cmd, check=True, capture_output=True)
        run(d, a.rounds, a.budget, Path(tmp) / "serve.log")


if __name__ == "__main__":
    main()

"""Query fuzzing against a real server (two worker processes, loopback): queries built to be
expensive (repeated phrases and prefixes, deep nesting, long OR chains, stopwords) are each
answered, 200 or 4xx, never with a 5xx (a search still running at the generous budget below
would be a 503: pathological, not merely slow on a busy machine), while a static file keeps
answering. How fast they answer is measured by
bench/hostile_queries.py, which prints the figures: a latency assertion here would fail on a
busy machine and say nothing about the code."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/live_server.py
from live_server import LiveServer  # noqa: E402

BUDGET = 10.0  # the server default is 2 s; the test asserts no query needs anywhere near it

HOSTILE = {
    "10,000 nested parentheses": "(" * 10_000 + "robot" + ")" * 10_000,
    "nesting within the length limit": "(" * 490 + "robot" + ")" * 490,
    "1,000 OR terms": " OR ".join(f"w{i}" for i in range(1000)),
    "200 OR terms": " OR ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(200)),
    "OR of real words": " OR ".join(["robot", "learning", "graph", "vision", "language", "model"] * 14),
    '"the" x64': " ".join(['"the"'] * 64),
    "the x64": " ".join(["the"] * 64),
    "ti:ab* x48": " ".join(["ti:ab*"] * 48),
    "ti:a* x48": " ".join(["ti:a*"] * 48),
    "prefixes x80": " ".join(["tr*", "co*", "re*", "in*", "de*"] * 16),
    "repeated phrase": " ".join(['"neural network"'] * 55),
    "long phrase": '"' + " ".join(["the learning of a model for the robot"] * 24) + '"',
    "repeated fielded phrases": " ".join(['abs:"reinforcement learning"', 'ti:"robot"'] * 25),
    "NOT chain": " ".join(f"-w{i}" for i in range(150)),
    "AND/OR mix": " AND ".join(f"(a{i} OR b{i})" for i in range(60)),
    "Chinese x200": "模型" * 200,
    "quotes and colons": ':"' * 300,
}


def test_hostile_queries_answer_and_static_files_keep_answering(web_dir, tmp_path):
    with LiveServer(web_dir, "--time-budget", str(BUDGET), log=tmp_path / "serve.log") as srv:
        srv.wait_ready()
        stop = threading.Event()
        static: list[float] = []
        failures: list[str] = []

        def fetch_static() -> None:
            with httpx.Client(timeout=10) as c:
                while not stop.is_set():
                    t = time.monotonic()
                    r = c.get(f"{srv.base}/static/style.css")
                    static.append(time.monotonic() - t)
                    if r.status_code != 200:
                        failures.append(f"static {r.status_code}")
                    time.sleep(0.02)

        answers: list[tuple[str, str, int, float]] = []

        def hammer(names: list[str]) -> None:
            with httpx.Client(timeout=60) as c:
                for _ in range(2):
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
            t.join(300)
        stop.set()
        s.join(10)

        assert len(answers) == 2 * 2 * len(HOSTILE)
        bad = [(n, p, code) for n, p, code, _ in answers if not (code == 200 or 400 <= code < 500)]
        assert not bad, bad
        too_long = ("10,000 nested parentheses", "1,000 OR terms")
        assert all(len(q) <= 1000 for n, q in HOSTILE.items() if n not in too_long)  # the rest reach the engine
        codes = {n: code for n, p, code, _ in answers if p == "/api/search"}
        assert codes["10,000 nested parentheses"] == 400 and codes["1,000 OR terms"] == 400  # over 1,000 characters
        assert codes["nesting within the length limit"] == 400
        assert not failures, failures
        assert len(static) >= 10  # the static file kept answering (200s) while they ran

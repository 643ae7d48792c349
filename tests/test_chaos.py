"""Chaos: a real server (two worker processes, loopback) under a bounded load while, in turn,
a lexical ingest, a vector import, an `embed` with concurrent edits and a `kill -9` of an
ingest happen on its data directory. Must hold: no 5xx and no failed connection, no paper lost
or duplicated, the server sees what the writers published, and after `paperdex embed` (which
repairs) every vector was computed from its paper's current text."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from live_server import LiveServer  # noqa: E402

DATA = Path(__file__).parent / "data"
MODEL = "all-MiniLM-L6-v2"
MARK = "zqxchaos"  # a word no paper has: edited abstracts carry it
QUERIES = ["robot grasping", "diffusion models", "cat:cs.RO robot", '"neural network"', "扩散模型", "ti:learning"]


def _cli(d: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(d), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-2000:])
    return r


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _cycle(items: list, n: int):
    return ((i, items[i % len(items)]) for i in range(n))


def _wait_for_a_fresh_vector(d: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until `embed` has committed a vector of the edited text (or has ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with _db(d) as db:
            q = "SELECT count(*) FROM vectors v JOIN papers p ON p.rowid = v.paper WHERE p.abstract LIKE ?"
            fresh = db.execute(q + " AND v.text_hash = p.text_hash", (f"%{MARK}%",)).fetchone()[0]
        if fresh:
            return
        time.sleep(0.05)


def _db(d: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{(d / 'paperdex.db').absolute().as_uri()}?mode=ro", uri=True)


class Load:
    """A few clients on loopback, each one request at a time with a short pause: searches
    (hybrid, filtered, phrase, Chinese), paper pages, neighbours, the day list, a static file."""

    def __init__(self, base: str, ids: list[str], clients: int = 3) -> None:
        self.base, self.ids = base, ids
        self.stop = threading.Event()
        self.codes: dict[int, int] = {}
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(clients)]

    def requests(self, i: int):
        n = i
        while True:
            n += 1
            pid = self.ids[n % len(self.ids)]
            yield "/api/search", {"q": QUERIES[n % len(QUERIES)]}
            yield f"/api/papers/{pid}", {}
            yield "/static/style.css", {}
            yield "/api/search", {"q": QUERIES[(n + 3) % len(QUERIES)], "mode": "dense"}
            yield f"/api/papers/{pid}/similar", {"k": 5}
            yield "/api/days", {}

    def run(self, i: int) -> None:
        with httpx.Client(timeout=60) as c:
            for path, params in self.requests(i):
                if self.stop.is_set():
                    return
                try:
                    code = c.get(self.base + path, params=params).status_code
                except httpx.HTTPError as e:
                    with self.lock:
                        self.errors.append(f"{path}: {e!r}")
                    continue
                with self.lock:
                    self.codes[code] = self.codes.get(code, 0) + 1
                    if code >= 500:
                        self.errors.append(f"{path} {params}: {code}")
                time.sleep(0.01)

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)


def test_chaos(tmp_path):
    papers = [json.loads(x) for x in (DATA / "papers.jsonl").read_text().splitlines() if x.strip()]
    ids = [p["id"] for p in papers]
    first, rest = papers[:200], papers[200:]
    edits1 = [{**p, "abstract": p["abstract"] + f" {MARK} one"} for p in papers[:20]]
    edits2 = [{**p, "abstract": p["abstract"] + f" {MARK} two"} for p in papers[10:30]]  # 10 edited twice
    bulk = [{**p, "id": f"2601.{90000 + i:05d}", "title": f"Bulk {i} {p['title']}"} for i, p in _cycle(papers, 2500)]
    t0 = time.monotonic()

    def phase(name: str) -> None:  # shown with -s, or when the test fails
        print(f"chaos: {name} at {time.monotonic() - t0:.1f} s")

    d = tmp_path / "store"
    _cli(d, "ingest", "-q", str(_write(tmp_path / "first.jsonl", first)))

    with LiveServer(d, "--time-budget", "20", log=tmp_path / "serve.log") as srv:
        srv.wait_ready()
        phase("server ready")
        with Load(srv.base, ids[:200]) as load:
            time.sleep(1)

            # 1. a lexical ingest
            _cli(d, "ingest", "-q", str(_write(tmp_path / "rest.jsonl", rest)))
            phase("lexical ingest done")
            # 2. a vector import (every paper gets its precomputed vector)
            _cli(
                d,
                "ingest",
                "-q",
                str(DATA / "papers.jsonl"),
                "--vectors",
                str(DATA / "papers.minilm.f16.npy"),
                "--ids",
                str(DATA / "papers.ids.txt"),
                "--model",
                MODEL,
            )
            phase("vector import done")
            # 3. edits, then `embed` while more edits arrive
            _cli(d, "ingest", "-q", str(_write(tmp_path / "edits1.jsonl", edits1)))
            env = {**os.environ, "PYTHONWARNINGS": "ignore"}
            cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(d), "embed", "-q"]
            embed = subprocess.Popen(
                [*cmd, "--batch-size", "4", "--threads", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            _wait_for_a_fresh_vector(d, embed)  # it is embedding now: edit some of the same papers again
            _cli(d, "ingest", "-q", str(_write(tmp_path / "edits2.jsonl", edits2)))
            out, err = embed.communicate(timeout=300)
            assert embed.returncode == 0, err[-2000:]
            phase("embed done")
            # ... `embed` again repairs whatever the concurrent edits left stale
            _cli(d, "embed", "-q", "--threads", "1")
            with _db(d) as db:
                stale = db.execute(
                    "SELECT count(*) FROM vectors v JOIN papers p ON p.rowid = v.paper WHERE v.text_hash != p.text_hash"
                ).fetchone()[0]
                assert stale == 0
                assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(papers)

            phase("embed with edits, repair done")
            # 4. kill -9 of an ingest in the middle, then the same ingest again
            bulk_file = _write(tmp_path / "bulk.jsonl", bulk)
            writer = subprocess.Popen(
                [sys.executable, "-m", "paperdex", "--data-dir", str(d), "ingest", "-q", str(bulk_file)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and writer.poll() is None:
                with _db(d) as db:
                    if db.execute("SELECT count(*) FROM papers").fetchone()[0] > len(papers):
                        break  # its first batch is committed: more is in flight
                time.sleep(0.05)
            writer.send_signal(signal.SIGKILL)
            assert writer.wait() == -signal.SIGKILL  # killed while it was still writing
            phase("writer killed")
            _cli(d, "ingest", "-q", str(bulk_file))
            phase("ingest rerun done")

            # the server sees what the writers published (each worker reloads the snapshots)
            deadline = time.monotonic() + 30
            while True:
                r = httpx.get(f"{srv.base}/api/search", params={"q": MARK, "mode": "lexical"}, timeout=30)
                bulk_hit = httpx.get(f"{srv.base}/api/papers/2601.92499", timeout=30).status_code
                seen = r.status_code == 200 and r.json()["total"] == 30 and bulk_hit == 200
                if seen or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert r.json()["total"] == 30 and bulk_hit == 200
            phase("server sees it all")
            time.sleep(1)

    assert not load.errors, load.errors[:20]
    assert sum(load.codes.values()) > 100, load.codes
    assert set(load.codes) <= {200, 404}, load.codes

    with _db(d) as db:
        got = [r[0] for r in db.execute("SELECT id FROM papers")]
        assert len(got) == len(set(got)) == len(papers) + len(bulk)
        assert set(got) == set(ids) | {b["id"] for b in bulk}
        stale = db.execute(
            "SELECT count(*) FROM vectors v JOIN papers p ON p.rowid = v.paper WHERE v.text_hash != p.text_hash"
        ).fetchone()[0]
        assert stale == 0
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(papers)
    shutil.rmtree(d, ignore_errors=True)

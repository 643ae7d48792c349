"""The vector-import window, forced: a real server (two worker processes, loopback) answers
every search with a 200 while a vector import has committed its vectors but not yet published
them, while it publishes, and while the workers load the new vectors.

The chaos test (tests/test_chaos.py) meets this window only when its timing happens to fall
into it. Here it is held open on purpose, through a sitecustomize.py that the writer and the
server load (the real code runs; only waits are added):

* the writer (`paperdex ingest --vectors`) stops just before it writes the vectors pointer
  (``vectors.publish``): the store then holds every vector and names their model, and no reader
  has been told. It goes on when the test says so;
* each server worker sleeps before it reads the new vectors (``VectorIndex.from_store``), so
  requests keep arriving while a worker is loading them.

Searches are sent throughout (hybrid, dense, lexical, fielded, Chinese) from four clients, at
least 1,000 in all, with a floor per phase; every one must be a 200, none may fail to connect,
and after the publish hybrid searches must rank by vectors too (the workers did load them)."""

from __future__ import annotations

import json
import os
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
SEARCHES = [
    ("robot grasping", "hybrid"),
    ("diffusion models", "dense"),
    ("cat:cs.RO robot", "hybrid"),
    ('"neural network"', "lexical"),
    ("扩散模型", "hybrid"),
    ("ti:learning", "dense"),
    ("graph neural networks for molecules", "dense"),
    ("language model reasoning", "hybrid"),
]
PER_PHASE = 400  # searches at least in each of the two forced phases
TOTAL = 1000

SITE = """
import os, time
gate = os.environ.get("PAPERDEX_TEST_GATE")
if gate:  # the writer: hold the publish of the vectors pointer until the test says go
    from paperdex.index import vectors
    real_publish = vectors.publish
    def publish(store):
        if store.model is not None and not os.path.exists(os.path.join(gate, "go")):
            open(os.path.join(gate, "waiting"), "w").close()
            deadline = time.monotonic() + 300
            while not os.path.exists(os.path.join(gate, "go")) and time.monotonic() < deadline:
                time.sleep(0.02)
        return real_publish(store)
    vectors.publish = publish
slow = os.environ.get("PAPERDEX_TEST_SLOW_VECTORS")
if slow:  # a server worker: loading the new vectors takes this long
    from paperdex.index import vectors
    real_from_store = vectors.VectorIndex.from_store.__func__
    def from_store(cls, store):
        time.sleep(float(slow))
        return real_from_store(cls, store)
    vectors.VectorIndex.from_store = classmethod(from_store)
"""


def _cli(d: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    e = {**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})}
    r = subprocess.run(
        [sys.executable, "-m", "paperdex", "--data-dir", str(d), *args], capture_output=True, text=True, env=e
    )
    assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-2000:])
    return r


class Searches:
    """Clients sending searches one at a time, counted by the phase the test is in."""

    def __init__(self, base: str, clients: int = 4) -> None:
        self.base = base
        self.phase = "before"
        self.codes: dict[str, dict[int, int]] = {}
        self.errors: list[str] = []
        self.dense_ranked: list[bool] = []  # after the publish: did a hybrid search's hits have dense ranks
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(clients)]

    def count(self, phase: str) -> int:
        with self.lock:
            return sum(self.codes.get(phase, {}).values())

    def run(self, i: int) -> None:
        n = i
        with httpx.Client(timeout=60) as c:
            while not self.stop.is_set():
                q, mode = SEARCHES[n % len(SEARCHES)]
                n += 1
                phase = self.phase
                try:
                    r = c.get(f"{self.base}/api/search", params={"q": q, "mode": mode})
                except httpx.HTTPError as e:
                    with self.lock:
                        self.errors.append(f"{phase}: {q!r} {mode}: {e!r}")
                    continue
                with self.lock:
                    self.codes.setdefault(phase, {})
                    self.codes[phase][r.status_code] = self.codes[phase].get(r.status_code, 0) + 1
                    if r.status_code != 200:
                        self.errors.append(f"{phase}: {q!r} {mode}: {r.status_code} {r.text[:200]}")
                    elif phase == "after" and q == "robot grasping":  # its best hits are close in meaning too
                        hits = r.json()["hits"]
                        self.dense_ranked.append(any(h["why"].get("dense_rank") for h in hits))

    def __enter__(self) -> Searches:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)


def _wait(cond, what: str, load: Searches, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, (f"timed out waiting for {what}", load.codes, load.dense_ranked[-20:])
        time.sleep(0.05)


def test_no_search_fails_across_a_forced_vector_import_publish(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE)
    gate = tmp_path / "gate"
    gate.mkdir()
    d = tmp_path / "store"
    _cli(d, "ingest", "-q", str(DATA / "papers.jsonl"))  # words only: no vectors, no model yet
    n_papers = len((DATA / "papers.ids.txt").read_text().split())

    env = {"PAPERDEX_TEST_SLOW_VECTORS": "2"}
    with LiveServer(d, "--time-budget", "20", env=env, log=tmp_path / "serve.log", python_path=site) as srv:
        srv.wait_ready()
        with Searches(srv.base) as load:
            _wait(lambda: load.count("before") >= 50, "searches before the import", load)
            writer_env = {
                **os.environ,
                "PYTHONWARNINGS": "ignore",
                "PAPERDEX_TEST_GATE": str(gate),
                "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
            }
            vecs = ["--vectors", str(DATA / "papers.minilm.f16.npy"), "--ids", str(DATA / "papers.ids.txt")]
            writer = subprocess.Popen(
                [sys.executable, "-m", "paperdex", "--data-dir", str(d), "ingest", "-q", str(DATA / "papers.jsonl")]
                + [*vecs, "--model", MODEL],
                env=writer_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            _wait(lambda: (gate / "waiting").exists() or writer.poll() is not None, "the writer at its publish", load)
            assert writer.poll() is None, writer.communicate()
            # the window is open: every vector committed, the model named, nothing published
            with sqlite3.connect(f"{(d / 'paperdex.db').absolute().as_uri()}?mode=ro", uri=True) as db:
                assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == n_papers
                assert db.execute("SELECT value FROM state WHERE key = 'model'").fetchone()[0] == MODEL
            assert not (d / "vectors.json").exists()
            load.phase = "committed, not published"
            _wait(lambda: load.count("committed, not published") >= PER_PHASE, "searches in the open window", load)

            load.phase = "publishing"
            (gate / "go").touch()
            out, err = writer.communicate(timeout=300)
            assert writer.returncode == 0, err[-2000:]
            assert f"vectors: {n_papers} attached" in out
            assert json.loads((d / "vectors.json").read_text())["model"] == MODEL
            # each worker notices the pointer within a second, then takes 2 s to load
            _wait(lambda: load.count("publishing") >= PER_PHASE, "searches while the workers load", load)
            load.phase = "after"
            _wait(
                lambda: len(load.dense_ranked) >= 20 and all(load.dense_ranked[-20:]),
                "hybrid searches ranking by vectors after the publish",
                load,
            )
            _wait(lambda: sum(load.count(p) for p in load.codes) >= TOTAL, f"{TOTAL} searches", load)

    assert not load.errors, load.errors[:20]
    assert all(set(codes) == {200} for codes in load.codes.values()), load.codes
    assert sum(sum(c.values()) for c in load.codes.values()) >= TOTAL, load.codes
    print({phase: sum(c.values()) for phase, c in load.codes.items()})

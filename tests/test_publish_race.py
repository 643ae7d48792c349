"""Two writers publishing at once (issue 26): the first is stopped inside its snapshot's
temporary folder (its file writes paused, deterministically, until the test lets it go) while
the second ingests and publishes. Before the publish lock, the second's pruning removed the
first's folder (FileNotFoundError after its data had committed) or the first swapped in an
older generation after the second's. Both must succeed and the published word index must be
the database's latest.

The suite runs RUNS rounds; PAPERDEX_RACE_RUNS=50 runs fifty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paperdex.index import lexical
from paperdex.ingest import ingest_file
from paperdex.search import Searcher
from paperdex.store import Store

PAPERS = Path(__file__).parent / "data" / "papers.jsonl"
RUNS = int(os.environ.get("PAPERDEX_RACE_RUNS", "2"))

WRITER = r"""
import sys, time
from pathlib import Path
import numpy as np
try:
    from paperdex.index import snapshots
except ImportError:  # a version without the publish lock (to see this test fail)
    snapshots = None
from paperdex.ingest import ingest_file
from paperdex.store import Store

data, sync, role, papers = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
if role == "slow":  # pause after the first array of its snapshot until the test says go
    real_save, paused = np.save, []
    def save(*a, **kw):
        real_save(*a, **kw)
        if not paused:
            paused.append(1)
            (sync / "slow-paused").touch()
            while not (sync / "go").exists():
                time.sleep(0.01)
    np.save = save
elif snapshots is not None:  # say so when it has to wait for the lock
    real_wait = snapshots._waiting
    def waiting(d):
        (sync / "fast-waiting").touch()
        real_wait(d)
    snapshots._waiting = waiting
with Store(data) as st:
    s = ingest_file(st, papers)
    assert s.added == 1, s
(sync / f"{role}-done").touch()
"""


def _wait_for(cond, what: str, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.01)


def _one_paper(src: list[str], i: int, path: Path) -> tuple[Path, str]:
    rec = json.loads(src[i])
    path.write_text(json.dumps(rec) + "\n")
    return path, rec["id"]


@pytest.mark.parametrize("run", range(RUNS))
def test_two_writers_publishing_at_once_both_land(tmp_path, run):
    lines = PAPERS.read_text().splitlines()
    d = tmp_path / "store"
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join(lines[:40]) + "\n")
    with Store(d) as st:
        ingest_file(st, first)
    slow_file, slow_id = _one_paper(lines, 40, tmp_path / "slow.jsonl")
    fast_file, fast_id = _one_paper(lines, 41, tmp_path / "fast.jsonl")
    sync = tmp_path / "sync"
    sync.mkdir()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}

    def start(role: str, f: Path) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", WRITER, str(d), str(sync), role, str(f)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )

    slow = start("slow", slow_file)
    _wait_for(lambda: (sync / "slow-paused").exists() or slow.poll() is not None, "the slow writer to pause")
    assert slow.poll() is None, slow.communicate()[0].decode()[-2000:]
    fast = start("fast", fast_file)
    # the second writer either finished (no lock: it pruned the first's folder) or waits for the lock
    _wait_for(
        lambda: (sync / "fast-waiting").exists() or fast.poll() is not None,
        "the second writer to finish or wait",
    )
    (sync / "go").touch()
    out_slow = slow.communicate(timeout=120)[0].decode()
    out_fast = fast.communicate(timeout=120)[0].decode()
    assert slow.returncode == 0, out_slow[-3000:]
    assert fast.returncode == 0, out_fast[-3000:]
    with Store(d, readonly=True) as st:
        assert json.loads((d / lexical.POINTER).read_text())["generation"] == st.generation()
        ix = lexical.load(st)
        assert ix is not None and ix.generation == st.generation() and ix.n == 42
        ids = {h.paper.id for h in Searcher(st).search("", mode="lexical", sort="newest", per_page=100).hits}
    assert {slow_id, fast_id} <= ids
    assert not list(d.glob("lexical.*.tmp"))

"""Publishing the derived indexes safely with several writers, and noticing when it did not
happen.

**One publisher at a time.** Every writer that publishes (an ingest, an embed, a tag edit
that bumps nothing, ``migrate``, a server closing a lag) takes an exclusive lock on
``publish.lock`` in the data directory (``flock``: the kernel drops it when the process dies,
so a writer killed with -9 never leaves it held). Under it the writer checks again what is
published, builds if the store moved on, writes its snapshot into its own temporary folder,
swaps the pointer and prunes. Without it, two writers publishing at once raced: one's pruning
removed the temporary folder the other was still filling (``FileNotFoundError`` after its data
had committed), and a slower writer could swap in an older generation after a newer one.
Readers never take the lock: they read the pointer, which is replaced atomically.

**The lag.** Papers are committed batch by batch and the word index is published once at the
end of a write; a writer killed in between leaves papers in the database that word search does
not see. :func:`index_lag` measures it (for ``paperdex stats`` and ``serve``), reading only.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("paperdex.snapshots")
LOCK = "publish.lock"
REPAIR_COMMAND = "paperdex migrate"  # the one command that publishes what is missing
_depth = threading.local()  # per thread: data dirs whose lock this thread holds, and how often


def _waiting(d: Path) -> None:
    """Called when another writer holds the lock (the test of the race waits for this)."""
    log.info("waiting for another writer to finish publishing in %s", d)


@contextmanager
def publish_lock(data_dir: Path) -> Iterator[None]:
    """Hold the data directory's publish lock (re-entrant within a thread)."""
    key = str(Path(data_dir).resolve())
    held = getattr(_depth, "dirs", None)
    if held is None:
        held = _depth.dirs = {}
    if held.get(key):
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    fd = os.open(Path(data_dir) / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _waiting(Path(data_dir))
            fcntl.flock(fd, fcntl.LOCK_EX)
        held[key] = 1
        try:
            yield
        finally:
            held.pop(key, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@dataclass
class Lag:
    """How far the published word index is behind the database."""

    published: int | None  # the generation of the published snapshot (None: none published)
    current: int  # the database's generation
    missing: int  # papers in the database the snapshot lacks or holds an older text of
    removed: int  # papers the snapshot still holds that the database no longer has

    def to_dict(self) -> dict:
        return {
            "published_generation": self.published,
            "generation": self.current,
            "papers_behind": self.missing,
            "papers_removed": self.removed,
            "fix": REPAIR_COMMAND,
        }

    def message(self) -> str:
        what = f"{self.missing:,} papers in the database are not in the word index"
        if self.removed:
            what += f" and {self.removed:,} deleted ones still are"
        return f"{what} (a write did not finish publishing); `{REPAIR_COMMAND}` publishes them"


def published_generation(data_dir: Path) -> int | None:
    """The generation the lexical pointer names (cheap: one small file), None if none."""
    import json

    from .lexical import POINTER

    try:
        return int(json.loads((Path(data_dir) / POINTER).read_text())["generation"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def index_lag(store) -> Lag | None:
    """The lag of the published word index behind `store`, None when there is none. Reads
    only: the pointer, the snapshot's row ids and text hashes (mapped), and each paper's
    rowid and text hash (~1 s at 1M papers, paid only when the generations differ)."""
    import numpy as np

    from . import lexical

    current = store.generation()
    if published_generation(store.data_dir) == current:
        return None
    with store.read_snapshot():
        current = store.generation()
        rows = store.rowids_and_text_hashes()
    ix = lexical.load(store)
    if ix is not None and ix.generation == current:
        return None
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    hashes = np.fromiter((lexical._hash64(r[1]) for r in rows), dtype=np.int64, count=len(rows))
    if ix is None or not ix.n:
        return Lag(None if ix is None else ix.generation, current, len(rows), 0)
    old_ids = np.asarray(ix.rowids)
    pos = np.clip(np.searchsorted(old_ids, rowids), 0, len(old_ids) - 1)
    same = old_ids[pos] == rowids
    if "hashes" in ix.arrays:
        same &= np.asarray(ix.arrays["hashes"])[pos] == hashes
    removed = int((~np.isin(old_ids, rowids)).sum())
    missing = int((~same).sum())
    if not missing and not removed:
        return None
    return Lag(ix.generation, current, missing, removed)

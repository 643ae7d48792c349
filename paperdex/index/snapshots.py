"""Publishing the derived indexes safely with several writers, and noticing when it did not
happen. This module imports nothing of paperdex.

**One publisher at a time.** A writer publishing holds an exclusive ``flock`` on ``publish.lock``
(the kernel drops it when the process dies) and under it checks what is published, builds if the
store moved on, fills its own temporary folder, swaps the pointer and prunes: no pruning removes a
folder another writer is filling, and no older generation replaces a newer one. Readers never
take it: the pointer is replaced atomically.

**A writer says it is alive** with a shared lock on ``writer.lock`` (``hold_writer``), so a server
finding the index behind tells a live writer's lag (left to it) from a dead one's (``writer_alive``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger("paperdex.index.snapshots")
LOCK = "publish.lock"
WRITER_LOCK = "writer.lock"
REPAIR_COMMAND = "paperdex migrate"  # the one command that publishes what is missing
_held = threading.local()  # per thread: the data dirs whose lock this thread holds


def _waiting(d: Path) -> None:
    """Called when another writer holds the lock (the test of the race waits for this)."""
    log.info("waiting for another writer to finish publishing in %s", d)


@contextmanager
def publish_lock(data_dir: Path, wait: bool = True) -> Iterator[bool]:
    """The data directory's publish lock, re-entrant: True once held; without `wait` False at
    once while another process holds it (a server skips a tick, not queue behind a writer)."""
    key = str(Path(data_dir).resolve())
    held = _held.__dict__.setdefault("dirs", set())
    if key in held:  # the outermost hold lets go
        yield True
        return
    fd = os.open(Path(data_dir) / LOCK, os.O_RDWR | os.O_CREAT, 0o644)  # OSError: cannot publish here
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            _waiting(Path(data_dir))
            fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(key)
        try:
            yield True
        finally:
            held.discard(key)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def hold_writer(data_dir: Path) -> int | None:
    """Say, while the returned descriptor stays open, that this process has the store open for
    writing (a shared lock); None where the lock file cannot be made (a read-only directory)."""
    try:
        fd = os.open(Path(data_dir) / WRITER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only out a `writer_alive` probe, which lets go at once
    except OSError:
        os.close(fd)
        return None
    return fd


def writer_alive(data_dir: Path) -> bool:
    """Whether some process has the store open for writing now (a probe of `hold_writer`)."""
    try:
        fd = os.open(Path(data_dir) / WRITER_LOCK, os.O_RDONLY)
    except OSError:  # never written since writers say so: none is alive
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def prune_snapshots(d: Path, prefix: str, current: str) -> None:
    """Remove old published index folders but the newest previous one (readers may still map it);
    unfinished ``.tmp`` folders go too (under the publish lock no other writer is filling one)."""
    olds = [p for p in d.glob(prefix + "*") if p.is_dir() and p.name != current]
    olds.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for p in olds:
        if p.name.endswith(".tmp") or p is not olds[0]:
            shutil.rmtree(p, ignore_errors=True)


_SHARED_LOCK = threading.Lock()
_SHARED: dict[tuple[str, str], Any] = {}


def shared(data_dir: Path | str, kind: str, stamp: Any, make: Callable[[], Any]) -> Any:
    """One snapshot per process and data directory, replaced when its stamp changes."""
    key = (str(data_dir), kind)
    with _SHARED_LOCK:
        if (got := _SHARED.get(key)) is not None and got[0] == stamp:
            return got[1]
    obj = make()
    with _SHARED_LOCK:
        _SHARED[key] = (stamp, obj)
    return obj


def stamp(path: Path) -> tuple[int, int] | None:
    """A published file's identity (mtime, size); None when it is missing."""
    try:
        st = path.stat()
        return (st.st_mtime_ns, st.st_size)
    except OSError:
        return None

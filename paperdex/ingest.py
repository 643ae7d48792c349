"""Files into the store: JSON Lines (plain or .gz) and JSON arrays of paper records, and
precomputed vectors aligned to ids.

A malformed record is reported as FILE:LINE: reason and skipped; the rest of the file lands.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from .paper import Paper, RecordError, paper_from_dict
from .store import IngestSummary, Store, StoreError

Progress = Callable[[int], None]


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8")


def read_records(path: str | Path, errors: list[str]) -> Iterator[Paper]:
    """Papers from a .jsonl/.jsonl.gz/.json file; problems are appended to `errors`."""
    path = Path(path)
    try:
        with _open_text(path) as f:
            head = f.read(1)
            while head and head.isspace():
                head = f.read(1)
            if head == "[":  # one JSON array of records
                try:
                    data = json.loads(head + f.read())
                except json.JSONDecodeError as e:
                    errors.append(f"{path}:{e.lineno}: invalid JSON: {e.msg}")
                    return
                for i, rec in enumerate(data, start=1):
                    try:
                        yield paper_from_dict(rec)
                    except RecordError as e:
                        errors.append(f"{path}: record {i}: {e}")
                return
            f.seek(0)
            for lineno, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    yield paper_from_dict(json.loads(line))
                except json.JSONDecodeError as e:
                    errors.append(f"{path}:{lineno}: invalid JSON: {e.msg} (column {e.colno})")
                except RecordError as e:
                    errors.append(f"{path}:{lineno}: {e}")
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError) as e:
        errors.append(f"{path}: unreadable: {e}")


def ingest_file(store: Store, path: str | Path, progress: Progress | None = None) -> IngestSummary:
    """Every file takes the same road as every source: merged into the paper it belongs to,
    so re-ingesting a JSONL dump never drops a venue or upvotes another source attached."""
    from .sources import ingest_with_merge

    errors: list[str] = []

    def counted() -> Iterator[Paper]:
        for i, p in enumerate(read_records(path, errors), start=1):
            if progress and i % 1000 == 0:
                progress(1000)
            yield p

    summary = ingest_with_merge(store, counted())
    summary.rejected += len(errors)
    summary.errors.extend(errors)
    return summary


def import_vectors(store: Store, vectors: str | Path, ids: str | Path, model: str) -> int:
    """Attach precomputed vectors (row k belongs to line k of the ids file) to the papers
    already in the store. Returns how many were attached; ids not in the store are skipped."""
    arr = np.load(vectors, mmap_mode="r")
    id_list = [line.strip() for line in Path(ids).read_text().splitlines() if line.strip()]
    if arr.ndim != 2 or arr.shape[0] != len(id_list):
        raise StoreError(
            f"{vectors} has {arr.shape[0] if arr.ndim else 0} rows but {ids} lists {len(id_list)} ids: "
            "they must be aligned row for line"
        )
    rows = {r[0]: (r[1], r[2]) for r in store.conn.execute("SELECT id, rowid, text_hash FROM papers")}
    items = []
    for k, pid in enumerate(id_list):
        hit = rows.get(pid)
        if hit is None:
            continue
        v = np.asarray(arr[k], dtype=np.float32)
        norm = float(np.linalg.norm(v))
        if not np.isfinite(norm) or norm == 0:
            raise StoreError(f"{vectors}: row {k} (id {pid}) is not a usable vector")
        items.append((hit[0], hit[1], v / norm))
    for i in range(0, len(items), 5000):
        store.add_vectors(model, items[i : i + 5000])
    return len(items)

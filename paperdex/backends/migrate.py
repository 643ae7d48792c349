"""Copy an embedded store into Milvus, with its vectors, resumably: in rowid order (the rowid
is the primary key, so ties break alike), with a checkpoint after each batch; a resumed run
also brings what was copied before up to the store (docs/scale-out.md, "Copying a store over").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from paperdex.index.vectors import unit
from paperdex.store import Store


@dataclass
class MigrateSummary:
    copied: int = 0
    with_vectors: int = 0
    skipped: int = 0  # already in the target at the start (resumed)
    last_rowid: int = 0
    refreshed: int = 0  # copied before, changed in the store since: written again
    removed: int = 0  # copied before, deleted from the store since
    aliases: int = 0  # ids merges moved, written or deleted to match the store's (Store.aliases)


def checkpoint_key(store: Store) -> str:
    return f"migrated:{store.store_id()}"


def migrate_store(
    store: Store,
    target,
    *,
    batch_size: int = 1000,
    restart: bool = False,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> MigrateSummary:
    """Copy `store` into `target` (a MilvusBackend)."""
    dim = store.vector_dim()
    if restart and dim and target.dim != dim:
        target.recreate(dim)  # made for vectors of another size: made again
    key = checkpoint_key(store)
    last = 0 if restart else int(target.get_state(key) or 0)
    out = MigrateSummary(last_rowid=last, skipped=store.count() - store.count_after_rowid(last))
    model = store.model
    if last:
        out.refreshed, out.removed = _refresh(store, target, last, model, batch_size)
    while limit is None or out.copied < limit:
        n = batch_size if limit is None else min(batch_size, limit - out.copied)
        rows = store.papers_after(last, n)  # every paper between two rowids: the target may replace that range whole
        if not rows:
            break
        items = _items(store, rows)
        target.write_rows(items, model=model, contiguous=True)
        last = rows[-1][0]
        target.set_state(key, str(last))
        out.copied += len(rows)
        out.with_vectors += sum(v is not None for _, _, v in items)
        out.last_rowid = last
        if progress is not None:
            progress(len(rows))
    out.aliases = target.set_aliases(store.aliases())  # an old id names its paper on both
    target.publish()  # the lexical snapshot readers of the collection search
    return out


def _items(store: Store, rows: list) -> list:
    """(rowid, paper, unit float vector or None) from the store's (rowid, paper, vector bytes)."""
    with_vec = [(r, v) for r, _, v in rows if v is not None]
    vec_of: dict[int, np.ndarray] = {}
    if with_vec:  # no vectors, no blobs to read
        vecs = unit(store.vectors_from_blobs([v for _, v in with_vec]))
        vec_of = dict(zip((r for r, _ in with_vec), vecs, strict=True))
    return [(r, p, vec_of.get(r)) for r, p, _ in rows]


def _refresh(store: Store, target, upto: int, model: str | None, batch_size: int) -> tuple[int, int]:
    """Write again the papers copied before (rowid <= `upto`) that changed, delete the gone ones."""
    mine, theirs = store.copy_states(), target.copy_states()
    changed = [r for r, state in mine.items() if r <= upto and theirs.get(r) != state]
    gone = [pk for pk in theirs if pk <= upto and pk not in mine]
    for i in range(0, len(changed), batch_size):
        target.write_rows(_items(store, store.papers_with_vectors(changed[i : i + batch_size])), model=model)
    target.delete_rows(gone)
    return len(changed), len(gone)

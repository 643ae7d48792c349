"""Publishing: the derived snapshots (the lexical index, the vectors' pointer) brought up to
the store's committed rows. A writer publishes once, when its command ends (one ingest's
batches become visible together); a server publishes for a writer that died before it could.
"""

from __future__ import annotations

from paperdex.index import lexical, vectors
from paperdex.index.snapshots import publish_lock, writer_alive
from paperdex.store import Store


def publish(store: Store) -> None:
    """Bring the published snapshots up to `store` (a read-only store too: files beside it)."""
    with publish_lock(store.data_dir):  # one publisher at a time; what is published is read under it
        if (current := lexical.load(store)) is None or current.generation != store.generation():
            lexical.publish(store, lexical.build(store, current))
        if _vectors_behind(store):
            vectors.publish(store)


def _vectors_behind(store: Store) -> bool:
    ptr = vectors.published(store)
    model = store.model
    return bool(model) and (ptr is None or ptr.get("epoch") != store.vectors_epoch() or ptr.get("model") != model)


def unpublished(store: Store) -> list[str]:
    """Which published snapshots ("lexical", "vectors") are behind the committed rows."""
    with store.read_snapshot():
        behind = []
        published = lexical.published_generation(store.data_dir)
        if published != store.generation() and (published is not None or store.count()):
            behind.append("lexical")
        if _vectors_behind(store):
            behind.append("vectors")
    return behind


def publish_if_abandoned(store: Store) -> str | None:
    """Publish what a dead writer left unpublished; what it did, for a log (None: nothing).
    OSError when the data directory cannot be written (then `REPAIR_COMMAND`)."""
    with publish_lock(store.data_dir, wait=False) as got:
        if not got or writer_alive(store.data_dir) or not (behind := unpublished(store)):
            return None
        lag = lexical.index_lag(store) if "lexical" in behind else None  # costly: only under the lock
        publish(store)
    return lag.message() if lag is not None else "the published vectors were behind the database"

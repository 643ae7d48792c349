import json

import numpy as np
import pytest

from paperdex import vectors
from paperdex.vectors import VectorIndex


@pytest.fixture
def ann(monkeypatch):
    """Use the HNSW graph even on the small fixture store."""
    monkeypatch.setattr(vectors, "EXACT_BELOW", 10)


def _query_for(store, pid):
    blob = store.conn.execute(
        "SELECT vec FROM vectors v JOIN papers p ON p.rowid = v.paper WHERE p.id = ?", (pid,)
    ).fetchone()[0]
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)


def test_index_is_saved_and_reloaded(store, ann):
    idx = VectorIndex(store).ensure()
    assert idx._ann is not None and len(idx) == store.vector_count()
    meta = json.loads((store.data_dir / "vectors.json").read_text())
    assert meta["count"] == len(idx) and meta["params"] == vectors.PARAMS
    again = VectorIndex(store).ensure()  # from files, no rebuild
    q = _query_for(store, "2505.13738")
    assert again.search(q, 1)[0][0] == store.rowid("2505.13738")


def test_missing_files_are_rebuilt_from_sqlite(store, ann):
    VectorIndex(store).ensure()
    for f in store.data_dir.glob("vectors.*"):
        f.unlink()
    idx = VectorIndex(store).ensure()
    assert len(idx) == store.vector_count()
    assert (store.data_dir / "vectors.usearch").exists()


def test_new_vectors_are_added_incrementally(store, ann):
    idx = VectorIndex(store).ensure()
    before = len(idx)
    from paperdex.paper import Paper

    store.upsert([Paper(id="new1", title="A new paper")])
    v = np.zeros(384, dtype=np.float32)
    v[0] = 1.0
    rowid = store.rowid("new1")
    store.add_vectors("all-MiniLM-L6-v2", [(rowid, "h", v)])
    graph = idx._ann
    idx.ensure()
    assert idx._ann is graph  # updated in place, not rebuilt
    assert len(idx) == before + 1
    assert idx.search(v, 1)[0][0] == rowid


def test_changed_text_drops_the_stale_vector_from_the_index(store, ann):
    idx = VectorIndex(store).ensure()
    p = store.get("2505.13738")
    rowid = store.rowid(p.id)
    p.abstract = "Entirely rewritten."
    store.upsert([p])
    idx.ensure()
    assert idx.vector(rowid) is None
    assert rowid not in [r for r, _ in idx.search(_query_for_row(idx, 0), 50)]


def _query_for_row(idx, i):
    return idx.vecs[i].astype(np.float32)


def test_filtered_search_is_exact_within_the_subset(store, ann):
    idx = VectorIndex(store).ensure()
    allowed = idx.keys[:5]
    q = idx.vecs[3].astype(np.float32)
    got = idx.search(q, 3, allowed=allowed)
    assert got[0][0] == int(idx.keys[3]) and {r for r, _ in got} <= set(allowed.tolist())


def test_lost_graph_file_is_rebuilt_from_the_saved_arrays(store, ann):
    VectorIndex(store).ensure()
    (store.data_dir / "vectors.usearch").unlink()
    idx = VectorIndex(store).ensure()
    assert idx._ann is not None and (store.data_dir / "vectors.usearch").exists()


def test_inconsistent_saved_arrays_are_not_trusted(store, ann):
    idx = VectorIndex(store).ensure()
    np.save(store.data_dir / "vectors.keys.npy", idx.keys[:-1])  # as if another writer got halfway
    again = VectorIndex(store).ensure()
    assert len(again) == store.vector_count() == len(again.keys) == len(again.vecs)

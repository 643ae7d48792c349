"""The vector snapshot lifecycle: writers publish, readers only read (vectors.py)."""

import numpy as np
import pytest

from paperdex import vectors
from paperdex.paper import Paper
from paperdex.search import Searcher
from paperdex.store import Store, unit
from paperdex.vectors import VectorIndex


@pytest.fixture
def ann(monkeypatch):
    """Use the HNSW graph even on the small fixture store."""
    monkeypatch.setattr(vectors, "EXACT_BELOW", 10)


def _query_for(store, pid):
    blob = store.conn.execute(
        "SELECT vec FROM vectors v JOIN papers p ON p.rowid = v.paper WHERE p.id = ?", (pid,)
    ).fetchone()[0]
    return unit(store.vectors_from_blobs([blob])[0])


def _exact(store, q, k, allowed=None):
    keys, vecs = store.load_vectors()
    if allowed is not None:
        m = np.isin(keys, allowed)
        keys, vecs = keys[m], vecs[m]
    s = unit(vecs) @ q
    return [int(keys[i]) for i in np.argsort(-s, kind="stable")[:k]]


def test_published_snapshot_is_loaded_and_searches_like_exact(store, ann):
    vectors.publish(store)
    idx = VectorIndex.load(store, store.model)
    assert idx is not None and idx._ann is not None and len(idx) == store.vector_count()
    q = _query_for(store, "2505.13738")
    assert idx.search(q, 1)[0][0] == store.rowid("2505.13738")
    hits = idx.search(q, 10)
    got = [r for r, _ in hits]
    assert len(set(got) & set(_exact(store, q, 10))) >= 9
    # the cosines reported are the stored rows' own, as exact search reports them
    keys, vecs = store.load_vectors()
    exact_cos = dict(zip(keys.tolist(), (unit(vecs) @ q).tolist(), strict=True))
    assert all(abs(c - exact_cos[r]) < 1e-5 for r, c in hits)
    assert [c for _, c in hits] == sorted((c for _, c in hits), reverse=True)


@pytest.mark.parametrize("subset", [20, 250])
def test_filtered_search_is_exact_within_the_subset(store, ann, monkeypatch, subset):
    monkeypatch.setattr(vectors, "EXACT_SUBSET", 100)  # 20 rows: exact; 250: graph over-fetch
    vectors.publish(store)
    idx = VectorIndex.load(store, store.model)
    keys, _ = store.load_vectors()
    allowed = keys[::3][:subset]
    q = _query_for(store, "2505.13738")
    got = [r for r, _ in idx.search(q, 5, allowed)]
    assert set(got) <= set(allowed.tolist())
    assert got == _exact(store, q, 5, allowed)


def test_readers_never_write(built_store_dir, tmp_path):
    import shutil

    d = tmp_path / "copy"
    shutil.copytree(built_store_dir, d)
    for p in d.glob("vectors*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()

    def files():  # SQLite's own -wal/-shm reader files aside
        return sorted(p.name for p in d.iterdir() if not p.name.endswith(("-wal", "-shm")))

    before = files()
    with Store(d, readonly=True) as r:
        res = Searcher(r).search("weight decay regularization")
        assert res.mode == "hybrid" and res.hits  # exact search over vectors read into memory
    assert files() == before


def test_a_recreated_store_never_adopts_the_old_index(tmp_path, built_store_dir):
    import shutil

    d = tmp_path / "s"
    shutil.copytree(built_store_dir, d)
    with Store(d) as s:
        vectors.publish(s)
        assert VectorIndex.load(s, s.model) is not None
    for p in d.glob("paperdex.db*"):
        p.unlink()
    with Store(d) as s:  # same folder, new database: new identity, no vectors
        s.upsert([Paper(id="x1", title="Quokka ecology")])
        assert VectorIndex.load(s, "all-MiniLM-L6-v2") is None
        res = Searcher(s).search("quokka")
        assert [h.paper.id for h in res.hits] == ["x1"]
        assert res.mode == "lexical"


def test_another_model_is_never_adopted(store):
    vectors.publish(store)
    assert VectorIndex.load(store, "multilingual-e5-small") is None


def test_a_stale_snapshot_still_answers_until_the_next_publish(store):
    vectors.publish(store)
    s = Searcher(store)
    before = len(s.index)
    rowid = store.rowid("2505.13738")
    store.conn.execute("DELETE FROM vectors WHERE paper = ?", (rowid,))
    store._bump_epoch()
    store.conn.commit()
    assert len(s.index) == before  # the published snapshot, consistent with itself
    store.publish()
    assert len(s.index) == before - 1


def test_old_snapshot_folders_are_pruned(store):
    for _ in range(4):
        store._bump_epoch()
        store.conn.commit()
        vectors.publish(store)
    folders = [p for p in store.data_dir.glob("vectors.*") if p.is_dir()]
    assert len(folders) <= 2


def test_publishing_after_a_few_new_vectors_updates_the_graph(store, ann):
    vectors.publish(store)
    rowid = store.rowid("2505.13738")
    q = _query_for(store, "2505.13738")
    moved = -q / np.linalg.norm(q)  # the paper's vector changes: it must be found by its new one
    store.add_vectors(store.model, [(rowid, "changed", moved)])
    idx = vectors.publish(store)
    assert len(idx) == store.vector_count()
    assert idx.search(moved.astype(np.float32), 1)[0][0] == rowid
    assert rowid not in [r for r, _ in idx.search(q, 5)]

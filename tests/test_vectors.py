"""The vector snapshot lifecycle: writers publish, readers only read (vectors.py)."""

import numpy as np
import pytest

from paperdex.index import vectors
from paperdex.index.publish import publish
from paperdex.index.vectors import VectorIndex, unit
from paperdex.paper import Paper
from paperdex.search import Searcher
from paperdex.store import Store


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


def test_search_finds_what_exact_float_search_finds(store):
    idx = VectorIndex.from_store(store)
    assert len(idx) == store.vector_count()
    q = _query_for(store, "2505.13738")
    assert idx.search(q, 1)[0][0] == store.rowid("2505.13738")
    hits = idx.search(q, 10)
    assert [r for r, _ in hits] == _exact(store, q, 10)
    # the cosines reported are the stored rows' own, as float search reports them
    keys, vecs = store.load_vectors()
    exact_cos = dict(zip(keys.tolist(), (unit(vecs) @ q).tolist(), strict=True))
    assert all(abs(c - exact_cos[r]) < 1e-5 for r, c in hits)
    assert [c for _, c in hits] == sorted((c for _, c in hits), reverse=True)


@pytest.mark.parametrize("share", [0.1, 0.6])  # a gathered subset; the whole scan, masked
def test_filtered_search_is_exact_within_the_subset(store, share):
    idx = VectorIndex.from_store(store)
    keys, _ = store.load_vectors()
    allowed = keys[: max(3, int(len(keys) * share))][::-1]
    assert (len(allowed) > vectors.SCAN_ALL_ABOVE * len(keys)) == (share > vectors.SCAN_ALL_ABOVE)
    q = _query_for(store, "2505.13738")
    got = [r for r, _ in idx.search(q, 5, allowed)]
    assert set(got) <= set(allowed.tolist())
    assert got == _exact(store, q, 5, allowed)
    assert [r for r, _ in idx.search(q, 500, allowed[:3])] == _exact(store, q, 3, allowed[:3])


@pytest.mark.parametrize("n", [12, 5000, 300_001, 1_000_003])
def test_search_finds_the_best_rows_wherever_they_lie(n):
    """Ten planted rows beat every other, one in the last rows past the last whole block of the
    scan's top-k (vectors._top), the rest spread over the index: search finds all ten, in order."""
    rng = np.random.default_rng(7)
    vecs = np.zeros((n, 8), dtype=np.int8)
    vecs[:, 0] = rng.integers(-100, 101, n)  # cosine with the first axis at most 0.62
    vecs[:, 1] = 127
    vecs[:, 2:] = rng.integers(-127, 128, (n, 6))
    planted = [n - 1, *np.linspace(0, n - 2, 9).astype(int).tolist()]
    for j, at in enumerate(planted):  # cosine 127 / sqrt(127² + j²): 1, then a little less each
        vecs[at] = [127, j, 0, 0, 0, 0, 0, 0]
    idx = VectorIndex(np.arange(n, dtype=np.int64) * 2 + 1, vecs, {"model": "m", "epoch": 1})
    q = np.eye(8, dtype=np.float32)[0]
    assert [r for r, _ in idx.search(q, 10)] == [2 * at + 1 for at in planted]


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
        assert vectors.published(s) is not None
    for p in d.glob("paperdex.db*"):
        p.unlink()
    with Store(d) as s:  # same folder, new database: new identity, no vectors
        s.upsert([Paper(id="x1", title="Quokka ecology")])
        assert vectors.published(s) is None and VectorIndex.current(s) is None
        res = Searcher(s).search("quokka")
        assert [h.paper.id for h in res.hits] == ["x1"]
        assert res.mode == "lexical"


def test_a_stale_snapshot_still_answers_until_the_next_publish(store):
    vectors.publish(store)
    s = Searcher(store)
    before = len(s.index)
    store.delete("2505.13738")  # and its vector
    assert len(s.index) == before  # the published snapshot, consistent with itself
    publish(store)
    assert len(s.index) == before - 1


def test_publishing_removes_the_folders_of_older_formats(store):
    old = store.data_dir / "vectors.7.123"  # format 4: rows and a graph, a second copy
    old.mkdir()
    (old / "vecs.npy").write_bytes(b"x" * 100)
    assert vectors.publish(store)["count"] == store.vector_count()
    assert not old.exists() and not [p for p in store.data_dir.glob("vectors.*") if p.is_dir()]


def test_a_changed_vector_is_found_by_its_new_direction_after_publishing(store):
    vectors.publish(store)
    rowid = store.rowid("2505.13738")
    q = _query_for(store, "2505.13738")
    moved = -q / np.linalg.norm(q)  # the paper's vector changes: it must be found by its new one
    store.add_vectors(store.model, [(rowid, "changed", moved)])
    publish(store)
    idx = Searcher(store).index
    assert len(idx) == store.vector_count()
    assert idx.search(moved.astype(np.float32), 1)[0][0] == rowid
    assert rowid not in [r for r, _ in idx.search(q, 5)]


def test_rows_answer_as_a_float32_matrix_would(store):
    """Recommendations multiply every paper's vector without a float32 copy of them all:
    the products match float32's within 3e-4 (one int8 pass of the weights alone: 2e-2 off)."""
    idx = VectorIndex.from_store(store)
    keys, vecs = store.load_vectors()
    F = unit(vecs)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(F.shape[1]).astype(np.float32)
    W = rng.standard_normal((F.shape[1], 3)).astype(np.float32)
    order = np.r_[keys[::-1][:50], 10**9]  # a corpus's order, and a paper without a vector
    rows = idx.rows(order)
    want = np.zeros((len(order), F.shape[1]), dtype=np.float32)
    want[:50] = F[::-1][:50]
    assert rows.shape == want.shape and list(rows.ok) == [True] * 50 + [False]
    assert np.allclose(rows[np.arange(len(order))], want) and np.allclose(rows[3], want[3])
    assert np.abs(rows @ w - want @ w).max() < 3e-4
    assert np.abs(rows @ W - want @ W).max() < 3e-4 and (rows @ W).shape == (len(order), 3)
    every = idx.rows(keys)
    assert every.same and np.abs(every @ w - F @ w).max() < 3e-4


@pytest.mark.parametrize("share", [0.05, 0.2, 0.6])
def test_scanning_within_a_filter_gives_what_the_whole_scan_gives(store, share):
    """`scan_within` (a filtered query that needs no close matches over the whole store) and
    `nearest` answer as `scan`'s parts do: the same nearest within the filter, the same
    cosines for the filter's rows, the same nearest over all."""
    idx = VectorIndex.from_store(store)
    rng = np.random.default_rng(5)
    allowed = np.sort(rng.choice(idx.keys, max(1, int(share * len(idx.keys))), replace=False))
    keys, _ = store.load_vectors()
    for rowid in keys[:2]:
        q = idx.vector(int(rowid))
        nearest, ranked, every = idx.scan(q, 10, 20, allowed)
        ranked_in, every_in = idx.scan_within(q, 20, allowed)
        assert ranked_in == ranked
        assert np.array_equal(idx.cosines_of(every_in, allowed), idx.cosines_of(every, allowed))
        assert idx.nearest(q, 10) == nearest


def test_the_best_scores_are_the_set_argpartition_picks_or_none_at_a_tie():
    rng = np.random.default_rng(3)
    for n, m in ((20_000, 500), (20_000, 64), (3_000, 400), (700, 699)):
        s = rng.standard_normal(n).astype(np.float32)
        got = vectors._best(s, m)
        assert got is not None and got.tolist() == sorted(np.argpartition(-s, m - 1)[:m].tolist())
        tied = s.copy()
        tied[got[:2]] = tied[np.setdiff1d(np.arange(n), got)].max()  # two of them now tie with one left out
        assert vectors._best(tied, m) is None
    assert vectors._best(s, n) is None  # every score: nothing to choose


def test_a_rows_float_product_does_not_depend_on_its_place_among_four_k_rows():
    """`_exact` rescores `_best`'s candidates in ascending order, not in the scans' argpartition
    order: the BLAS loaded must give a row the same float product wherever it stands in a
    matrix of a multiple of BLAS_ROWS rows (OpenBLAS does not for the last n % 4 of other
    sizes), or a cosine would move in its last bit."""
    rng = np.random.default_rng(5)
    n = 20_000
    idx = VectorIndex(np.arange(n, dtype=np.int64), rng.integers(-127, 128, (n, 384), dtype=np.int8), {})
    for m in (64, 400, 500, 8 * vectors.BLAS_ROWS):
        assert m % vectors.BLAS_ROWS == 0
        for _ in range(5):
            q = unit(rng.standard_normal(384).astype(np.float32))
            cand, perm = rng.choice(n, m, replace=False), rng.permutation(m)
            assert np.array_equal((idx._unit(cand) @ q)[perm], idx._unit(cand[perm]) @ q)


@pytest.mark.parametrize("share", [None, 0.05])
def test_the_best_candidates_give_the_lists_the_scans_order_gives(share, monkeypatch):
    """`_exact` with `_best`'s candidates and with the scans' own (`_as_scanned`): the same
    (rowid, cosine) lists to the last bit, over every row and within a filter."""
    rng = np.random.default_rng(5)
    n = 20_000
    idx = VectorIndex(np.arange(n, dtype=np.int64) * 3, rng.integers(-127, 128, (n, 384), dtype=np.int8), {})
    pos = None if share is None else np.sort(rng.choice(n, int(n * share), replace=False))
    for _ in range(5):
        q = unit(rng.standard_normal(384).astype(np.float32))
        scores = idx._cosines8(vectors.quantize(q), pos)
        fast = [idx._exact(q, scores, k, pos) for k in (10, 100, 200)]
        monkeypatch.setattr(vectors, "_best", lambda s, m: None)
        assert [idx._exact(q, scores, k, pos) for k in (10, 100, 200)] == fast
        monkeypatch.undo()


@pytest.mark.parametrize("gap", [1, 3, 50])  # rowids one after another, with deletions, too sparse for a table
def test_rowids_are_found_by_the_table_as_by_binary_search(gap):
    from paperdex.index.lexical import find_sorted

    rng = np.random.default_rng(gap)
    keys = np.sort(rng.choice(2000 * gap, 2000, replace=False)).astype(np.int64)
    idx = VectorIndex(keys, np.ones((len(keys), 4), dtype=np.int8), {})
    assert (idx._at is None) == (gap == 50)
    asked = np.concatenate([rng.integers(-5, 2000 * gap + 5, 3000), keys[::7], [-1, 0, keys[-1], keys[-1] + 1]])
    pos, ok = idx._find(asked)
    want_pos, want_ok = find_sorted(keys, asked)
    assert np.array_equal(ok, want_ok) and np.array_equal(pos[ok], want_pos[want_ok])
    assert pos.min() >= 0 and pos.max() < len(keys)


def _clustered(n: int, dim: int = 64, seed: int = 5) -> tuple[VectorIndex, np.ndarray]:
    """n rows around 40 directions, as a corpus's embeddings cluster by topic (random rows have
    no best rows to find), and the directions."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((40, dim)).astype(np.float32))
    rows = centres[rng.integers(0, 40, n)] * 2 + rng.standard_normal((n, dim)).astype(np.float32) / np.sqrt(dim)
    return VectorIndex(np.arange(n, dtype=np.int64) * 3 + 2, vectors.quantize(rows), {}), centres


def _whole_scan(idx: VectorIndex) -> VectorIndex:
    """The same rows with no first pass: every scan reads every int8 row."""
    whole = VectorIndex(idx.keys, idx.vecs, {})
    whole._four = None
    return whole


@pytest.mark.parametrize("tie", [False, True])
def test_the_first_pass_gives_what_scanning_every_row_gives(tie, monkeypatch):
    """Over rows that cluster, the four-bit first pass keeps the int8 candidates a whole scan
    would pick: the same lists, cosines to the bit, over all rows, within a loose filter and
    for a row's own vector, which comes first; and with a tie at the cut (`_best` None), which
    the scan of every row settles."""
    idx, centres = _clustered(20_000)
    assert idx._four is not None
    if tie:
        monkeypatch.setattr(vectors, "_best", lambda s, m: None)
    whole = _whole_scan(idx)
    rng = np.random.default_rng(9)
    allowed = np.sort(rng.choice(idx.keys, 12_000, replace=False))  # loose: the whole scan, masked
    for c in centres[:5]:
        q = unit(c + rng.standard_normal(len(c)).astype(np.float32) * 0.3)
        assert idx.scan(q, 100, 200)[:2] == whole.scan(q, 100, 200)[:2]
        got, want = idx.scan(q, 100, 50, allowed), whole.scan(q, 100, 50, allowed)
        assert got[:2] == want[:2] and len(got[1]) == 50
        assert set(r for r, _ in got[1]) <= set(allowed.tolist())  # a filter still filters
        assert idx.scan_within(q, 50, allowed)[0] == got[1]
        assert idx.nearest(q, 100) == whole.nearest(q, 100)
    for at in (0, 777, 19_999):
        own = idx.vector(int(idx.keys[at]))
        assert idx.search(own, 10)[0][0] == idx.keys[at]
        assert idx.search(own, 10) == whole.search(own, 10)


def test_cosines_on_demand_are_the_whole_scans_to_the_bit():
    """`cosines_of` scores the rows asked alone: the int8 cosines a scan of every row gives
    them, NaN for a rowid with no vector, -inf outside a narrow filter's rows."""
    idx, centres = _clustered(20_000)
    q = unit(centres[3])
    every = idx._cosines8(vectors.quantize(q))
    rng = np.random.default_rng(2)
    asked = np.concatenate([rng.choice(idx.keys, 700), [1, 10**9]])  # the last two: no vector
    _, _, state = idx.scan(q, 100, 200)
    got = idx.cosines_of(state, asked)
    assert np.array_equal(got[:-2], every[np.searchsorted(idx.keys, asked[:-2])])
    assert np.isnan(got[-2:]).all()
    allowed = np.sort(rng.choice(idx.keys, 1_000, replace=False))  # narrow: its own rows scanned
    inside = np.isin(asked[:-2], allowed)
    for given in (allowed, allowed[::-1]):  # in rowid order, as the engine's filters; or not
        got = idx.cosines_of(idx.scan_within(q, 200, given)[1], asked[:-2])
        assert np.array_equal(got[inside], every[np.searchsorted(idx.keys, asked[:-2][inside])])
        assert (got[~inside] == -np.inf).all()

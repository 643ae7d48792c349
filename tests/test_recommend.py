"""Recommendations for a tag (on the 314-paper fixture) and related work for a pasted text."""

from __future__ import annotations

import numpy as np
import pytest

from paperdex import library as L
from paperdex import recommend as R


def _topic(store, category: str) -> list[str]:
    rows = store.conn.execute(
        "SELECT p.id FROM papers p JOIN paper_categories c ON c.paper = p.rowid WHERE c.category = ? ORDER BY p.rowid",
        (category,),
    )
    return [r[0] for r in rows]


def _hits(ranked: list[str], held: set[str], k: int = 10) -> int:
    return sum(1 for pid in ranked[:k] if pid in held)


def test_default_beats_random_and_is_not_worse_than_centroid(store):
    """cs.RO is 28 of 314 papers: tag 10 of them, hold out the rest; over three draws the
    default finds far more of them than chance and at least as many as the centroid."""
    topic = _topic(store, "cs.RO")
    assert len(topic) >= 20
    rng = np.random.default_rng(3)
    got, cen, n_cand = 0, 0, store.count() - 10
    for i in range(3):
        perm = list(rng.permutation(topic))
        tag, held = perm[:10], set(perm[10:])
        name = f"robots{i}"
        L.add_to_tag(store, name, tag)
        recs = R.recommend(store, name, k=10, explain=False)
        assert len(recs.items) == 10 and recs.positives == 10
        assert not {r.paper.id for r in recs.items} & set(tag)
        got += _hits([r.paper.id for r in recs.items], held)
        # nearest centroid (dense) over the same candidates
        c = R.corpus(store)
        pos = c.docs([store.rowid(x) for x in tag])
        s = c.D @ c.D[pos].mean(axis=0)
        s[pos] = -np.inf
        order = np.argsort(-s, kind="stable")[:10]
        cen += _hits([store.get_many([int(c.rowids[d])])[int(c.rowids[d])].id for d in order], held)
    expected_random = 3 * 10 * len(held) / n_cand
    assert got >= 3 * expected_random, (got, expected_random)
    assert got >= cen, (got, cen)


def test_recommendations_explain_skip_dismissed_and_are_cached(store):
    topic = _topic(store, "cs.RO")
    L.add_to_tag(store, "r", topic[:8])
    first = R.recommend(store, "r", k=5)
    assert first.trained and first.items
    top = first.items[0]
    assert top.reason.neighbours and top.reason.neighbours[0][0] in topic[:8]
    assert all(-1.0 <= s <= 1.0001 for _, _, s in top.reason.neighbours)
    assert top.reason.terms and all(len(t) > 2 for t in top.reason.terms)
    again = R.recommend(store, "r", k=5)
    assert not again.trained and [r.paper.id for r in again.items] == [r.paper.id for r in first.items]
    # "not interested" leaves the list and retrains the model
    L.dismiss(store, [top.paper.id])
    after = R.recommend(store, "r", k=5)
    assert after.trained and top.paper.id not in {r.paper.id for r in after.items}
    # restricted to some papers (a day's)
    within = [store.rowid(r.paper.id) for r in after.items[2:4]]
    only = R.recommend(store, "r", k=5, within=within)
    assert {r.paper.id for r in only.items} == {r.paper.id for r in after.items[2:4]}
    d = after.to_dict()
    assert d["recommendations"][0]["why"]["nearest_saved"]


def test_empty_tag_and_unknown_tag(store):
    L.create_tag(store, "empty")
    r = R.recommend(store, "empty")
    assert r.items == [] and r.notices
    with pytest.raises(L.LibraryError):
        R.recommend(store, "nope")


def test_related_finds_the_pasted_abstract(searcher):
    store = searcher.store
    p = store.get(store.conn.execute("SELECT id FROM papers ORDER BY rowid LIMIT 1 OFFSET 40").fetchone()[0])
    res = R.related(store, p.abstract, 10, searcher=searcher)
    assert res.hits and res.hits[0].paper.id == p.id
    assert 3 <= len(res.key_terms) <= R.KEY_TERMS
    top = res.hits[0]
    assert top.lexical_rank == 1 or top.dense_rank == 1
    assert R.related(store, "", 5, searcher=searcher).notices


def test_key_terms_are_distinctive_words(searcher):
    text = "We propose a new method. The method uses speculative decoding with a draft model. " * 3
    terms = R.key_terms(searcher.store, text, 5)
    assert "speculative" in terms or "draft" in terms
    assert "the" not in terms and "we" not in terms

"""The lexical build tokenises papers a block at a time to bound its memory (issue #13); the
snapshot it makes must not depend on the block size, on a full build or an incremental one."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from paperdex import lexical
from paperdex.text import stem

ONE_BLOCK = 10**9


def assert_same(a: lexical.LexIndex, b: lexical.LexIndex) -> None:
    assert sorted(a.arrays) == sorted(b.arrays)
    for name in a.arrays:
        x, y = np.asarray(a.arrays[name]), np.asarray(b.arrays[name])
        assert x.dtype == y.dtype, name
        assert x.shape == y.shape, name
        assert np.array_equal(x, y), name
    assert a.meta == b.meta


@pytest.mark.parametrize("block", [1, 7, 100])
def test_full_build_does_not_depend_on_the_block_size(ro_store, block):
    whole = lexical.build(ro_store, block=ONE_BLOCK)
    assert whole.n == ro_store.count() and len(whole.arrays["bigrams"]) > 0
    assert_same(lexical.build(ro_store, block=block), whole)


def test_incremental_build_does_not_depend_on_the_block_size(store):
    previous = lexical.load(store)
    assert previous is not None
    ids = [r[0] for r in store.conn.execute("SELECT id FROM papers ORDER BY rowid")]
    changed = [store.get(pid) for pid in ids[3::37]]
    changed = [dataclasses.replace(p, title=p.title + " zyzzyva quokkanator") for p in changed]
    added = [store.get(pid) for pid in ids[5::53]]
    added = [dataclasses.replace(p, id=p.id + "x", title="Novel frobnication " + p.title, extra={}) for p in added]
    store.upsert(changed + added, publish=False)
    for pid in ids[10::41]:
        store.delete(pid, publish=False)

    whole = lexical.build(store, previous, block=ONE_BLOCK)
    assert whole.n == len(ids) + len(added) - len(ids[10::41])
    assert whole.term(stem("quokkanator")) is not None and whole.term(stem("frobnication")) is not None
    for block in (1, 7, 100):
        assert_same(lexical.build(store, previous, block=block), whole)
    # what was carried is what a fresh build of the same texts holds
    fresh = lexical.build(store, block=7)
    for name in ("rowids", "dates", "catdoc", "title_len", "abstract_len"):
        assert np.array_equal(fresh.arrays[name], whole.arrays[name]), name
    learn = stem("learning")
    assert np.array_equal(whole.term_docs(whole.term(learn)), fresh.term_docs(fresh.term(learn)))

"""The lexical build tokenises papers a block at a time to bound its memory (issue #13); the
snapshot it makes must not depend on the block size, on a full build or an incremental one."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from paperdex.index import lexical
from paperdex.paper import index_text
from paperdex.search import rank
from paperdex.store import Store
from paperdex.text import STOPWORDS, stem, tokens

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
    assert whole.n == ro_store.count() and len(whole.arrays["bigram_doc"]) > len(whole.arrays["bigrams"]) > 0
    assert_same(lexical.build(ro_store, block=block), whole)


def test_incremental_build_does_not_depend_on_the_block_size(store):
    previous = lexical.load(store)
    assert previous is not None
    ids = [r[0] for r in store.conn.execute("SELECT id FROM papers ORDER BY rowid")]
    changed = [store.get(pid) for pid in ids[3::37]]
    changed = [dataclasses.replace(p, title=p.title + " zyzzyva quokkanator") for p in changed]
    added = [store.get(pid) for pid in ids[5::53]]
    added = [dataclasses.replace(p, id=p.id + "x", title="Novel frobnication " + p.title, extra={}) for p in added]
    store.upsert(changed + added)
    for pid in ids[10::41]:
        store.delete(pid)

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


def test_the_pair_sort_split_by_first_term_gives_the_same_arrays(store, monkeypatch):
    """Beyond V^2 * N > 2^63 the (pair, document) keys are sorted one range of first terms at
    a time; a lower bound forces that path on the fixture. The sorted keys and the carried
    pairs are read back in chunks; tiny ones give the same arrays too."""
    previous = lexical.load(store)
    whole = lexical.build(store, block=ONE_BLOCK)
    ids = [r[0] for r in store.conn.execute("SELECT id FROM papers ORDER BY rowid")]
    changed = [dataclasses.replace(store.get(pid), title="Quokkanator weight decay") for pid in ids[::29]]
    store.upsert(changed)
    full, incremental = lexical.build(store, block=7), lexical.build(store, previous, block=7)
    V, N = whole.meta["terms"], whole.n
    monkeypatch.setattr(lexical, "_KEY_MAX", (V // 6) * V * N)  # about 7 ranges
    assert_same(lexical.build(store, block=7), full)
    assert_same(lexical.build(store, previous, block=7), incremental)
    assert_same(lexical.build(store, previous, block=ONE_BLOCK), incremental)
    monkeypatch.setattr(lexical, "_CHUNK", 5)  # runs of a pair and duplicates across chunks
    assert_same(lexical.build(store, block=7), full)
    assert_same(lexical.build(store, previous, block=7), incremental)


def _texts(store):
    rows = store.conn.execute("SELECT title, abstract, authors FROM papers ORDER BY rowid")
    for title, abstract, authors in rows:
        yield title, abstract, " ".join(json.loads(authors))


def _stems(text: str) -> list[str]:
    return [stem(w) for w in tokens(index_text(text)) if w not in STOPWORDS]


def test_the_pairs_are_the_adjacent_words_of_each_title_and_abstract(ro_store):
    ix = lexical.build(ro_store, block=7)
    want = set()
    for doc, (title, abstract, _) in enumerate(_texts(ro_store)):
        for text in (title, abstract):
            s = _stems(text)
            want.update((a, b, doc) for a, b in zip(s, s[1:], strict=False))
    got = set()
    ptr, nexts, pairs = ix.pair_ptr, ix.pair_next, ix.pairs
    assert ix.arrays["bigram_doc"].dtype == np.int32 and ix.arrays["bigram_doc_ptr"].dtype == np.int32
    for a in range(len(ix.vocab)):
        assert np.all(np.diff(nexts[ptr[a] : ptr[a + 1]]) > 0)  # sorted, distinct
        for k in range(ptr[a], ptr[a + 1]):
            docs = pairs.docs(k)
            assert len(docs) > 0 and np.all(np.diff(docs) > 0)
            got.update((ix.vocab[a], ix.vocab[nexts[k]], int(d)) for d in docs)
    assert got == want
    # the lookups the phrase bonus makes
    a, b = ix.term(stem("weight")), ix.term(stem("decay"))
    with_pair = sorted(d for x, y, d in want if (x, y) == (stem("weight"), stem("decay")))
    assert len(with_pair) > 0 and ix.pair_docs(a, b).tolist() == with_pair
    assert np.flatnonzero(ix.pair_mask(a, b)).tolist() == with_pair
    assert ix.pair_mask(b, a).any() == (len(ix.pair_docs(b, a)) > 0)
    assert len(ix.pair_docs(len(ix.vocab) - 1, 0)) == 0
    # the phrase bonus counts each pair's papers among its candidates (a pair given twice, twice)
    pairs = [(stem("weight"), stem("decay")), ("qwxzv", stem("decay")), (stem("weight"), stem("decay"))]
    cand = np.arange(ix.n)
    assert rank.pair_counts(ix, cand, pairs).tolist() == [2.0 * (int(d) in with_pair) for d in cand]


def test_a_common_terms_column_holds_its_postings_scores(ro_store, monkeypatch):
    ix = lexical.build(ro_store, block=7)
    common = [t for t in range(len(ix.vocab)) if ix.df[t] >= lexical.COLUMN_SHARE * ix.n]
    rare = [t for t in range(len(ix.vocab)) if ix.df[t] < lexical.COLUMN_SHARE * ix.n]
    assert common and rare
    assert all(ix.column(t) is None and ix.column_mask(t) is None for t in rare)
    monkeypatch.setattr(lexical, "COLUMN_BYTES", 3 * 5 * ix.n)  # three columns and their masks kept
    for t in common:
        d, sc = ix.term_scores(t)
        col, held = ix.column(t), ix.column_mask(t)
        assert col is not None and col.dtype == np.float32 and not col.flags.writeable
        assert np.flatnonzero(col > 0).tolist() == d.tolist() and np.array_equal(col[d], sc)
        assert held is not None and not held.flags.writeable and np.flatnonzero(held).tolist() == d.tolist()
        assert len(ix._columns) <= 3
    assert list(ix._columns) == common[-3:]  # the last used
    assert ix.column(common[0]) is not None and list(ix._columns)[-1] == common[0]


def test_the_vocabulary_is_utf8_with_offsets(ro_store, monkeypatch):
    ix = lexical.build(ro_store, block=7)
    stems = sorted({s for texts in _texts(ro_store) for t in texts for s in _stems(t)})
    assert ix.arrays["vocab"].dtype == np.uint8 and ix.arrays["vocab_ptr"].dtype == np.int64
    assert ix.vocab.tolist() == stems and len(ix.vocab) == len(stems) == ix.meta["terms"]
    assert [ix.term(s) for s in stems] == list(range(len(stems)))
    assert [ix.term(s) for s in stems] == list(range(len(stems)))  # again, from the kept answers
    monkeypatch.setattr(lexical, "TERMS_KEPT", 5)  # kept answers dropped as they pass it
    ix._terms.clear()
    assert [ix.term(s) for s in stems] == list(range(len(stems))) and len(ix._terms) <= 5
    assert ix.vocab[-1] == stems[-1] and ix.vocab[np.int32(3)] == stems[3]
    for missing in ("", "0", stems[0][:-1] + "\x00", stems[-1] + "z", "zzzzzzzz", "\U0010ffff"):
        assert missing in stems or ix.term(missing) is None, missing
    for prefix in ("", "a", "learn", "trans", "z", "zzzzzz", stems[-1]):
        want = [i for i, s in enumerate(stems) if s.startswith(prefix)]
        assert sorted(ix.prefix_terms(prefix, limit=10**9).tolist()) == want, prefix


def test_vocab_lookups_on_other_scripts():
    words = {f"w{i:03d}" for i in range(300)} | {"über", "straße", "优化器", "优化", "𝔸x", "é", "ed\udc80"}
    enc = sorted(w.encode("utf-8", "surrogatepass") for w in words)
    ptr = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in enc], out=ptr[1:])
    v = lexical.Vocab(np.frombuffer(b"".join(enc), dtype=np.uint8), ptr)
    ordered = sorted(words)  # code point order is UTF-8 byte order
    assert v.tolist() == ordered and [v[i] for i in range(len(v))] == ordered
    for i, w in enumerate(ordered):
        key = w.encode("utf-8", "surrogatepass")
        assert v.find(key) == i
        assert v.find(key + b"\x00") == i + 1 and v.find(key[:-1]) <= i
    assert v.find(b"") == 0 and v.find(b"\xff") == len(v)


def test_a_snapshot_of_another_format_is_refused_and_migrate_republishes_it(store):
    from click.testing import CliRunner

    from paperdex.cli import cli

    ix = lexical.load(store)
    assert ix is not None and ix.meta["format"] == lexical.FORMAT == 7
    pointer = store.data_dir / lexical.POINTER
    old = json.loads(pointer.read_text())
    pointer.write_text(json.dumps({**old, "format": 6}))  # a CJK run held whole (before text.cjk_grams)
    assert lexical.load(store) is None  # readers neither adopt nor convert it
    store.close()
    r = CliRunner().invoke(cli, ["--data-dir", str(store.data_dir), "migrate"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    with Store(store.data_dir) as s:
        again = lexical.load(s)
        assert again is not None and again.meta["format"] == lexical.FORMAT
        assert json.loads(pointer.read_text())["format"] == lexical.FORMAT
        built = lexical.build(s)
    assert_same(built, lexical.LexIndex(again.arrays, {k: v for k, v in again.meta.items() if k != "published"}))


def test_a_snapshot_finds_rowids_by_its_table_as_by_binary_search():
    from paperdex.index.lexical import find_sorted, position_table

    rng = np.random.default_rng(2)
    for gap in (1, 3, 50):
        keys = np.sort(rng.choice(500 * gap, 500, replace=False)).astype(np.int64)
        table = position_table(keys)
        assert (table is None) == (gap == 50)
        asked = np.concatenate([rng.integers(-3, 500 * gap + 3, 800), keys[::5]])
        pos, ok = find_sorted(keys, asked, table)
        want_pos, want_ok = find_sorted(keys, asked)
        assert np.array_equal(ok, want_ok) and np.array_equal(pos[ok], want_pos[want_ok])


def test_a_store_without_chinese_is_indexed_as_before_and_a_chinese_title_as_bigrams(ro_store, monkeypatch):
    """Format 7 holds a CJK run of a title or an abstract as its bigrams (`text.cjk_grams`); the
    fixture's 314 English papers' snapshot is, array for array, the one format 6 built (every
    field read by `tokens`), so an English store's scores and ranks stay as they were."""
    from paperdex.text import cjk_grams, index_words

    new = lexical.build(ro_store)
    monkeypatch.setattr(lexical, "index_words", tokens)  # format 6's rule
    assert_same(new, lexical.build(ro_store))
    assert index_words("Diffusion 扩散模型 edits, 图") == ["diffusion", "扩散", "散模", "模型", "edits", "图"]
    assert cjk_grams("扩散") == ["扩散"] and cjk_grams("图") == ["图"]


def test_a_chinese_title_is_indexed_as_bigrams_and_its_authors_whole(store, tmp_path):
    from paperdex.ingest import ingest_file

    path = tmp_path / "zh.jsonl"
    row = {"id": "zh-1", "title": "基于扩散模型的图像编辑", "abstract": "x", "authors": ["李四"]}
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    ingest_file(store, path)
    ix = lexical.load(store)
    assert ix is not None and ix.meta["format"] == 7
    (doc,) = ix.docs_of_rowids(np.array([store.rowid("zh-1")]))
    for w in ["扩散", "散模", "模型", "图像", "编辑"]:
        t = ix.term(w)
        assert t is not None and doc in ix.term_docs(t, "title"), w
    assert ix.term("基于扩散模型的图像编辑") is None  # the run whole, as format 6 held it
    assert doc in ix.term_docs(ix.term("李四"), "authors") and ix.term("李") is None
    assert len(ix.pair_docs(ix.term("扩散"), ix.term("散模"))) == 1  # standing together

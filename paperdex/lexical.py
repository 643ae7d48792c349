"""The lexical side in memory: an inverted index as plain sparse arrays (the bm25s approach),
scored exactly, with no term dropped.

SQLite stays the source of truth. A writer (ingest, delete) builds this index from it and
publishes it as a snapshot next to the database: a folder of ``.npy`` arrays plus a versioned
``lexical.json`` naming the store, its change counter and the parameters. Readers map the
published arrays (``mmap``, shared by every process through the page cache) and never write;
when no snapshot exists they build one in memory for themselves.

What a snapshot holds, per document (rows sorted by SQLite rowid): its date, its categories,
and for every term (Porter stem of an NFKC-folded, case-folded, accent-stripped word) the
documents containing it in each field and a precomputed BM25F score. A query is then a few
numpy operations over arrays of length N: masks for what matches, a float accumulator for
how well.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from array import array
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .paper import index_text
from .store import Store, prune_snapshots
from .text import STOPWORDS, stemmer, tokens

FORMAT = 3
# BM25F (Robertson & Zaragoza 2009): per-field length-normalised term frequencies are
# weighted and summed before the saturation k1. A word in the title says more about what
# a paper is than the same word deep in its abstract.
PARAMS = {
    "k1": 1.2,
    "b": {"title": 0.5, "abstract": 0.75, "authors": 0.3},
    "w": {"title": 3.0, "abstract": 1.0, "authors": 2.0},
}
FIELDS = ("title", "abstract", "authors")
# --- the snapshot -----------------------------------------------------------------------


@dataclass
class Postings:
    """CSC layout: documents of term t are doc[ptr[t]:ptr[t+1]] (sorted)."""

    ptr: np.ndarray  # int64 [V+1]
    doc: np.ndarray  # int32 [nnz]

    def docs(self, t: int) -> np.ndarray:
        return self.doc[self.ptr[t] : self.ptr[t + 1]]


class LexIndex:
    """One immutable snapshot of the lexical index."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict) -> None:
        self.meta = meta
        self.arrays = arrays
        self.rowids: np.ndarray = arrays["rowids"]
        self.dates: np.ndarray = arrays["dates"]  # int32 YYYYMMDD, 0 = no date
        self.cat_ptr: np.ndarray = arrays["cat_ptr"]
        self.cat_ids: np.ndarray = arrays["cat_ids"]
        self.catdoc_ptr: np.ndarray = arrays["catdoc_ptr"]
        self.catdoc: np.ndarray = arrays["catdoc"]
        self.cat_names: list[str] = meta["categories"]
        self.cat_lookup = {c.lower(): i for i, c in enumerate(self.cat_names)}
        self.vocab: np.ndarray = arrays["vocab"]  # sorted stems
        self.df: np.ndarray = arrays["df"]
        self.bm = Postings(arrays["bm_ptr"], arrays["bm_doc"])
        self.bm_score: np.ndarray = arrays["bm_score"]
        self.field = {f: Postings(arrays[f"{f}_ptr"], arrays[f"{f}_doc"]) for f in FIELDS}
        self.n = len(self.rowids)

    # identity of what it was built from
    @property
    def generation(self) -> int:
        return int(self.meta["generation"])

    @property
    def store_id(self) -> str:
        return str(self.meta["store_id"])

    def term(self, stemmed: str) -> int | None:
        i = int(np.searchsorted(self.vocab, stemmed))
        return i if i < len(self.vocab) and self.vocab[i] == stemmed else None

    def prefix_terms(self, prefix: str, limit: int = 256) -> np.ndarray:
        """Term ids whose stem starts with `prefix`, most frequent first, at most `limit`."""
        lo = int(np.searchsorted(self.vocab, prefix))
        hi = int(np.searchsorted(self.vocab, prefix + "\U0010ffff"))
        ids = np.arange(lo, hi)
        if len(ids) > limit:
            ids = ids[np.argsort(-self.df[ids], kind="stable")[:limit]]
        return ids

    def term_docs(self, t: int, field: str | None = None) -> np.ndarray:
        return self.bm.docs(t) if field is None else self.field[field].docs(t)

    def term_scores(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.bm.ptr[t], self.bm.ptr[t + 1]
        return self.bm.doc[a:b], self.bm_score[a:b]

    def has_bigram(self, docs: np.ndarray, a: int, b: int) -> np.ndarray:
        """For each of `docs`, whether term b directly follows term a in its title
        or abstract (stopwords aside). The pair array is sorted by pair, then document, so a
        pair's documents are one slice, found by two binary searches."""
        g = self.arrays.get("bigrams")
        if g is None or len(g) == 0 or len(docs) == 0:
            return np.zeros(len(docs), dtype=bool)
        n, V = max(self.n, 1), len(self.vocab)
        lo = (a * V + b) * n
        i, j = np.searchsorted(g, [lo, lo + n])
        if i == j:
            return np.zeros(len(docs), dtype=bool)
        with_pair = np.asarray(g[i:j]) - lo
        pos = np.minimum(np.searchsorted(with_pair, docs), len(with_pair) - 1)
        return with_pair[pos] == docs

    def category_docs(self, name: str) -> np.ndarray:
        """Documents in category `name` (cs.LG), or in any category of an archive (cs);
        case-insensitive. The one implementation of the category rule."""
        key = name.strip().lower()
        if "." in key:
            ids = [self.cat_lookup[key]] if key in self.cat_lookup else []
        else:
            ids = [i for c, i in self.cat_lookup.items() if c == key or c.startswith(key + ".")]
        if not ids:
            return np.zeros(0, dtype=np.int32)
        parts = [self.catdoc[self.catdoc_ptr[i] : self.catdoc_ptr[i + 1]] for i in ids]
        return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))

    def docs_of_rowids(self, rowids: np.ndarray) -> np.ndarray:
        """Positions of the given rowids (those present in this snapshot)."""
        rowids = np.asarray(rowids, dtype=np.int64)
        pos = np.searchsorted(self.rowids, rowids)
        pos = np.clip(pos, 0, max(self.n - 1, 0))
        ok = (self.rowids[pos] == rowids) if self.n else np.zeros(len(rowids), dtype=bool)
        return pos[ok].astype(np.int32)

    def category_counts(self, mask: np.ndarray) -> list[tuple[str, int]]:
        """How many matched documents are in each category (any of theirs)."""
        per_doc = np.diff(self.cat_ptr)
        sel = np.repeat(mask, per_doc)
        counts = np.bincount(self.cat_ids[sel], minlength=len(self.cat_names))
        nz = np.flatnonzero(counts)
        return [(self.cat_names[i], int(counts[i])) for i in nz]


# --- building (writers only) ------------------------------------------------------------

# Documents tokenised together. The build holds one block's texts at a time and every
# block's postings as int32 arrays, then writes each block into term-major arrays sized in
# advance: at 1M papers the all-at-once build (Python lists of every token, int64 keys of
# every posting, one argsort of all of them) grew to 22.7 GB.
BLOCK = 50_000


def _date_int(d: str | None) -> int:
    if not d:
        return 0
    digits = d[:10].replace("-", "")
    try:
        return int(digits.ljust(8, "0")) if digits.isdigit() else 0
    except ValueError:
        return 0


def _runs(sorted_keys: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values in a sorted array (numpy's hash-based
    np.unique is 30x slower than a sort at these sizes)."""
    if len(sorted_keys) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))


def _distinct(sorted_keys: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array; a mask, not index arrays: a tenth of the
    memory at a hundred million keys."""
    first = np.ones(len(sorted_keys), dtype=bool)
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=first[1:])
    return sorted_keys[first]


def _count_unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = np.sort(keys)
    starts = _runs(k)
    return k[starts], np.diff(np.append(starts, len(k)))


def _sum_counts(parts: list[np.ndarray]) -> np.ndarray:
    """The sum of per-block counts per stem id (later blocks have seen more stems)."""
    total = np.zeros(max((len(c) for c in parts), default=0), dtype=np.int64)
    for c in parts:
        total[: len(c)] += c
    return total


def _hash64(text_hash: str) -> int:
    """The stored text hash as a number (any string: a store written by hand may hold one
    that is not hex)."""
    try:
        return int(text_hash[:15], 16)
    except ValueError:
        return int(hashlib.sha1(text_hash.encode()).hexdigest()[:15], 16)


@dataclass
class _Rows:
    """Every paper's row but its texts, in rowid order."""

    rowids: np.ndarray  # int64
    hashes: np.ndarray  # int64
    dates: np.ndarray  # int32
    cat_ptr: np.ndarray  # int64 [n+1]: categories of document i are cat_ids[cat_ptr[i]:cat_ptr[i+1]]
    cat_ids: np.ndarray  # int32
    categories: list[str]  # names, in order of first sight


def _read_rows(conn, chunk: int = 65_536) -> _Rows:
    cur = conn.execute("SELECT rowid, text_hash, categories, date FROM papers ORDER BY rowid")
    rowids, hashes, dates = [], [], []
    cat_index: dict[str, int] = {}
    cat_ids, per_doc = array("i"), array("q")
    while rows := cur.fetchmany(chunk):
        k = len(rows)
        rowids.append(np.fromiter((r[0] for r in rows), dtype=np.int64, count=k))
        hashes.append(np.fromiter((_hash64(r[1]) for r in rows), dtype=np.int64, count=k))
        dates.append(np.fromiter((_date_int(r[3]) for r in rows), dtype=np.int32, count=k))
        for r in rows:
            cats = dict.fromkeys(json.loads(r[2]))
            cat_ids.extend(cat_index.setdefault(c, len(cat_index)) for c in cats)
            per_doc.append(len(cats))
    cat_ptr = np.zeros(len(per_doc) + 1, dtype=np.int64)
    np.cumsum(np.array(per_doc, dtype=np.int64), out=cat_ptr[1:])

    def whole(parts: list[np.ndarray], dtype) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    return _Rows(
        rowids=whole(rowids, np.int64),
        hashes=whole(hashes, np.int64),
        dates=whole(dates, np.int32),
        cat_ptr=cat_ptr,
        cat_ids=np.array(cat_ids, dtype=np.int32),
        categories=list(cat_index),
    )


def _texts(conn, rowids: np.ndarray) -> dict[int, tuple[str, str, str]]:
    texts: dict[int, tuple[str, str, str]] = {}
    for i in range(0, len(rowids), 500):
        chunk = [int(x) for x in rowids[i : i + 500]]
        q = f"SELECT rowid, title, abstract, authors FROM papers WHERE rowid IN ({','.join('?' * len(chunk))})"
        for r in conn.execute(q, chunk):
            texts[r[0]] = (r[1], r[2], r[3])
    return texts


class _Terms:
    """Stem ids in order of first sight; the previous vocabulary (sorted) comes first, so a
    previous snapshot's term ids are valid ids here."""

    def __init__(self, previous: LexIndex | None) -> None:
        self.stem_id: dict[str, int] = {}
        if previous is not None:
            for t in previous.vocab.tolist():
                self.stem_id.setdefault(t, len(self.stem_id))
        self.word_id: dict[str, int] = {w: -1 for w in STOPWORDS}
        self.stems = stemmer()

    def ids(self, text: str) -> list[int]:
        ws = tokens(text)
        for w in set(ws).difference(self.word_id):
            self.word_id[w] = self.stem_id.setdefault(self.stems.stemWord(w), len(self.stem_id))
        return [t for t in map(self.word_id.__getitem__, ws) if t >= 0]


class _Carry:
    """The incremental path: what the previous snapshot holds for documents whose text did
    not change, renumbered to their new positions (both are in rowid order, so a run of
    new positions comes from a run of old ones, in the same order)."""

    def __init__(self, previous: LexIndex, reuse: np.ndarray, prev_pos: np.ndarray) -> None:
        self.prev, self.reuse, self.prev_pos = previous, reuse, prev_pos
        self.old_to_new = np.full(previous.n, -1, dtype=np.int64)
        self.old_to_new[prev_pos[reuse]] = np.flatnonzero(reuse)

    def lengths(self, f: str) -> np.ndarray:
        return np.asarray(self.prev.arrays[f"{f}_len"])[self.prev_pos[self.reuse]]

    def postings(self, f: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(doc, term, tf) of field f for the carried documents at positions lo..hi-1."""
        r = np.flatnonzero(self.reuse[lo:hi]) + lo
        if len(r) == 0:
            return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32)
        p = self.prev.field[f]
        d = np.asarray(p.doc)
        idx = np.flatnonzero((d >= self.prev_pos[r[0]]) & (d <= self.prev_pos[r[-1]]))
        new = self.old_to_new[d[idx]]
        keep = new >= 0
        idx = idx[keep]
        term = np.searchsorted(p.ptr, idx, side="right") - 1
        tf = np.asarray(self.prev.arrays[f"{f}_tf"])[idx]
        return new[keep].astype(np.int32), term.astype(np.int32), tf.astype(np.int32)

    def pair_bound(self) -> int:
        return len(self.prev.arrays.get("bigrams", ()))

    def pair_keys(self, remap: np.ndarray, V: int, N: int, chunk: int = 1 << 22) -> Iterator[np.ndarray]:
        """The previous word pairs of carried documents as keys of the new snapshot, a chunk
        at a time."""
        g = self.prev.arrays.get("bigrams")
        if g is None:
            return
        pv, pn = len(self.prev.vocab), max(self.prev.n, 1)
        for i in range(0, len(g), chunk):
            c = np.asarray(g[i : i + chunk])
            pair, d_old = c // pn, c % pn
            new = self.old_to_new[d_old]
            keep = new >= 0
            pair = pair[keep]
            yield (remap[pair // pv] * V + remap[pair % pv]) * N + new[keep]


_NO_PAIRS = (np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32))


@dataclass
class _Block:
    """Documents lo..hi-1, tokenised: term ids are stem ids in order of first sight."""

    lo: int
    hi: int
    postings: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]  # field -> doc, term, tf (int32)
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray]  # doc, first, second: adjacent words
    counts: dict[str, np.ndarray]  # field -> postings per term
    df: np.ndarray  # documents per term (any field)


def _tokenise(
    conn, rows: _Rows, lo: int, hi: int, fresh: np.ndarray, terms: _Terms, lengths: dict, carry: _Carry | None
) -> _Block:
    """One block: its fresh documents read and tokenised, its carried ones taken over."""
    todo = np.flatnonzero(fresh[lo:hi]) + lo
    texts = _texts(conn, rows.rowids[todo])
    span = hi - lo
    postings, pairs, counts = {}, [], {}
    for fi, f in enumerate(FIELDS):
        flat = array("i")
        lens = lengths[f]
        for i in todo.tolist():
            raw = texts[int(rows.rowids[i])][fi]
            ids = terms.ids(" ".join(json.loads(raw)) if f == "authors" else index_text(raw))
            lens[i] = len(ids)
            flat.extend(ids)
        term = np.array(flat, dtype=np.int32)
        doc = np.repeat(todo.astype(np.int32), lens[todo])
        if f != "authors":  # adjacent words, for the phrase bonus of multi-word queries
            same = doc[1:] == doc[:-1]
            pairs.append((doc[:-1][same], term[:-1][same], term[1:][same]))
        uk, tf = _count_unique(term.astype(np.int64) * span + (doc - lo))
        parts = [((uk % span + lo).astype(np.int32), (uk // span).astype(np.int32), tf.astype(np.int32))]
        if carry is not None:
            parts.append(carry.postings(f, lo, hi))
        postings[f] = tuple(np.concatenate(cols) for cols in zip(*parts, strict=True))
        counts[f] = np.bincount(postings[f][1])
    keys = np.sort(np.concatenate([t.astype(np.int64) * span + (d - lo) for d, t, _ in postings.values()]))
    df = np.bincount(keys[_runs(keys)] // span)
    pair_cols = tuple(np.concatenate(cols) for cols in zip(*pairs, strict=True))
    return _Block(lo, hi, postings, pair_cols, counts, df)


def _scatter(cursor: np.ndarray, term: np.ndarray, *columns: tuple[np.ndarray, np.ndarray]) -> None:
    """Write one block's postings (sorted by term, then document) into term-major arrays:
    each term's run goes right after what the blocks before wrote for that term, so the
    documents of a term stay in order without sorting everything at once."""
    counts = np.bincount(term, minlength=len(cursor))
    first = np.cumsum(counts) - counts
    dest = cursor[term] + (np.arange(len(term)) - first[term])
    for out, values in columns:
        out[dest] = values
    cursor += counts


def _pair_keys(blocks: list[_Block], carry: _Carry | None, remap: np.ndarray, V: int, N: int) -> np.ndarray:
    """Adjacent word pairs as sorted distinct keys (pair, then document)."""
    bound = sum(len(b.pairs[0]) for b in blocks) + (carry.pair_bound() if carry else 0)
    g = np.empty(bound, dtype=np.int64)
    end = 0
    carried = carry.pair_keys(remap, V, N) if carry else iter(())
    for keys in carried:
        g[end : end + len(keys)] = keys
        end += len(keys)
    for b in blocks:
        doc, first, second = b.pairs
        b.pairs = _NO_PAIRS  # freed as it goes
        g[end : end + len(doc)] = (remap[first] * V + remap[second]) * N + doc
        end += len(doc)
    g = g[:end]
    g.sort()
    return _distinct(g)


def _postings(blocks: list[_Block], lengths: dict, remap: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The per-field postings and the BM25F scores, block by block, into arrays sized from
    the counts taken while tokenising."""
    V = len(remap)

    def per_term(parts: list[np.ndarray]) -> np.ndarray:
        """Per-block counts by stem id, summed, by term id."""
        total = _sum_counts(parts)
        by_term = np.zeros(V, dtype=np.int64)
        by_term[remap[: len(total)]] = total
        return by_term

    out: dict[str, np.ndarray] = {}
    cursor, avg = {}, {}
    for f in FIELDS:
        ptr = np.zeros(V + 1, dtype=np.int64)
        np.cumsum(per_term([b.counts[f] for b in blocks]), out=ptr[1:])
        out[f"{f}_ptr"] = ptr
        out[f"{f}_doc"] = np.empty(ptr[-1], dtype=np.int32)
        out[f"{f}_tf"] = np.empty(ptr[-1], dtype=np.uint16)
        out[f"{f}_len"] = lengths[f]
        cursor[f] = ptr[:-1].copy()
        mean = float(lengths[f].mean()) if n else 0.0
        avg[f] = mean if mean > 0 else 1.0
    df = per_term([b.df for b in blocks]).astype(np.int32)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    bm_ptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(df, out=bm_ptr[1:])
    bm_doc = np.empty(bm_ptr[-1], dtype=np.int32)
    bm_score = np.empty(bm_ptr[-1], dtype=np.float32)
    bm_cursor = bm_ptr[:-1].copy()
    k1 = PARAMS["k1"]
    for blk in blocks:
        span = blk.hi - blk.lo
        keys, weights = [], []
        for f in FIELDS:
            doc, term, tf = blk.postings[f]
            term = remap[term]
            order = np.lexsort((doc, term))
            doc, term, tf = doc[order], term[order], tf[order]
            _scatter(cursor[f], term, (out[f"{f}_doc"], doc), (out[f"{f}_tf"], np.minimum(tf, 65535).astype(np.uint16)))
            b = PARAMS["b"][f]
            norm = tf / (1 - b + b * lengths[f][doc] / avg[f])
            keys.append(term * span + (doc - blk.lo))
            weights.append(PARAMS["w"][f] * norm)
        blk.postings = {}  # freed as it goes
        # BM25F: sum the fields of each (term, doc) pair, in field order
        key, w = np.concatenate(keys), np.concatenate(weights)
        if len(key) == 0:
            continue
        order = np.argsort(key, kind="stable")
        key, w = key[order], w[order]
        starts = _runs(key)
        tfw = np.add.reduceat(w, starts).astype(np.float32)
        term_u = key[starts] // span
        score = idf[term_u] * tfw * (k1 + 1) / (tfw + k1)
        doc_u = (key[starts] % span + blk.lo).astype(np.int32)
        _scatter(bm_cursor, term_u, (bm_doc, doc_u), (bm_score, score.astype(np.float32)))
    out.update(df=df, bm_ptr=bm_ptr, bm_doc=bm_doc, bm_score=bm_score)
    return out


def build(store: Store, previous: LexIndex | None = None, *, block: int = BLOCK) -> LexIndex:
    """Index every paper of one consistent snapshot of the store. With `previous` (the last
    published snapshot of the same store) only papers whose text changed are tokenised
    again; the rest of their postings are carried over. Papers are tokenised `block` at a
    time, which bounds the memory the texts and tokens take; the arrays do not depend on it."""
    with store.read_snapshot():  # held throughout: texts are read a block at a time
        generation = store.generation()
        rows = _read_rows(store.conn)
        n = len(rows.rowids)
        reuse = np.zeros(n, dtype=bool)
        prev_pos = np.zeros(n, dtype=np.int64)
        if previous is not None and previous.n and "hashes" in previous.arrays:
            pos = np.clip(np.searchsorted(previous.rowids, rows.rowids), 0, previous.n - 1)
            reuse = (previous.rowids[pos] == rows.rowids) & (np.asarray(previous.arrays["hashes"])[pos] == rows.hashes)
            prev_pos = pos
        carry = _Carry(previous, reuse, prev_pos) if previous is not None and reuse.any() else None
        lengths = {f: np.zeros(n, dtype=np.int32) for f in FIELDS}
        if carry is not None:
            for f in FIELDS:
                lengths[f][reuse] = carry.lengths(f)
        terms = _Terms(previous)
        blocks = [
            _tokenise(store.conn, rows, lo, min(lo + block, n), ~reuse, terms, lengths, carry)
            for lo in range(0, n, max(block, 1))
        ]

    # vocabulary sorted, so a query term is a binary search away
    names = np.array(list(terms.stem_id), dtype=str) if terms.stem_id else np.zeros(0, dtype="<U1")
    order_v = np.argsort(names, kind="stable")
    remap = np.empty(len(names), dtype=np.int64)
    remap[order_v] = np.arange(len(names), dtype=np.int64)
    vocab = names[order_v]
    V, N = len(vocab), max(n, 1)

    cat_doc = np.repeat(np.arange(n, dtype=np.int32), np.diff(rows.cat_ptr))
    catdoc_ptr = np.zeros(len(rows.categories) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows.cat_ids, minlength=len(rows.categories)), out=catdoc_ptr[1:])
    arrays: dict[str, np.ndarray] = {
        "rowids": rows.rowids,
        "hashes": rows.hashes,
        "dates": rows.dates,
        "cat_ptr": rows.cat_ptr,
        "cat_ids": rows.cat_ids,
        "catdoc_ptr": catdoc_ptr,
        "catdoc": cat_doc[np.argsort(rows.cat_ids, kind="stable")],
        "vocab": vocab,
    }
    # the pairs first: their keys are the largest array, and the postings are still compact
    pairs = _pair_keys(blocks, carry, remap, V, N) if N * V * V < 2**62 else None
    arrays.update(_postings(blocks, lengths, remap, n))
    if pairs is not None:
        arrays["bigrams"] = pairs  # sorted: pair, then doc
    meta = {
        "format": FORMAT,
        "params": PARAMS,
        "store_id": store.store_id(),
        "generation": generation,
        "documents": n,
        "terms": V,
        "categories": rows.categories,
    }
    return LexIndex(arrays, meta)  # not published: load() marks the ones read from disk


# --- publishing and loading -------------------------------------------------------------

POINTER = "lexical.json"


def publish(store: Store, index: LexIndex | None = None) -> LexIndex:
    """Build (unless given) and publish a snapshot: arrays into a new folder, then the
    pointer file replaced atomically. Readers holding the previous snapshot keep it."""
    index = index or build(store, load(store))
    d = store.data_dir
    name = f"lexical.{index.generation}.{os.getpid()}"
    tmp = d / (name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    arrays = index.arrays
    for k, v in arrays.items():
        np.save(tmp / f"{k}.npy", np.asarray(v), allow_pickle=False)
    (tmp / "meta.json").write_text(json.dumps({k: v for k, v in index.meta.items() if k != "published"}))
    final = d / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    ptr_tmp = d / f"{POINTER}.{os.getpid()}.tmp"
    ptr_tmp.write_text(json.dumps({"format": FORMAT, "dir": name, "generation": index.generation}))
    os.replace(ptr_tmp, d / POINTER)
    prune_snapshots(d, "lexical.", name)
    return index


def load(store: Store) -> LexIndex | None:
    """The published snapshot of this store, mapped read-only; None if there is none
    (or it belongs to another store, or another format)."""
    d = store.data_dir
    try:
        ptr = json.loads((d / POINTER).read_text())
        if ptr.get("format") != FORMAT:
            return None
        folder = d / ptr["dir"]
        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("format") != FORMAT or meta.get("params") != PARAMS or meta.get("store_id") != store.store_id():
            return None
        # plain ndarray views of the maps: slicing a np.memmap goes through Python code
        arrays = {p.stem: np.asarray(np.load(p, mmap_mode="r", allow_pickle=False)) for p in folder.glob("*.npy")}
        return LexIndex(arrays, {**meta, "published": True})
    except (OSError, ValueError, KeyError):
        return None


def load_or_build(store: Store) -> LexIndex:
    """Readers: the published snapshot, else one built in memory (never saved)."""
    return load(store) or build(store)

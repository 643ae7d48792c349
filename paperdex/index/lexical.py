"""The lexical side in memory: an inverted index as plain sparse arrays (the bm25s approach),
scored exactly, with no term dropped.

A writer builds it from SQLite (the source of truth) and publishes it beside the database: a
folder of ``.npy`` arrays and a ``lexical.json`` pointer. Readers map the published arrays
(shared through the page cache); without a snapshot they build one in memory. Per document (in
rowid order) it holds the date and categories, per term (a Porter stem) the documents holding
it in each field and a precomputed BM25F score, so a query is a few numpy operations over
arrays of length N (how the build streams: docs/performance.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol, TypedDict

import numpy as np

from paperdex.index.snapshots import REPAIR_COMMAND, prune_snapshots, publish_lock
from paperdex.paper import category_asked, index_text
from paperdex.text import STOPWORDS, index_words, stem, stemmer, tokens

# 7: a CJK run of a title or an abstract is held as its character bigrams (text.cjk_grams); 6: a lone
# Greek letter is held as its name (text.greek_names); 5: text._Stemmer
FORMAT = 7


class BM25F(TypedDict):
    """The scoring's parameters: saturation, and per field the length normalisation and weight."""

    k1: float
    b: dict[str, float]
    w: dict[str, float]


# BM25F (Robertson & Zaragoza 2009): per-field normalised term frequencies weighted, summed, then saturated
PARAMS: BM25F = {
    "k1": 1.2,
    "b": {"title": 0.5, "abstract": 0.75, "authors": 0.3},
    "w": {"title": 3.0, "abstract": 1.0, "authors": 2.0},
}
FIELDS = ("title", "abstract", "authors")
# A term in at least this share of the papers is scored from a dense column (`LexIndex.column`)
COLUMN_SHARE = 1 / 16
COLUMN_BYTES = 80 << 20  # 5 bytes a paper: the column and its mask
FEW_DOCS = 50  # `category_counts` reads the entries of at most one paper in FEW_DOCS alone
TERMS_KEPT = 100_000  # stems whose term ids a snapshot keeps (`LexIndex.term`)


@dataclass
class Postings:
    """CSC layout: documents of term t are doc[ptr[t]:ptr[t+1]] (sorted)."""

    ptr: np.ndarray  # int64 [V+1]
    doc: np.ndarray  # int32 [nnz]

    def docs(self, t: int) -> np.ndarray:
        return self.doc[self.ptr[t] : self.ptr[t + 1]]


_VOCAB_STRIDE = 16  # a lookup bisects every 16th stem (kept in a list), then the buffer


def _utf8(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


class Vocab:
    """The sorted stems, stem i the UTF-8 bytes text[ptr[i]:ptr[i+1]] (sorted as the strings)."""

    def __init__(self, text: np.ndarray, ptr: np.ndarray) -> None:
        self.text, self.ptr = text, ptr
        # `.data`: the buffer as a memoryview (numpy's stubs make ndarray a buffer from 3.12 on)
        self._buf = np.ascontiguousarray(text, dtype=np.uint8).data
        self._at = np.ascontiguousarray(ptr, dtype=np.int64).data
        self._size = len(self._at) - 1
        self._top: list[bytes] | None = None

    def __len__(self) -> int:
        return self._size

    def key(self, i: int) -> bytes:
        return self._buf[self._at[i] : self._at[i + 1]].tobytes()

    def __getitem__(self, i) -> str:
        i = int(i)
        if not -self._size <= i < self._size:
            raise IndexError(i)
        return self.key(i % self._size).decode("utf-8", "surrogatepass")

    def tolist(self) -> list[str]:
        text, at = self._buf.tobytes(), self._at.tolist()
        return [text[a:b].decode("utf-8", "surrogatepass") for a, b in zip(at, at[1:], strict=False)]

    def _bisect(self, key: bytes) -> tuple[int, bool]:
        """(the first position whose stem is not below `key`, whether that stem is `key`)."""
        if (top := self._top) is None:
            top = self._top = [self.key(i) for i in range(0, self._size, _VOCAB_STRIDE)]
        if (k := bisect_right(top, key)) == 0:
            return 0, False
        lo = (k - 1) * _VOCAB_STRIDE  # stem lo <= key < stem hi
        if top[k - 1] == key:
            return lo, True
        lo, hi = lo + 1, min(k * _VOCAB_STRIDE, self._size)
        buf, at = self._buf, self._at
        while lo < hi:
            mid = (lo + hi) // 2
            if (x := buf[at[mid] : at[mid + 1]].tobytes()) < key:
                lo = mid + 1
            elif x == key:
                return mid, True
            else:
                hi = mid
        return lo, False

    def find(self, key: bytes) -> int:
        """The first position whose stem is not below `key` (UTF-8), as bisect_left."""
        return self._bisect(key)[0]

    def index(self, stem: str) -> int | None:
        i, found = self._bisect(_utf8(stem))
        return i if found else None


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
        self.vocab = Vocab(arrays["vocab"], arrays["vocab_ptr"])  # sorted stems
        self.df: np.ndarray = arrays["df"]
        self.bm = Postings(arrays["bm_ptr"], arrays["bm_doc"])
        self.bm_score: np.ndarray = arrays["bm_score"]
        self.field = {f: Postings(arrays[f"{f}_ptr"], arrays[f"{f}_doc"]) for f in FIELDS}
        # word pairs starting with term a: bigrams[bigram_ptr[a]:bigram_ptr[a+1]] (their second
        # terms, sorted); pair k's documents: bigram_doc[bigram_doc_ptr[k]:bigram_doc_ptr[k+1]]
        self.pair_ptr: np.ndarray = arrays["bigram_ptr"]
        self.pair_next: np.ndarray = arrays["bigrams"]
        self.pairs = Postings(arrays["bigram_doc_ptr"], arrays["bigram_doc"])
        self.n = len(self.rowids)
        self._at = position_table(self.rowids)  # `docs_of_rowids`
        self._columns: OrderedDict[int, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._columns_lock = threading.Lock()
        self._terms: dict[str, int | None] = {}
        self._apart: dict[str, tuple[tuple[str, str] | None, int]] = {}

    @property
    def generation(self) -> int:
        return int(self.meta["generation"])

    @property
    def store_id(self) -> str:
        return str(self.meta["store_id"])

    def term(self, stemmed: str) -> int | None:
        """The stem's term id (None: no paper holds it), kept: a query asks several times."""
        if (got := self._terms.get(stemmed, -1)) == -1:
            got = self.vocab.index(stemmed)
            if len(self._terms) >= TERMS_KEPT:
                self._terms.clear()
            self._terms[stemmed] = got
        return got

    def apart(self, word: str) -> tuple[tuple[str, str] | None, int]:
        """The split of `word` that the most papers write as two words side by side, as stems, and
        how many papers do ("oversmoothing": ("over", "smooth"), as in "over-smoothing"); halves of
        two letters or more, no stopword. Kept like term ids: a search asks for each long word."""
        if (got := self._apart.get(word)) is None:
            held: dict[tuple[str, str], int] = {}
            for a, b in ((word[:k], word[k:]) for k in range(2, len(word) - 1)):
                if a in STOPWORDS or b in STOPWORDS or (ta := self.term(stem(a))) is None:
                    continue
                if (tb := self.term(stem(b))) is not None:
                    held[(stem(a), stem(b))] = len(self.pair_docs(ta, tb))
            best = max(held, key=lambda s: (held[s], s), default=None)
            if len(self._apart) >= TERMS_KEPT:
                self._apart.clear()
            self._apart[word] = got = (best, held[best] if best else 0)
        return got

    def prefix_terms(self, prefix: str, limit: int = 256) -> np.ndarray:
        """Term ids whose stem starts with `prefix`, most frequent first, at most `limit`."""
        key = _utf8(prefix)
        ids = np.arange(self.vocab.find(key), self.vocab.find(key + b"\xff"))  # no UTF-8 byte is 0xff
        if len(ids) > limit:
            ids = ids[np.argsort(-self.df[ids], kind="stable")[:limit]]
        return ids

    def term_docs(self, t: int, field: str | None = None) -> np.ndarray:
        return self.bm.docs(t) if field is None else self.field[field].docs(t)

    def term_scores(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.bm.ptr[t], self.bm.ptr[t + 1]
        return self.bm.doc[a:b], self.bm_score[a:b]

    def column(self, t: int) -> np.ndarray | None:
        """A common term's BM25F scores, one float32 per document (0: absent), None for a rarer
        one: cheaper to add than many postings, and the same sums (x + 0 is x)."""
        return None if (got := self._column(t)) is None else got[0]

    def column_mask(self, t: int) -> np.ndarray | None:
        """A common term's papers as a mask (its column > 0), None for a rarer one."""
        return None if (got := self._column(t)) is None else got[1]

    def _column(self, t: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(`column`, `column_mask`) of a common term; the last used kept (COLUMN_BYTES)."""
        if self.df[t] < COLUMN_SHARE * self.n:
            return None
        with self._columns_lock:
            if (got := self._columns.get(t)) is not None:
                self._columns.move_to_end(t)
                return got
        col = np.zeros(self.n, dtype=np.float32)
        np.add.at(col, *self.term_scores(t))  # the scores (0 + x is x), in one pass
        got = col, col > 0
        for a in got:
            a.setflags(write=False)  # shared by the process's searches
        with self._columns_lock:
            self._columns[t] = got
            while len(self._columns) * (col.nbytes + got[1].nbytes) > COLUMN_BYTES:
                self._columns.popitem(last=False)
        return got

    def pair_docs(self, a: int, b: int) -> np.ndarray:
        """The documents (sorted) where term b follows term a in the title or the abstract."""
        lo, hi = int(self.pair_ptr[a]), int(self.pair_ptr[a + 1])
        k = lo + int(np.searchsorted(self.pair_next[lo:hi], b))
        return np.zeros(0, dtype=np.int32) if k == hi or self.pair_next[k] != b else self.pairs.docs(k)

    def pair_mask(self, a: int, b: int) -> np.ndarray:
        """`pair_docs` as a mask (a pair is in few papers: marking them is cheap)."""
        m = np.zeros(self.n, dtype=bool)
        m[self.pair_docs(a, b)] = True
        return m

    def category_docs(self, name: str) -> np.ndarray:
        """Documents in category `name` (cs.LG), in any of an archive's (cs) or of those a prefix
        begins (cs.C*), in any case: `paper.category_asked`."""
        key = name.strip().lower()
        if "." in key and not key.endswith("*"):
            ids = [self.cat_lookup[key]] if key in self.cat_lookup else []
        else:
            ids = [i for i, c in enumerate(self.cat_names) if category_asked(c, key)]
        if not ids:
            return np.zeros(0, dtype=np.int32)
        parts = [self.catdoc[self.catdoc_ptr[i] : self.catdoc_ptr[i + 1]] for i in ids]
        if len(parts) == 1:
            return parts[0]
        # an archive's categories overlap (cs.LG and cs.CV): a mask, not a sort of every entry
        m = np.zeros(self.n, dtype=bool)
        for part in parts:
            m[part] = True
        return np.flatnonzero(m).astype(self.catdoc.dtype)

    def find(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`find_sorted` of rowids among this snapshot's: (a document, whether it is that rowid)."""
        return find_sorted(self.rowids, rowids, self._at)

    def docs_of_rowids(self, rowids: np.ndarray) -> np.ndarray:
        pos, ok = self.find(rowids)
        return pos[ok].astype(np.int32)

    @cached_property
    def _cat_doc(self) -> np.ndarray:
        """The document of each entry of `cat_ids`: a mask is read at all of them in one gather."""
        return np.repeat(np.arange(self.n, dtype=np.intp), np.diff(self.cat_ptr))

    def category_counts(self, mask: np.ndarray) -> list[tuple[str, int]]:
        """How many matched documents are in each category (any of theirs)."""
        if np.count_nonzero(mask) * FEW_DOCS <= self.n:
            docs = np.flatnonzero(mask)
            ids = self.cat_ids[_spans(self.cat_ptr[docs], self.cat_ptr[docs + 1])]
        else:
            ids = self.cat_ids[mask[self._cat_doc]]
        counts = np.bincount(ids, minlength=len(self.cat_names))
        return [(self.cat_names[i], int(counts[i])) for i in np.flatnonzero(counts)]


# --- building (writers only) ------------------------------------------------------------

BLOCK = 50_000  # documents tokenised together: the build holds one block's texts at a time
_CHUNK = 1 << 22  # word pairs read back at a time (a test lowers it)


def idf(df, n: int):
    """BM25's IDF of a document frequency (or an array of them) among `n` documents: the one rule
    the snapshot's scores, the compound rule's weights and related work's key terms use."""
    return np.log(1 + (n - df + 0.5) / (df + 0.5))


def date_int(d: str | None) -> int:
    """A date's YYYYMMDD as a number (a year or month alone padded with zeros), 0 for none."""
    digits = (d or "")[:10].replace("-", "")
    return int(digits.ljust(8, "0")) if digits.isdecimal() else 0  # what int() reads, and only that


def find_sorted(keys: np.ndarray, values: np.ndarray, table: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Where each of `values` is in the sorted `keys`: (position, found; 0 and False where not)."""
    values = np.asarray(values, dtype=np.int64)
    if table is not None:
        held = (values >= 0) & (values < len(table))
        pos = table[np.where(held, values, 0)].astype(np.int64)
        ok = held & (pos >= 0)
        return np.where(ok, pos, 0), ok
    pos = np.clip(np.searchsorted(keys, values), 0, max(len(keys) - 1, 0))
    return pos, keys[pos] == values if len(keys) else np.zeros(len(values), dtype=bool)


TABLE_SLOTS = 4  # a `position_table`'s slots per key at most


def _spans(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The integers of every span [lo[i], hi[i]), one span after another."""
    n = hi - lo
    return np.arange(int(n.sum())) + np.repeat(lo - (np.cumsum(n) - n), n)


def position_table(keys: np.ndarray) -> np.ndarray | None:
    """Every row id's position in the sorted `keys` (-1: none); None when they are too sparse."""
    if len(keys) == 0 or keys[-1] >= TABLE_SLOTS * len(keys) + 1024:
        return None
    at = np.full(int(keys[-1]) + 1, -1, dtype=np.int32)
    at[keys] = np.arange(len(keys), dtype=np.int32)
    return at


def _runs(sorted_keys: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values in a sorted array (cheaper than np.unique)."""
    if len(sorted_keys) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))


def _hash64(text_hash: str) -> int:
    """The stored text hash as a number (one written by hand may not be hex)."""
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


class Source(Protocol):
    """What a snapshot is built from and published beside: the store, or a Milvus collection."""

    data_dir: Path  # where snapshots are published

    def store_id(self) -> str: ...

    def generation(self) -> int: ...

    def read_snapshot(self) -> AbstractContextManager[None]: ...

    def index_rows(self) -> Iterator[list[tuple[int, str, list[str], int]]]:
        """Chunks of (rowid, text hash, categories, date as YYYYMMDD or 0), in rowid order."""

    def index_texts(self, rowids: list[int]) -> dict[int, tuple[str, str, list[str]]]: ...


def _read_rows(source: Source) -> _Rows:
    rowids, hashes, dates = [], [], []
    cat_index: dict[str, int] = {}
    cat_ids, per_doc = array("i"), array("q")
    for rows in source.index_rows():
        k = len(rows)
        rowids.append(np.fromiter((r[0] for r in rows), dtype=np.int64, count=k))
        hashes.append(np.fromiter((_hash64(r[1]) for r in rows), dtype=np.int64, count=k))
        dates.append(np.fromiter((r[3] for r in rows), dtype=np.int32, count=k))
        for r in rows:
            cats = dict.fromkeys(r[2])
            cat_ids.extend(cat_index.setdefault(c, len(cat_index)) for c in cats)
            per_doc.append(len(cats))

    def whole(parts: list[np.ndarray], dtype) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    return _Rows(
        rowids=whole(rowids, np.int64),
        hashes=whole(hashes, np.int64),
        dates=whole(dates, np.int32),
        cat_ptr=np.concatenate(([0], np.cumsum(np.array(per_doc, dtype=np.int64)))),
        cat_ids=np.array(cat_ids, dtype=np.int32),
        categories=list(cat_index),
    )


class _Terms:
    """Stem ids in order of first sight, the previous vocabulary's first (its ids stay valid)."""

    def __init__(self, previous: LexIndex | None) -> None:
        # the previous vocabulary is sorted and distinct: its positions are its ids
        self.stem_id = {t: i for i, t in enumerate([] if previous is None else previous.vocab.tolist())}
        self.word_id: dict[str, int] = {w: -1 for w in STOPWORDS}
        self.stems = stemmer()

    def ids(self, text: str, field: str) -> list[int]:
        """The stem ids of one field's text: a name's words whole (au:李四), a title's or an
        abstract's CJK as bigrams (`text.index_words`)."""
        ws = tokens(text) if field == "authors" else index_words(text)
        for w in set(ws).difference(self.word_id):
            self.word_id[w] = self.stem_id.setdefault(self.stems.stemWord(w), len(self.stem_id))
        return [t for t in map(self.word_id.__getitem__, ws) if t >= 0]


class _Carry:
    """The previous snapshot's postings of documents whose text did not change, renumbered."""

    def __init__(self, previous: LexIndex, reuse: np.ndarray, prev_pos: np.ndarray) -> None:
        self.prev, self.reuse, self.prev_pos = previous, reuse, prev_pos
        self.old_to_new = np.full(previous.n, -1, dtype=np.int64)
        self.old_to_new[prev_pos[reuse]] = np.flatnonzero(reuse)

    def lengths(self, f: str) -> np.ndarray:
        return np.asarray(self.prev.arrays[f"{f}_len"])[self.prev_pos[self.reuse]]

    def postings(self, f: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(doc, term, tf) of field f for the carried documents at positions lo..hi-1."""
        if len(r := np.flatnonzero(self.reuse[lo:hi]) + lo) == 0:
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

    def pairs(self, remap: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The carried documents' word pairs as (document, first, second), _CHUNK at a time."""
        prev = self.prev
        if len(at := np.asarray(prev.pairs.ptr)) < 2 or at[-1] == 0:
            return
        # runs of whole pairs, about _CHUNK documents each
        cuts = np.append(np.unique(np.searchsorted(at, np.arange(0, at[-1], _CHUNK), side="right") - 1), len(at) - 1)
        for p0, p1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            per_pair = np.diff(at[p0 : p1 + 1])
            # pair k's first term: the a with pair_ptr[a] <= k < pair_ptr[a + 1]
            first = np.searchsorted(prev.pair_ptr, np.arange(p0, p1), side="right") - 1
            a = np.repeat(remap[first], per_pair)
            b = np.repeat(remap[np.asarray(prev.pair_next[p0:p1])], per_pair)
            new = self.old_to_new[np.asarray(prev.pairs.doc[at[p0] : at[p1]])]
            keep = new >= 0
            yield new[keep].astype(np.int32), a[keep], b[keep]


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
    source: Source, rows: _Rows, lo: int, hi: int, fresh: np.ndarray, terms: _Terms, lengths: dict, carry: _Carry | None
) -> _Block:
    """One block: its fresh documents read and tokenised, its carried ones taken over."""
    todo = np.flatnonzero(fresh[lo:hi]) + lo
    texts = source.index_texts([int(r) for r in rows.rowids[todo]])
    span = hi - lo
    postings: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    counts: dict[str, np.ndarray] = {}
    for f in FIELDS:
        flat = array("i")
        lens = lengths[f]
        for i in todo.tolist():
            title, abstract, authors = texts[int(rows.rowids[i])]
            # names joined by spaces (a name is not TeX), the title and abstract made plain
            ids = terms.ids(" ".join(authors) if f == "authors" else index_text(title if f == "title" else abstract), f)
            lens[i] = len(ids)
            flat.extend(ids)
        term = np.array(flat, dtype=np.int32)
        doc = np.repeat(todo.astype(np.int32), lens[todo])
        if f != "authors":  # adjacent words, for the phrase bonus of multi-word queries
            same = doc[1:] == doc[:-1]
            pairs.append((doc[:-1][same], term[:-1][same], term[1:][same]))
        k = np.sort(term.astype(np.int64) * span + (doc - lo))
        starts = _runs(k)
        uk, tf = k[starts], np.diff(np.append(starts, len(k)))
        parts = [((uk % span + lo).astype(np.int32), (uk // span).astype(np.int32), tf.astype(np.int32))]
        if carry is not None:
            parts.append(carry.postings(f, lo, hi))
        postings[f] = _concat3(parts)
        counts[f] = np.bincount(postings[f][1])
    keys = np.sort(np.concatenate([t.astype(np.int64) * span + (d - lo) for d, t, _ in postings.values()]))
    return _Block(lo, hi, postings, _concat3(pairs), counts, np.bincount(keys[_runs(keys)] // span))


def _concat3(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three columns (doc, term, tf; or doc, first, second) of several parts, each joined."""
    a, b, c = zip(*parts, strict=True)
    return np.concatenate(a), np.concatenate(b), np.concatenate(c)


def _scatter(cursor: np.ndarray, term: np.ndarray, *columns: tuple[np.ndarray, np.ndarray]) -> None:
    """Write one block's postings (sorted by term, then document) after the blocks' before."""
    counts = np.bincount(term, minlength=len(cursor))
    first = np.cumsum(counts) - counts
    dest = cursor[term] + (np.arange(len(term)) - first[term])
    for out, values in columns:
        out[dest] = values
    cursor += counts


def _pair_triples(
    blocks: list[_Block], carry: _Carry | None, remap: np.ndarray, free: bool
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(document, first, second) of the adjacent word pairs, carried then each block's."""
    if carry is not None:
        yield from carry.pairs(remap)
    for blk in blocks:
        doc, first, second = blk.pairs
        if free:
            blk.pairs = _NO_PAIRS
        yield doc, remap[first], remap[second]


# (pair, document) sort keys stay at most this (a test lowers it to split the sort)
_KEY_MAX = 2**63 - 1


def _pairs(blocks: list[_Block], carry: _Carry | None, remap: np.ndarray, V: int, N: int) -> dict[str, np.ndarray]:
    """The adjacent word pairs, distinct per document, as a CSR by first term, then by pair: keys
    ((a - a0) * V + b) * N + doc sorted, a range of first terms at a time if past 2^63."""
    bound = sum(len(b.pairs[0]) for b in blocks) + (len(carry.prev.pairs.doc) if carry else 0)
    width = max(1, _KEY_MAX // max(V * N, 1))  # first terms per sort
    # written up to the bound, read back as views: pages past the end are never touched
    nexts = np.empty(bound, dtype=np.int32)
    starts = np.empty(bound, dtype=np.int64)
    docs = np.empty(bound, dtype=np.int32)
    per_first = np.zeros(V, dtype=np.int64)
    n_pairs = n_docs = 0
    for a0 in range(0, V, width):
        a1, last = min(a0 + width, V), a0 + width >= V
        g = np.empty(bound, dtype=np.int64)
        end = 0
        for doc, a, b in _pair_triples(blocks, carry, remap, free=last):
            if a0 > 0 or not last:
                sel = (a >= a0) & (a < a1)
                doc, a, b = doc[sel], a[sel], b[sel]
            g[end : end + len(doc)] = ((a - a0) * V + b) * N + doc
            end += len(doc)
        g = g[:end]
        g.sort()
        prev_key = prev_pair = -1
        for i in range(0, end, _CHUNK):
            c = g[i : i + _CHUNK]
            keep = np.empty(len(c), dtype=bool)
            keep[0] = c[0] != prev_key
            np.not_equal(c[1:], c[:-1], out=keep[1:])
            prev_key = c[-1]
            if len(keys := c[keep]) == 0:
                continue
            pair = keys // N
            docs[n_docs : n_docs + len(keys)] = keys - pair * N
            new = np.empty(len(pair), dtype=bool)
            new[0] = pair[0] != prev_pair
            np.not_equal(pair[1:], pair[:-1], out=new[1:])
            prev_pair = pair[-1]
            at = np.flatnonzero(new)
            starts[n_pairs : n_pairs + len(at)] = n_docs + at
            a_off, b = np.divmod(pair[at], V)
            nexts[n_pairs : n_pairs + len(at)] = b
            per_first[a0:a1] += np.bincount(a_off, minlength=a1 - a0)
            n_pairs += len(at)
            n_docs += len(keys)
        del g
    pair_ptr = np.concatenate(([0], np.cumsum(per_first)))
    doc_ptr = np.empty(n_pairs + 1, dtype=np.int32 if n_docs < 2**31 else np.int64)
    doc_ptr[:n_pairs] = starts[:n_pairs]
    doc_ptr[n_pairs] = n_docs
    return {"bigram_ptr": pair_ptr, "bigrams": nexts[:n_pairs], "bigram_doc_ptr": doc_ptr, "bigram_doc": docs[:n_docs]}


def _postings(blocks: list[_Block], lengths: dict, remap: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The per-field postings and the BM25F scores, block by block, into presized arrays."""
    V = len(remap)

    def per_term(parts: list[np.ndarray]) -> np.ndarray:
        """Per-block counts by stem id (later blocks have seen more stems), summed, by term id."""
        total = np.zeros(max((len(c) for c in parts), default=0), dtype=np.int64)
        for c in parts:
            total[: len(c)] += c
        by_term = np.zeros(V, dtype=np.int64)
        by_term[remap[: len(total)]] = total
        return by_term

    out: dict[str, np.ndarray] = {}
    cursor: dict[str, np.ndarray] = {}
    avg: dict[str, float] = {}
    for f in FIELDS:
        ptr = np.concatenate(([0], np.cumsum(per_term([b.counts[f] for b in blocks]))))
        out[f"{f}_ptr"] = ptr
        out[f"{f}_doc"] = np.empty(ptr[-1], dtype=np.int32)
        out[f"{f}_tf"] = np.empty(ptr[-1], dtype=np.uint16)
        out[f"{f}_len"] = lengths[f]
        cursor[f] = ptr[:-1].copy()
        mean = float(lengths[f].mean()) if n else 0.0
        avg[f] = mean if mean > 0 else 1.0
    df = per_term([b.df for b in blocks]).astype(np.int32)
    w_idf = idf(df, n).astype(np.float32)
    bm_ptr = np.concatenate(([0], np.cumsum(df)))
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
        score = w_idf[term_u] * tfw * (k1 + 1) / (tfw + k1)
        doc_u = (key[starts] % span + blk.lo).astype(np.int32)
        _scatter(bm_cursor, term_u, (bm_doc, doc_u), (bm_score, score.astype(np.float32)))
    out.update(df=df, bm_ptr=bm_ptr, bm_doc=bm_doc, bm_score=bm_score)
    return out


def build(store: Source, previous: LexIndex | None = None, *, block: int = BLOCK) -> LexIndex:
    """Index one consistent snapshot of the store, tokenising again only texts `previous` lacks."""
    with store.read_snapshot():  # held throughout: texts are read a block at a time
        generation = store.generation()
        rows = _read_rows(store)
        n = len(rows.rowids)
        reuse = np.zeros(n, dtype=bool)
        prev_pos = np.zeros(n, dtype=np.int64)
        if previous is not None and previous.n:
            prev_pos, found = find_sorted(previous.rowids, rows.rowids)
            reuse = found & (np.asarray(previous.arrays["hashes"])[prev_pos] == rows.hashes)
        carry = _Carry(previous, reuse, prev_pos) if previous is not None and reuse.any() else None
        lengths = {f: np.zeros(n, dtype=np.int32) for f in FIELDS}
        if carry is not None:
            for f in FIELDS:
                lengths[f][reuse] = carry.lengths(f)
        terms = _Terms(previous)
        blocks = [
            _tokenise(store, rows, lo, min(lo + block, n), ~reuse, terms, lengths, carry)
            for lo in range(0, n, max(block, 1))
        ]

    # vocabulary sorted (UTF-8 bytes sort as their code points do): a term is a binary search away
    names = [_utf8(t) for t in terms.stem_id]
    order_v = sorted(range(len(names)), key=names.__getitem__)
    V, N = len(names), max(n, 1)
    remap = np.empty(V, dtype=np.int64)
    remap[np.array(order_v, dtype=np.int64)] = np.arange(V, dtype=np.int64)
    vocab_ptr = np.concatenate(([0], np.cumsum(np.fromiter((len(names[i]) for i in order_v), dtype=np.int64, count=V))))
    vocab = np.frombuffer(b"".join([names[i] for i in order_v]), dtype=np.uint8)
    del names, order_v

    cat_doc = np.repeat(np.arange(n, dtype=np.int32), np.diff(rows.cat_ptr))
    arrays: dict[str, np.ndarray] = {
        "rowids": rows.rowids,
        "hashes": rows.hashes,
        "dates": rows.dates,
        "cat_ptr": rows.cat_ptr,
        "cat_ids": rows.cat_ids,
        "catdoc_ptr": np.concatenate(([0], np.cumsum(np.bincount(rows.cat_ids, minlength=len(rows.categories))))),
        "catdoc": cat_doc[np.argsort(rows.cat_ids, kind="stable")],
        "vocab": vocab,
        "vocab_ptr": vocab_ptr,
    }
    # the pairs first: their keys are the largest array, and the postings are still compact
    arrays.update(_pairs(blocks, carry, remap, V, N))
    arrays.update(_postings(blocks, lengths, remap, n))
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


def publish(store: Source, index: LexIndex | None = None) -> LexIndex:
    """Build (unless given) and publish a snapshot: a new folder, then the pointer replaced."""
    with publish_lock(store.data_dir):
        index = index or build(store, load(store))
        if (published := load(store)) is not None and published.generation > index.generation:
            return published  # a writer that waited for the lock built from an older state
        d = store.data_dir
        name = f"lexical.{index.generation}.{os.getpid()}"
        tmp = d / (name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for k, v in index.arrays.items():
            np.save(tmp / f"{k}.npy", np.asarray(v), allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps({k: v for k, v in index.meta.items() if k != "published"}))
        shutil.rmtree(d / name, ignore_errors=True)
        os.replace(tmp, d / name)
        ptr_tmp = d / f"{POINTER}.{os.getpid()}.tmp"
        ptr_tmp.write_text(json.dumps({"format": FORMAT, "dir": name, "generation": index.generation}))
        os.replace(ptr_tmp, d / POINTER)
        prune_snapshots(d, "lexical.", name)
        return index


def load(store: Source) -> LexIndex | None:
    """This store's published snapshot, mapped read-only; None if there is none (of it)."""
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


@dataclass
class Lag:
    """How far the published word index is behind the database."""

    published: int | None  # the generation of the published snapshot (None: none published)
    current: int  # the database's generation
    missing: int  # papers in the database the snapshot lacks or holds an older text of
    removed: int  # papers the snapshot still holds that the database no longer has

    def to_dict(self) -> dict:
        return {
            "published_generation": self.published,
            "generation": self.current,
            "papers_behind": self.missing,
            "papers_removed": self.removed,
            "fix": REPAIR_COMMAND,
        }

    def message(self) -> str:
        what = f"{self.missing:,} papers in the database are not in the word index"
        if self.removed:
            what += f" and {self.removed:,} deleted ones still are"
        return f"{what} (a write did not finish publishing); `{REPAIR_COMMAND}` publishes them"


def published_generation(data_dir: Path) -> int | None:
    """The generation the lexical pointer names (cheap: one small file), None if none."""
    try:
        return int(json.loads((Path(data_dir) / POINTER).read_text())["generation"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def index_lag(store) -> Lag | None:
    """The lag of the published word index behind `store` (None: none)."""
    current = store.generation()
    if published_generation(store.data_dir) == current:
        return None
    with store.read_snapshot():
        current = store.generation()
        rows = list(store.rowids_and_hashes_of().values())
    if (ix := load(store)) is not None and ix.generation == current:
        return None
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    hashes = np.fromiter((_hash64(r[1]) for r in rows), dtype=np.int64, count=len(rows))
    if ix is None or not ix.n:
        return Lag(None if ix is None else ix.generation, current, len(rows), 0)
    old_ids = np.asarray(ix.rowids)
    pos, same = find_sorted(old_ids, rowids)
    same &= np.asarray(ix.arrays["hashes"])[pos] == hashes
    removed = int((~np.isin(old_ids, rowids)).sum())
    missing = int((~same).sum())
    return Lag(ix.generation, current, missing, removed) if missing or removed else None

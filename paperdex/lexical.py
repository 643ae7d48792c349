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


def _count_unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = np.sort(keys)
    starts = _runs(k)
    return k[starts], np.diff(np.append(starts, len(k)))


def _hash64(text_hash: str) -> int:
    """The stored text hash as a number (any string: a store written by hand may hold one
    that is not hex)."""
    try:
        return int(text_hash[:15], 16)
    except ValueError:
        return int(hashlib.sha1(text_hash.encode()).hexdigest()[:15], 16)


def build(store: Store, previous: LexIndex | None = None) -> LexIndex:
    """Index every paper of one consistent snapshot of the store. With `previous` (the last
    published snapshot of the same store) only papers whose text changed are tokenised
    again; the rest of their postings are carried over."""
    conn = store.conn
    with store.read_snapshot():
        generation = store.generation()
        rows = conn.execute("SELECT rowid, text_hash, categories, date FROM papers ORDER BY rowid").fetchall()
        n = len(rows)
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        hashes = np.fromiter((_hash64(r[1]) for r in rows), dtype=np.int64, count=n)
        reuse = np.zeros(n, dtype=bool)
        prev_pos = np.zeros(n, dtype=np.int64)
        if previous is not None and previous.n and "hashes" in previous.arrays:
            pos = np.clip(np.searchsorted(previous.rowids, rowids), 0, previous.n - 1)
            reuse = (previous.rowids[pos] == rowids) & (np.asarray(previous.arrays["hashes"])[pos] == hashes)
            prev_pos = pos
        todo = rowids[~reuse]
        texts: dict[int, tuple[str, str, str]] = {}
        for i in range(0, len(todo), 500):
            chunk = [int(x) for x in todo[i : i + 500]]
            q = f"SELECT rowid, title, abstract, authors FROM papers WHERE rowid IN ({','.join('?' * len(chunk))})"
            for r in conn.execute(q, chunk):
                texts[r[0]] = (r[1], r[2], r[3])
    dates = np.fromiter((_date_int(r[3]) for r in rows), dtype=np.int32, count=n)

    # categories
    cat_index: dict[str, int] = {}
    cat_ptr = np.zeros(n + 1, dtype=np.int64)
    cat_ids: list[int] = []
    for i, r in enumerate(rows):
        for c in dict.fromkeys(json.loads(r[2])):
            cat_ids.append(cat_index.setdefault(c, len(cat_index)))
        cat_ptr[i + 1] = len(cat_ids)
    cat_ids_a = np.array(cat_ids, dtype=np.int32)
    cat_doc = np.repeat(np.arange(n, dtype=np.int32), np.diff(cat_ptr))
    catdoc = cat_doc[np.argsort(cat_ids_a, kind="stable")]
    catdoc_ptr = np.zeros(len(cat_index) + 1, dtype=np.int64)
    np.cumsum(np.bincount(cat_ids_a, minlength=len(cat_index)), out=catdoc_ptr[1:])

    # terms: stems get ids in order of first sight, sorted into the vocabulary at the end
    stem_id: dict[str, int] = {}
    word_id: dict[str, int] = {w: -1 for w in STOPWORDS}
    stems = stemmer()
    if previous is not None:
        for t in previous.vocab.tolist():
            stem_id.setdefault(t, len(stem_id))
    fresh = np.flatnonzero(~reuse)
    bigrams: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # doc, first, second (stem ids)
    if previous is not None and reuse.any() and "bigrams" in previous.arrays:
        old_to_new = np.full(previous.n, -1, dtype=np.int64)
        old_to_new[prev_pos[reuse]] = np.flatnonzero(reuse)
        g = np.asarray(previous.arrays["bigrams"])
        pv, pn = len(previous.vocab), max(previous.n, 1)
        pair, d_old = g // pn, g % pn
        keep = old_to_new[d_old] >= 0
        bigrams.append((old_to_new[d_old[keep]], pair[keep] // pv, pair[keep] % pv))
    per_field: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # doc, term, tf
    lengths = {}
    for fi, f in enumerate(FIELDS):
        flat: list[int] = []
        lens = np.zeros(n, dtype=np.int32)
        for i in fresh.tolist():
            raw = texts[int(rowids[i])][fi]
            text = " ".join(json.loads(raw)) if f == "authors" else index_text(raw)
            ws = tokens(text)
            for w in set(ws).difference(word_id):
                word_id[w] = stem_id.setdefault(stems.stemWord(w), len(stem_id))
            ids = [t for t in map(word_id.__getitem__, ws) if t >= 0]
            lens[i] = len(ids)
            flat.extend(ids)
        term = np.array(flat, dtype=np.int64)
        doc = np.repeat(fresh.astype(np.int64), lens[fresh])
        if f != "authors":  # adjacent words, for the phrase bonus of multi-word queries
            same = doc[1:] == doc[:-1]
            bigrams.append((doc[:-1][same], term[:-1][same], term[1:][same]))
        if previous is not None and reuse.any():
            # carry over: postings of reused documents, re-numbered
            pf = previous.field[f]
            p_tf = np.asarray(previous.arrays[f"{f}_tf"])
            p_term = np.repeat(np.arange(len(pf.ptr) - 1, dtype=np.int64), np.diff(pf.ptr))
            p_doc = np.asarray(pf.doc)
            old_to_new = np.full(previous.n, -1, dtype=np.int64)
            old_to_new[prev_pos[reuse]] = np.flatnonzero(reuse)
            keep = old_to_new[p_doc] >= 0
            # previous term ids are the first len(previous.vocab) stem ids by construction
            lens[reuse] = np.asarray(previous.arrays[f"{f}_len"])[prev_pos[reuse]]
            carried = (old_to_new[p_doc[keep]], p_term[keep], p_tf[keep].astype(np.int64))
        else:
            carried = None
        key = term * max(n, 1) + doc
        uk, tf = _count_unique(key)
        d_new, t_new = uk % max(n, 1), uk // max(n, 1)
        if carried is not None:
            d_new = np.concatenate([carried[0], d_new])
            t_new = np.concatenate([carried[1], t_new])
            tf = np.concatenate([carried[2], tf])
        per_field[f] = (d_new, t_new, tf)
        lengths[f] = lens

    # vocabulary sorted, so a query term is a binary search away
    names = np.array(list(stem_id), dtype=str) if stem_id else np.zeros(0, dtype="<U1")
    order_v = np.argsort(names, kind="stable")
    remap = np.empty(len(names), dtype=np.int64)
    remap[order_v] = np.arange(len(names), dtype=np.int64)
    vocab = names[order_v]
    V = len(vocab)

    arrays: dict[str, np.ndarray] = {
        "rowids": rowids,
        "hashes": hashes,
        "dates": dates,
        "cat_ptr": cat_ptr,
        "cat_ids": cat_ids_a,
        "catdoc_ptr": catdoc_ptr,
        "catdoc": catdoc,
        "vocab": vocab,
    }
    k1 = PARAMS["k1"]
    acc_key, acc_w = [], []
    for f in FIELDS:
        doc, term, tf = per_field[f]
        term = remap[term]
        order = np.lexsort((doc, term))
        doc, term, tf = doc[order], term[order], tf[order]
        ptr = np.zeros(V + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=V), out=ptr[1:])
        arrays[f"{f}_ptr"], arrays[f"{f}_doc"] = ptr, doc.astype(np.int32)
        arrays[f"{f}_tf"] = np.minimum(tf, 65535).astype(np.uint16)
        arrays[f"{f}_len"] = lengths[f]
        mean = float(lengths[f].mean()) if n else 0.0
        avg = mean if mean > 0 else 1.0
        b = PARAMS["b"][f]
        norm = tf / (1 - b + b * lengths[f][doc] / avg)
        acc_key.append(term * max(n, 1) + doc)
        acc_w.append(PARAMS["w"][f] * norm)
    key = np.concatenate(acc_key)
    w = np.concatenate(acc_w)
    # sum the fields of each (term, doc) pair (keys arrive sorted within each field)
    order = np.argsort(key, kind="stable")
    key, w = key[order], w[order]
    starts = _runs(key)
    uniq = key[starts]
    tfw = np.add.reduceat(w, starts).astype(np.float32) if len(key) else np.zeros(0, dtype=np.float32)
    term_u = (uniq // max(n, 1)).astype(np.int64)
    doc_u = (uniq % max(n, 1)).astype(np.int32)
    df = np.bincount(term_u, minlength=V).astype(np.int32)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    score = idf[term_u] * tfw * (k1 + 1) / (tfw + k1)
    bm_ptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(df, out=bm_ptr[1:])
    arrays.update(df=df, bm_ptr=bm_ptr, bm_doc=doc_u, bm_score=score.astype(np.float32))
    if bigrams and max(n, 1) * V * V < 2**62:
        bd = np.concatenate([b[0] for b in bigrams])
        ba = remap[np.concatenate([b[1] for b in bigrams])]
        bb = remap[np.concatenate([b[2] for b in bigrams])]
        g = np.sort((ba * V + bb) * max(n, 1) + bd)
        arrays["bigrams"] = g[_runs(g)]  # sorted: pair, then doc
    meta = {
        "format": FORMAT,
        "params": PARAMS,
        "store_id": store.store_id(),
        "generation": generation,
        "documents": n,
        "terms": V,
        "categories": sorted(cat_index, key=cat_index.get),
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

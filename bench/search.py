"""Search latency on the full shared corpus, beside two peers, in one run.

    python bench/search.py [--queries 200] [--peers bm25s,milvus] [--growth]

Same 63,104 papers, same queries, same all-MiniLM-L6-v2 query vectors for every engine:

* paperdex: its own store (bench/out/full: SQLite + published lexical and vector snapshots);
* bm25s + exact numpy f32 + RRF: the forty lines a person would write by hand;
* Milvus Lite 2.5 (BM25 function over title + abstract, dense FLAT index, RRF hybrid,
  categories as an ARRAY field), persisted in bench/out/milvus-63k.db between runs.

"Engine time" is the search call with the query vector given (no query encoder, no
snippets); "end to end" adds the query encoder and highlighting, as a user waits for them.
Queries: 200 titles sampled with a fixed seed, whole and cut to their first three words.
`--growth` repeats paperdex's figures on the first 16k and 32k papers. Needs the bench extra
(`pip install -e '.[bench]'`) and ../shared.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import time
from pathlib import Path

import numpy as np

from paperdex.ingest import import_vectors, ingest_file
from paperdex.search import Filters, Searcher
from paperdex.store import Store

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPUS = SHARED / "arxiv-2025-2026.jsonl.gz"
VECTORS = SHARED / "arxiv-2025-2026.all-MiniLM-L6-v2.f16.npy"
IDS = SHARED / "arxiv-2025-2026.ids.txt"
OUT = Path(__file__).resolve().parent / "out"
CAT = "cs.RO"
K = 10


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def timed(fn, items) -> tuple[float, float]:
    times = []
    for it in items:
        t = time.perf_counter()
        fn(it)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), pct(times, 99)


def rrf_lists(a: list[int], b: list[int], k: int = 60) -> list[int]:
    s: dict[int, float] = {}
    for lst in (a, b):
        for r, d in enumerate(lst, 1):
            s[d] = s.get(d, 0.0) + 1 / (k + r)
    return sorted(s, key=lambda d: -s[d])[:K]


def build_store(d: Path, limit: int | None = None) -> Store:
    if (d / "paperdex.db").exists():
        store = Store(d)
        store.publish()  # a no-op unless the snapshot formats changed since the last run
        return store
    store = Store(d)
    src = CORPUS
    if limit:
        src = d.parent / f"{d.name}.jsonl"
        with gzip.open(CORPUS, "rt") as f, open(src, "w") as out:
            for _, line in zip(range(limit), f, strict=False):
                out.write(line)
        ids = d.parent / f"{d.name}.ids.txt"
        ids.write_text("".join(IDS.read_text().splitlines(keepends=True)[:limit]))
        vec = d.parent / f"{d.name}.npy"
        np.save(vec, np.load(VECTORS)[:limit])
    t = time.perf_counter()
    s = ingest_file(store, src)
    print(f"  ingest {s.added} papers (lexical snapshot included): {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    if limit:
        import_vectors(store, vec, ids, "all-MiniLM-L6-v2")
    else:
        import_vectors(store, VECTORS, IDS, "all-MiniLM-L6-v2")
    print(f"  vector import + HNSW snapshot: {time.perf_counter() - t:.1f} s")
    return store


def paperdex_rows(store: Store, short, full, qv, label: str) -> None:
    s = Searcher(store)
    s.search("warm up", mode="hybrid", query_vector=qv[short[0]])
    s.search("warm up", filters=Filters(category=CAT), query_vector=qv[short[0]])

    def run(q, mode, cat=False, **kw):
        return s.search(
            q,
            mode=mode,
            per_page=K,
            facets=False,
            literal=True,
            filters=Filters(category=CAT) if cat else None,
            **kw,
        )

    for name, qs in (("3 words", short), ("full title", full)):
        cells = []
        for mode, cat in (("lexical", False), ("dense", False), ("hybrid", False), ("hybrid", True)):
            for q in qs:  # one untimed pass: the snapshot's pages into the page cache (steady state)
                run(q, mode, cat, query_vector=qv[q], highlight=False)
            cells.append(timed(lambda q, m=mode, c=cat: run(q, m, c, query_vector=qv[q], highlight=False), qs))
        e2e = timed(lambda q: run(q, "hybrid"), qs)
        print(
            f"{label:24} {name:10} "
            + " ".join(f"{a:6.2f} /{b:6.2f}" for a, b in cells)
            + f"   e2e hybrid {e2e[0]:6.2f} /{e2e[1]:6.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--peers", default="bm25s,milvus")
    ap.add_argument("--growth", action="store_true")
    args = ap.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, "blas")  # for every engine: threaded BLAS only waits at these sizes

    print("paperdex store (63k):")
    store = build_store(OUT / "full")
    with gzip.open(CORPUS, "rt") as f:
        recs = [json.loads(line) for line in f]
    rnd = random.Random(42)
    full = [r["title"] for r in rnd.sample(recs, args.queries)]
    short = [" ".join(q.split()[:3]) for q in full]
    searcher = Searcher(store)
    emb = searcher.embedder()
    t = time.perf_counter()
    qv = {q: emb.embed_query(q) for q in short + full}
    print(f"query encoder ({emb.name}): {(time.perf_counter() - t) / len(qv) * 1000:.1f} ms/query")

    print(f"\nengine time p50 / p99 ms, top-{K}, 63,104 papers, {args.queries} queries per row")
    print(f"{'engine':24} {'queries':10} {'lexical':>15} {'dense':>15} {'hybrid':>15} {'hybrid+cat:' + CAT:>15}")
    paperdex_rows(store, short, full, qv, "paperdex")

    # recall@10 of paperdex's dense side (HNSW) against exact search
    vi = searcher.index
    mat = np.load(VECTORS).astype(np.float32)
    id_row = {pid: i for i, pid in enumerate(IDS.read_text().split())}
    rowid_of = {r[0]: r[1] for r in store.conn.execute("SELECT id, rowid FROM papers")}
    row_rowid = np.array([rowid_of[pid] for pid in IDS.read_text().split()])
    rec = []
    for q in full[:100] + short[:100]:
        exact = set(row_rowid[np.argsort(-(mat @ qv[q]))[:K]].tolist())
        got = {r for r, _ in vi.search(qv[q], K)}
        rec.append(len(exact & got) / K)
    print(f"dense recall@10 of paperdex (usearch HNSW int8, re-scored) against exact search: {np.mean(rec):.3f}")

    cats = [set(r["categories"]) for r in recs]
    texts = [r["title"] + ". " + r["abstract"] for r in recs]
    order = [id_row[r["id"]] for r in recs]
    mat = mat[order]
    in_cat = np.array([CAT in c for c in cats])

    if "bm25s" in peers:
        import bm25s
        import Stemmer

        stem = Stemmer.Stemmer("english")
        t = time.perf_counter()
        ret = bm25s.BM25()
        ret.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
        print(f"\nbm25s index: {time.perf_counter() - t:.1f} s")
        sub_idx = np.flatnonzero(in_cat)
        sub = mat[sub_idx]

        def lex(q, mask=None):
            toks = bm25s.tokenize([q], stopwords="en", stemmer=stem, show_progress=False)
            docs, _ = ret.retrieve(toks, k=100, show_progress=False, weight_mask=mask, n_threads=1)
            return docs[0].tolist()

        def dense(q, k=100):
            s = mat @ qv[q]
            top = np.argpartition(-s, k)[:k]
            return top[np.argsort(-s[top])].tolist()

        def dense_cat(q, k=100):
            s = sub @ qv[q]
            top = np.argpartition(-s, k)[:k]
            return sub_idx[top[np.argsort(-s[top])]].tolist()

        mask = in_cat.astype(np.float32)
        for name, qs in (("3 words", short), ("full title", full)):
            cells = [
                timed(lambda q: lex(q), qs),
                timed(lambda q: dense(q, K), qs),
                timed(lambda q: rrf_lists(lex(q), dense(q)), qs),
                timed(lambda q: rrf_lists(lex(q, mask), dense_cat(q)), qs),
            ]
            print(f"{'bm25s+numpy+RRF':24} {name:10} " + " ".join(f"{a:6.2f} /{b:6.2f}" for a, b in cells))

    if "milvus" in peers:
        milvus_rows(recs, mat, short, full, qv)

    if args.growth:
        print("\npaperdex as the corpus grows (engine time p50 / p99 ms):")
        for n in (16_000, 32_000):
            st = build_store(OUT / f"grow{n // 1000}k", limit=n)
            paperdex_rows(st, short, full, qv, f"paperdex {n // 1000}k")


def milvus_rows(recs, mat, short, full, qv) -> None:
    from pymilvus import AnnSearchRequest, DataType, Function, FunctionType, MilvusClient, RRFRanker

    path = OUT / "milvus-63k.db"
    fresh = not path.exists()
    client = MilvusClient(str(path))
    name = "papers"
    if fresh or not client.has_collection(name):
        schema = client.create_schema()
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field(
            "text", DataType.VARCHAR, max_length=65535, enable_analyzer=True, analyzer_params={"type": "english"}
        )
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=mat.shape[1])
        schema.add_field("cats", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=32, max_length=32)
        schema.add_function(
            Function(
                name="bm25", function_type=FunctionType.BM25, input_field_names=["text"], output_field_names=["sparse"]
            )
        )
        idx = client.prepare_index_params()
        idx.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        idx.add_index("dense", index_type="FLAT", metric_type="IP")
        client.create_collection(name, schema=schema, index_params=idx)
        t = time.perf_counter()
        for i in range(0, len(recs), 2000):
            client.insert(
                name,
                [
                    {
                        "pk": j,
                        "text": (r["title"] + ". " + r["abstract"])[:60000],
                        "dense": mat[j].tolist(),
                        "cats": r["categories"][:32],
                    }
                    for j, r in enumerate(recs[i : i + 2000], start=i)
                ],
            )
        client.flush(name)
        print(f"\nmilvus-lite insert: {time.perf_counter() - t:.1f} s")
    client.load_collection(name)
    flt = f'ARRAY_CONTAINS(cats, "{CAT}")'

    def lex(q, f=""):
        return client.search(
            name, data=[q], anns_field="sparse", limit=K, filter=f, search_params={"metric_type": "BM25"}
        )

    def dense(q, f=""):
        return client.search(
            name, data=[qv[q].tolist()], anns_field="dense", limit=K, filter=f, search_params={"metric_type": "IP"}
        )

    def hybrid(q, f=""):
        reqs = [
            AnnSearchRequest([q], "sparse", {"metric_type": "BM25"}, limit=100, expr=f or None),
            AnnSearchRequest([qv[q].tolist()], "dense", {"metric_type": "IP"}, limit=100, expr=f or None),
        ]
        return client.hybrid_search(name, reqs, RRFRanker(60), limit=K)

    hybrid(short[0])
    for label, qs in (("3 words", short), ("full title", full)):
        cells = [timed(lex, qs), timed(dense, qs), timed(hybrid, qs), timed(lambda q: hybrid(q, flt), qs)]
        print(f"{'Milvus Lite 2.5 (FLAT)':24} {label:10} " + " ".join(f"{a:6.2f} /{b:6.2f}" for a, b in cells))
    client.close()


if __name__ == "__main__":
    main()

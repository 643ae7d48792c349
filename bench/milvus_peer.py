"""Milvus Lite as a peer of bench/search.py, run by whichever interpreter has the version to time.

    python bench/milvus_peer.py --db bench/out/milvus3-63k.db --input bench/out/peer [--budget 60]

Standalone on purpose (pymilvus, numpy and the standard library only, no paperdex): Milvus Lite
2.5 and 3.x need pymilvus 2.5 and 3.0, which cannot share a venv, so bench/search.py runs this
file once per version, each time with the interpreter of a venv that has it, on the inputs it
wrote under `--input`:

* `docs.jsonl`: one paper a line, `{"text": title + ". " + abstract, "cats": [...]}`; the primary
  key is the line number. Read only to build the collection, and for the category mask.
* `docs.npy`: their float32 vectors, row k = line k.
* `queries.json` `{"3 words": [...], "full title": [...]}` and `queries.npz`, one float32 array
  of query vectors per list, under the same names.

The collection (built when `--db` has none): pk, text with a BM25 function into a sparse field,
the dense vector, categories as an ARRAY of VARCHAR. What differs by version, by what each
accepts:

* 2.x: the "english" analyzer (stemmed, Lucene's stopwords), dense FLAT (Lite 2.5 has no HNSW).
* 3.x: no "english" analyzer (only "standard" and "jieba"): the standard one (`\\w+`, lower case,
  no stemming) with Lucene's English stopwords as a stop filter; dense HNSW (M 16,
  efConstruction 200, searched with ef 128). 3.2.2 builds its BM25 index at the first search.

Every cell gets one untimed query first (3.x's BM25 index, caches), then the queries in order
until they are done or the cell has spent `--budget` seconds: a cell reports how many ran.
Prints ONE JSON line on stdout (progress goes to stderr): versions, index, build time, and
per query list and cell p50 / p99 ms, plus dense recall@10 against exact search over docs.npy,
without and with the category filter.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
from pymilvus import AnnSearchRequest, DataType, Function, FunctionType, MilvusClient, RRFRanker

NAME = "papers"
CAT = "cs.RO"
K = 10
FETCH = 100  # per side of a hybrid query, as paperdex and the bm25s peer do
EF = 128  # HNSW search breadth (>= FETCH)
CELLS = ("lexical", "dense", "hybrid", f"hybrid+cat:{CAT}")
# Lucene's English stopwords, the list the "english" analyzer of Milvus 2.5 removes
STOP_EN = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with"
).split()


def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def config(major: int) -> dict:
    if major < 3:
        return {
            "index": "FLAT",
            "index_params": {},
            "dense_params": {"metric_type": "IP"},
            "analyzer": {"type": "english"},
        }
    return {
        "index": "HNSW",
        "index_params": {"M": 16, "efConstruction": 200},
        "dense_params": {"metric_type": "IP", "params": {"ef": EF}},
        "analyzer": {"tokenizer": "standard", "filter": [{"type": "stop", "stop_words": STOP_EN}]},
    }


def build(client: MilvusClient, inp: Path, vecs: np.ndarray, cfg: dict) -> float:
    schema = client.create_schema()
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("text", DataType.VARCHAR, max_length=65535, enable_analyzer=True, analyzer_params=cfg["analyzer"])
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=vecs.shape[1])
    schema.add_field("cats", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=32, max_length=32)
    schema.add_function(
        Function(
            name="bm25", function_type=FunctionType.BM25, input_field_names=["text"], output_field_names=["sparse"]
        )
    )
    idx = client.prepare_index_params()
    idx.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    idx.add_index("dense", index_type=cfg["index"], metric_type="IP", params=cfg["index_params"])
    client.create_collection(NAME, schema=schema, index_params=idx)
    t = time.perf_counter()
    batch = []
    with open(inp / "docs.jsonl") as f:
        for j, line in enumerate(f):
            d = json.loads(line)
            batch.append({"pk": j, "text": d["text"][:60000], "dense": vecs[j].tolist(), "cats": d["cats"][:32]})
            if len(batch) == 2000:
                client.insert(NAME, batch)
                batch = []
    if batch:
        client.insert(NAME, batch)
    client.flush(NAME)
    return time.perf_counter() - t


def timed(fn, qs: list[str], budget: float) -> dict:
    fn(qs[0])  # untimed
    times: list[float] = []
    spent = time.perf_counter()
    for q in qs:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
        if time.perf_counter() - spent > budget:
            break
    return {"p50": statistics.median(times), "p99": pct(times, 99), "n": len(times), "of": len(qs)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True, help="the Milvus Lite file (2.x) or folder (3.x); built when absent")
    ap.add_argument("--input", required=True, type=Path, help="the folder bench/search.py wrote")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of queries per cell at most")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    load0 = loadavg()
    lite = version("milvus-lite")
    cfg = config(int(lite.split(".")[0]))
    vecs = np.load(args.input / "docs.npy", mmap_mode="r")
    with open(args.input / "queries.json") as f:
        queries: dict[str, list[str]] = json.load(f)
    qnpz = np.load(args.input / "queries.npz")
    qv = {lst: dict(zip(qs, qnpz[lst].astype(np.float32), strict=True)) for lst, qs in queries.items()}
    qv_all = {q: v for d in qv.values() for q, v in d.items()}

    t = time.perf_counter()
    client = MilvusClient(args.db)
    started = time.perf_counter() - t
    built = None
    if not client.has_collection(NAME):
        log(f"  {args.label}: building {args.db} ({len(vecs)} papers)")
        built = build(client, args.input, np.asarray(vecs, dtype=np.float32), cfg)
        log(f"  {args.label}: insert + flush {built:.1f} s")
    t = time.perf_counter()
    client.load_collection(NAME)
    loaded = time.perf_counter() - t
    flt = f'ARRAY_CONTAINS(cats, "{CAT}")'
    dp = cfg["dense_params"]

    def lex(q, f=""):
        return client.search(
            NAME, data=[q], anns_field="sparse", limit=K, filter=f, search_params={"metric_type": "BM25"}
        )

    def dense(q, f="", k=K):
        return client.search(NAME, data=[qv_all[q].tolist()], anns_field="dense", limit=k, filter=f, search_params=dp)

    def hybrid(q, f=""):
        reqs = [
            AnnSearchRequest([q], "sparse", {"metric_type": "BM25"}, limit=FETCH, expr=f or None),
            AnnSearchRequest([qv_all[q].tolist()], "dense", dp, limit=FETCH, expr=f or None),
        ]
        return client.hybrid_search(NAME, reqs, RRFRanker(60), limit=K)

    first = list(queries.values())[0][0]
    t = time.perf_counter()
    lex(first)  # 3.2.2 builds its BM25 index here
    first_s = time.perf_counter() - t
    log(f"  {args.label}: first lexical query {first_s:.2f} s")

    cells: dict[str, dict[str, dict]] = {}
    for lst, qs in queries.items():
        fns = (lex, dense, hybrid, lambda q: hybrid(q, flt))
        cells[lst] = {}
        for cell, fn in zip(CELLS, fns, strict=True):
            cells[lst][cell] = timed(fn, qs, args.budget)
            c = cells[lst][cell]
            log(f"  {args.label}: {lst} {cell}: {c['p50']:.2f} / {c['p99']:.2f} ms ({c['n']} of {c['of']})")

    # dense recall@10 against exact search over the same vectors, as paperdex's is measured
    mat = np.asarray(vecs, dtype=np.float32)
    with open(args.input / "docs.jsonl") as f:
        in_cat = np.array([CAT in json.loads(line)["cats"] for line in f])
    rq = queries["full title"][:100] + queries["3 words"][:100]
    recall = {}
    for key, f, mask in (("all", "", None), (f"cat:{CAT}", flt, in_cat)):
        got_r = []
        spent = time.perf_counter()
        for q in rq:
            s = mat @ qv_all[q]
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            exact = set(np.argpartition(-s, K)[:K].tolist())
            got = {h.id for h in dense(q, f)[0]}
            got_r.append(len(exact & got) / K)
            if time.perf_counter() - spent > args.budget:
                break
        recall[key] = {"recall": float(np.mean(got_r)), "n": len(got_r)}
    client.close()
    print(
        json.dumps(
            {
                "label": args.label,
                "milvus_lite": lite,
                "pymilvus": version("pymilvus"),
                "python": sys.version.split()[0],
                "index": cfg["index"],
                "index_params": cfg["index_params"],
                "dense_params": dp,
                "analyzer": cfg["analyzer"] if cfg["index"] == "FLAT" else "standard + Lucene English stopwords",
                "built_s": built,
                "client_start_s": started,
                "load_s": loaded,
                "first_lexical_s": first_s,
                "budget_s": args.budget,
                "cells": cells,
                "recall10": recall,
                "loadavg": [load0, loadavg()],
            }
        )
    )


if __name__ == "__main__":
    main()

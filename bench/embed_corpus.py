"""Embed a whole JSONL corpus to an aligned (.npy, ids.txt) pair, resumably.

For evaluation stores, this runs the product's own embedder outside a data directory so the
vectors can be reused by `paperdex ingest --vectors`. Progress goes to OUT.progress; killed
and restarted, it continues from the last finished chunk.

    python bench/embed_corpus.py ../shared/data/arxiv-21k.jsonl.gz data/e5-21k --model multilingual-e5-small
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import numpy as np

from paperdex.index.embed import doc_text, get_embedder

CHUNK = 256


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("out", help="output prefix: writes OUT.npy, OUT.ids.txt")
    ap.add_argument("--model", default="multilingual-e5-small")
    ap.add_argument("--threads", type=int, help="the model's threads (default: the engine's choice)")
    ap.add_argument("--shard", default="0/1", help="K/N: this process does every Nth chunk from the Kth")
    ap.add_argument("--no-join", action="store_true", help="only embed; another shard joins the parts")
    args = ap.parse_args()
    k, n_shards = (int(x) for x in args.shard.split("/"))
    out = Path(args.out)
    parts = Path(str(out) + ".parts")
    parts.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.corpus, "rt") if args.corpus.endswith(".gz") else open(args.corpus) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    emb = get_embedder(args.model, threads=args.threads)
    t0 = time.time()
    done = 0
    for start in range(0, len(recs), CHUNK):
        part = parts / f"{start:08d}.npy"
        if (start // CHUNK) % n_shards != k or part.exists():
            continue
        batch = recs[start : start + CHUNK]
        vecs = emb.embed_docs([doc_text(r["title"], r["abstract"]) for r in batch])
        np.save(str(part) + ".tmp.npy", vecs.astype(np.float16))
        Path(str(part) + ".tmp.npy").rename(part)
        done += len(batch)
        rate = done / (time.time() - t0)
        have = len(list(parts.glob("*[0-9].npy"))) * CHUNK
        Path(f"{out}.progress.{k}").write_text(f"~{have}/{len(recs)} docs, {rate:.2f} docs/s this shard this run\n")
    if args.no_join or not all((parts / f"{s:08d}.npy").exists() for s in range(0, len(recs), CHUNK)):
        return
    arrays = [np.load(parts / f"{s:08d}.npy") for s in range(0, len(recs), CHUNK)]
    np.save(str(out) + ".npy", np.concatenate(arrays))
    Path(str(out) + ".ids.txt").write_text("".join(r["id"] + "\n" for r in recs))
    print(f"wrote {out}.npy ({len(recs)} vectors)")


if __name__ == "__main__":
    main()

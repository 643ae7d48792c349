"""Train the Chinese-query adapter for multilingual-e5-small.

A Chinese one-line summary and the English paper it summarises land further apart in e5's
space than an English summary does. A 384x384 linear map applied to Chinese query vectors,
trained contrastively on (Chinese TL;DR, paper vector) pairs, pulls them together. Documents
are untouched, so the store's vectors and English queries are unaffected.

Training pairs: ../shared/data/zh-summaries-train.jsonl.gz (Chinese summaries written by a
language model for dw-dengwei/daily-arXiv-ai-enhanced; none is a development or held-back
query target), restricted to papers whose e5 vectors we have: VECS, the 63k corpus's
(bench/stores.sh writes them; the first adapter had the 21k sub-corpus's, `--vecs e5-21k`).
The TL;DRs are embedded as a search embeds a query, without the adapter being trained.

    python bench/train_zh_adapter.py queries [--vecs e5-63k]   # embed the training TL;DRs (resumable)
    python bench/train_zh_adapter.py train [--vecs e5-63k] [--out FILE]   # fit, write paperdex/data/zh-adapter.e5.npy
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WORK = Path("/work/vecs")
OUT = Path(__file__).resolve().parents[1] / "paperdex" / "data" / "zh-adapter.e5.npy"


def pairs(vecs: str) -> tuple[list[str], list[str]]:
    have = set((WORK / f"{vecs}.ids.txt").read_text().split())
    ids, texts = [], []
    for line in gzip.open(SHARED / "zh-summaries-train.jsonl.gz", "rt"):
        r = json.loads(line)
        if r["id"] in have and r["zh"].get("tldr"):
            ids.append(r["id"])
            texts.append(r["zh"]["tldr"])
    return ids, texts


def embed_queries(vecs: str) -> None:
    from paperdex.index.embed import EmbedOptions, get_embedder

    ids, texts = pairs(vecs)
    e5 = get_embedder("multilingual-e5-small", options=EmbedOptions(zh_adapter=False))  # what it is trained on
    parts = WORK / f"zhq-{vecs}.parts"
    parts.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    for s in range(0, len(texts), 512):
        f = parts / f"{s:06d}.npy"
        if f.exists():
            continue
        v = np.stack([e5.embed_query(t) for t in texts[s : s + 512]])
        np.save(f, v)
        print(f"{s + len(v)}/{len(texts)} {time.time() - t0:.0f}s", flush=True)
    q = np.concatenate([np.load(parts / f"{s:06d}.npy") for s in range(0, len(texts), 512)])
    np.save(WORK / f"zhq-{vecs}.npy", q)
    (WORK / f"zhq-{vecs}.ids.txt").write_text("\n".join(ids) + "\n")


def train(
    vecs: str, out: Path, epochs: int = 8, lr: float = 0.05, lam: float = 0.01, tau: float = 0.05, seed: int = 0
) -> None:
    """Keeps the epoch best on 1,000 held-out training pairs. InfoNCE over all training
    papers (full softmax: 37k docs fit in memory), gradient by hand,
    Adam; W starts at the identity and is pulled back to it by lam * ||W - I||^2."""
    q = np.load(WORK / f"zhq-{vecs}.npy").astype(np.float32)
    qids = (WORK / f"zhq-{vecs}.ids.txt").read_text().split()
    dids = (WORK / f"{vecs}.ids.txt").read_text().split()
    dv = np.load(WORK / f"{vecs}.npy").astype(np.float32)
    pos = {d: i for i, d in enumerate(dids)}
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(qids))
    n_val = 1000
    val, tr = order[:n_val], order[n_val:]
    docs_of = np.array([pos[i] for i in qids])

    def recall(W: np.ndarray, idx: np.ndarray) -> tuple[float, float]:
        qq = q[idx] @ W.T
        s = qq @ dv.T  # rank among all the set's papers, as at search time
        tgt = s[np.arange(len(idx)), docs_of[idx]]
        rank = (s > tgt[:, None]).sum(1)
        return float((rank == 0).mean()), float((rank < 10).mean())

    W = np.eye(q.shape[1], dtype=np.float32)
    print(f"identity: val R@1 {recall(W, val)[0]:.3f} R@10 {recall(W, val)[1]:.3f}", flush=True)
    m, v = np.zeros_like(W), np.zeros_like(W)
    cand = np.unique(docs_of[tr])
    D = dv[cand]  # negatives: every training paper
    col = {c: j for j, c in enumerate(cand)}
    step = 0
    best = (-1.0, W.copy())
    for ep in range(epochs):
        rng.shuffle(tr)
        for b in range(0, len(tr), 512):
            idx = tr[b : b + 512]
            Q = q[idx]
            logits = (Q @ W.T) @ D.T / tau
            logits -= logits.max(1, keepdims=True)
            P = np.exp(logits)
            P /= P.sum(1, keepdims=True)
            tgt = np.array([col[docs_of[i]] for i in idx])
            P[np.arange(len(idx)), tgt] -= 1.0
            G = (P @ D).T @ Q / tau / len(idx) + 2 * lam * (W - np.eye(len(W), dtype=np.float32))
            step += 1
            m = 0.9 * m + 0.1 * G
            v = 0.999 * v + 0.001 * G * G
            W -= lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8) * 0.01
        r1, r10 = recall(W, val)
        print(f"epoch {ep + 1}: val R@1 {r1:.3f} R@10 {r10:.3f}", flush=True)
        if r1 + r10 > best[0]:  # early stopping on held-out *training* pairs, not on dev queries
            best = (r1 + r10, W.copy())
    W = best[1]
    np.save(out, W.astype(np.float32))
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=("queries", "train"))
    ap.add_argument("--vecs", default="e5-63k", help="WORK/NAME.npy and NAME.ids.txt: the papers' e5 vectors")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.step == "queries":
        embed_queries(args.vecs)
    else:
        train(args.vecs, args.out)


if __name__ == "__main__":
    main()

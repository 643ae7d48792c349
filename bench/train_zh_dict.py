"""Learn a Chinese -> English word dictionary for the lexical side of Chinese queries.

BM25 cannot match a Chinese query word against an English paper. From 37,809 pairs of a
Chinese summary and the English paper it summarises (../shared/data/zh-summaries-train.jsonl.gz,
written by a language model for dw-dengwei/daily-arXiv-ai-enhanced; no pair is a query
target), we count, for every Chinese word (jieba), which English words its papers use far
more often than papers in general, and keep the best few as its translations.

    python bench/train_zh_dict.py     # writes paperdex/data/zh-en-dict.tsv
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import jieba
import numpy as np
import Stemmer
from scipy import sparse

from paperdex.paper import index_text
from paperdex.query import STOPWORDS

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
OUT = Path(__file__).resolve().parents[1] / "paperdex" / "data" / "zh-en-dict.tsv"
CJK = re.compile(r"^[\u4e00-\u9fff]+$")
EN = re.compile(r"[a-z][a-z0-9]+")
MIN_DF = 8  # a Chinese word seen in fewer summaries is not learned
MIN_P = 0.35  # P(english word in paper | chinese word in summary)
MIN_LIFT = 4.0  # ... and at least this many times its base rate
TOP = 3


def main() -> None:
    jieba.setLogLevel(60)
    stem = Stemmer.Stemmer("porter")
    papers = {}
    for line in gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt"):
        r = json.loads(line)
        papers[r["id"]] = index_text(r["title"] + " " + r["abstract"]).lower()
    zh_docs, en_docs = [], []
    surface: dict[str, Counter] = {}
    for line in gzip.open(SHARED / "zh-summaries-train.jsonl.gz", "rt"):
        r = json.loads(line)
        zh = " ".join(r["zh"].get(k) or "" for k in ("tldr", "motivation", "method"))
        zw = {w for w in jieba.cut(zh) if CJK.match(w) and len(w) >= 2}
        words = [w for w in EN.findall(papers[r["id"]]) if w not in STOPWORDS]
        stems = stem.stemWords(words)
        for w, s in zip(words, stems, strict=True):
            surface.setdefault(s, Counter())[w] += 1
        zh_docs.append(zw)
        en_docs.append(set(stems))
    zv = {w: i for i, w in enumerate(sorted({w for d in zh_docs for w in d}))}
    ev = {w: i for i, w in enumerate(sorted({w for d in en_docs for w in d}))}

    def matrix(docs, vocab):
        rows = [i for i, d in enumerate(docs) for _ in d]
        cols = [vocab[w] for d in docs for w in d]
        return sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(docs), len(vocab)))

    Z, E = matrix(zh_docs, zv), matrix(en_docs, ev)
    co = (Z.T @ E).tocsr()  # zh word x en stem: papers where both occur
    zdf = np.asarray(Z.sum(0)).ravel()
    ebase = np.asarray(E.sum(0)).ravel() / len(en_docs)
    inv_e = {i: w for w, i in ev.items()}
    out = []
    for w, i in zv.items():
        if zdf[i] < MIN_DF:
            continue
        row = co.getrow(i)
        p = row.data / zdf[i]
        lift = p / ebase[row.indices]
        ok = (p >= MIN_P) & (lift >= MIN_LIFT)
        if not ok.any():
            continue
        score = p * np.log(lift)
        best = sorted(zip(score[ok], row.indices[ok], strict=True), reverse=True)[:TOP]
        out.append((w, [surface[inv_e[j]].most_common(1)[0][0] for _, j in best]))
    OUT.write_text(
        "# Chinese word -> English words, learned by bench/train_zh_dict.py from Chinese summaries by\n"
        "# dw-dengwei/daily-arXiv-ai-enhanced (Modified Apache License).\n"
        + "".join(f"{w}\t{' '.join(ts)}\n" for w, ts in sorted(out))
    )
    print(f"{len(out)} Chinese words -> {OUT}")


if __name__ == "__main__":
    main()

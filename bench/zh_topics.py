"""Topic queries, Chinese against English, through a stand-in of the concept contract.

Until the new query engine lands, this scores the topic development sets with a simple, fair
model of what it will do: a query is a list of concepts, each a list of alternatives (one or
more English words); a paper matches a concept when its title + abstract contains every
(Porter-stemmed) word of at least one alternative; the candidates are the papers that match
every concept (when none does, those matching any); BM25 (k1 1.2, b 0.75, title + abstract)
over the words of all alternatives ranks them. Chinese text goes through `zh.concepts`; an
English word, in either language's query, is a concept of its own.

    python bench/zh_topics.py                       # 21k dev sets, nDCG@10 per topic and mean
    python bench/zh_topics.py --show                # also the concepts of every Chinese query
    python bench/zh_topics.py --dict OLD.tsv        # another dictionary file (same format)
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
from pathlib import Path

import numpy as np
import Stemmer
from train_zh_dict import STOPWORDS, index_text  # the dictionary's own normaliser

from paperdex.text import IDEOGRAPHS, zh

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TOKEN = re.compile(r"[a-z0-9]+")
CJK = re.compile(f"[{IDEOGRAPHS}]+")
K1, B = 1.2, 0.75
HELD_OUT_STYLE = [
    "联邦学习",
    "知识蒸馏",
    "目标检测",
    "图神经网络",
    "对比学习",
    "点云",
    "蛋白质结构预测",
    "提示学习",
    "持续学习",
    "具身智能",
    "视觉语言导航",
    "时间序列预测",
    "推荐系统 冷启动",
    "医学图像分割",
    "自动驾驶 轨迹预测",
    "神经辐射场",
    "参数高效微调",
    "人类反馈强化学习",
]


class Index:
    def __init__(self, corpus: Path):
        self.stem = Stemmer.Stemmer("porter")
        self.ids: list[str] = []
        post: dict[str, dict[int, int]] = {}
        lengths = []
        for i, line in enumerate(gzip.open(corpus, "rt")):
            r = json.loads(line)
            self.ids.append(r["id"])
            toks = self.stem.stemWords(TOKEN.findall(index_text(r["title"] + " " + r["abstract"]).lower()))
            lengths.append(len(toks))
            for t in toks:
                d = post.setdefault(t, {})
                d[i] = d.get(i, 0) + 1
        self.n = len(self.ids)
        self.len = np.asarray(lengths, np.float32)
        self.avg = float(self.len.mean())
        self.post = {t: (np.fromiter(d, np.int64), np.fromiter(d.values(), np.float32)) for t, d in post.items()}

    def mask(self, words: list[str]) -> np.ndarray:
        m = np.ones(self.n, bool)
        for s in self.stem.stemWords(words):
            one = np.zeros(self.n, bool)
            if s in self.post:
                one[self.post[s][0]] = True
            m &= one
        return m

    def search(self, concepts: list[list[str]], k: int = 10) -> list[str]:
        if not concepts:
            return []
        masks = []
        for alts in concepts:
            m = np.zeros(self.n, bool)
            for alt in alts:
                m |= self.mask(alt.split())
            masks.append(m)
        cand = np.logical_and.reduce(masks)
        if not cand.any():
            cand = np.logical_or.reduce(masks)
        score = np.zeros(self.n, np.float32)
        stems = {s for alts in concepts for alt in alts for s in self.stem.stemWords(alt.split())}
        for s in stems:
            if s not in self.post:
                continue
            docs, tf = self.post[s]
            idf = math.log(1 + (self.n - len(docs) + 0.5) / (len(docs) + 0.5))
            score[docs] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * self.len[docs] / self.avg))
        score[~cand] = -1
        top = np.argsort(-score, kind="stable")[:k]
        return [self.ids[i] for i in top if score[i] >= 0]


def en_concepts(text: str) -> list[list[str]]:
    out = []
    for w in text.lower().split():
        words = [t for t in TOKEN.findall(w) if t not in STOPWORDS]
        if words:
            out.append([" ".join(words)])
    return out


def zh_concepts(text: str) -> list[list[str]]:
    """Chinese runs through zh.concepts, other words as English concepts, in query order."""
    out = []
    for piece in re.split(f"({CJK.pattern})", text):
        out += zh.concepts(piece) if CJK.fullmatch(piece) else en_concepts(piece)
    return out


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / idcg if idcg else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="21k", choices=["21k", "63k"])
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--dict", help="dictionary file to use instead of paperdex/data/zh-en-dict.tsv")
    args = ap.parse_args()
    if args.dict:
        zh.DICT = Path(args.dict)
    corpus = SHARED / ("arxiv-21k.jsonl.gz" if args.size == "21k" else "arxiv-2025-2026.jsonl.gz")
    index = Index(corpus)
    zq = [json.loads(x) for x in open(SHARED / f"eval-topics-{args.size}-zh-dev.jsonl")]
    eq = {json.loads(x)["query"]: json.loads(x) for x in open(SHARED / f"eval-topics-{args.size}-en-dev.jsonl")}
    rows = []
    for q in zq:
        rel = set(q["relevant"])
        zc, ec = zh_concepts(q["query"]), en_concepts(q["en"])
        e = eq[q["en"]]
        rows.append((q["query"], q["en"], ndcg10(index.search(zc), rel), ndcg10(index.search(ec), set(e["relevant"]))))
        if args.show:
            print(q["query"], " => ", " + ".join("[" + " | ".join(c) + "]" for c in zc))
    print(f"{'zh':<14} {'en':<36} {'zh':>5} {'en':>5}")
    for z, e, a, b in rows:
        print(f"{z:<14} {e:<36} {a:5.2f} {b:5.2f}")
    mz, me = np.mean([r[2] for r in rows]), np.mean([r[3] for r in rows])
    print(f"mean nDCG@10 ({len(rows)} topics): zh {mz:.4f}  en {me:.4f}  zh/en {mz / me:.3f}")
    if args.show:
        print("\nheld-out style (not in the dev set):")
        for t in HELD_OUT_STYLE:
            print(t, " => ", " + ".join("[" + " | ".join(c) + "]" for c in zh_concepts(t)))


if __name__ == "__main__":
    main()

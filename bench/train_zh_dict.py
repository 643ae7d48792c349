"""Learn a Chinese -> English dictionary of words and phrases for Chinese queries.

BM25 cannot match a Chinese query word against an English paper. From 37,809 pairs of a
Chinese summary and the English paper it summarises (../shared/data/zh-summaries-train.jsonl.gz,
written by a language model for dw-dengwei/daily-arXiv-ai-enhanced; no pair is a query
target) we learn, for every Chinese unit, the English expressions that translate it:

- Chinese units: jieba words of all five summary fields (TL;DR, motivation, method, result,
  conclusion) and phrases of two or three adjacent jieba words (大 + 语言 + 模型, 模型 + 量化).
- English units: the index's stems (paperdex.text: Porter's, generalization apart from
  generation) of the paper's title + abstract, and their frequent bigrams and trigrams ("large
  language model", "meta learn", "chain of thought").
- Association: a unit pair is a candidate when the English unit is in the paper for a good
  share of the summaries with the Chinese unit (P(e|z)) and far above its base rate (lift).
  Candidates compete (competitive linking, document level): an English unit is kept for a
  Chinese unit only if its Dice score there is close to its best Dice over all Chinese units,
  so "llm" goes to 大语言模型, not to 推理 that often appears beside it. A shorter English
  unit inside a longer kept one that covers most of its pairs is dropped.
- Summaries also spell many terms out: 元学习（meta-learning）, 大语言模型（LLM）. Such pairs,
  seen in several summaries and confirmed by the papers, add alternatives (acronyms mostly).

The output lists every Chinese unit with translations: its count in the summaries (for
segmenting queries) and up to four English alternatives, best first, each one or more lowercase
words.

    python bench/train_zh_dict.py     # writes paperdex/data/zh-en-dict.tsv (~4 min on 2 cores)

One family is composed by rule, not learned: "A to B" between modalities (文本生成视频,
文生视频, 图生视频, 文本转语音, 语音转文字, 文本到三维), which the summaries write too seldom in
any one spelling to be learned (文本生成视频 6 times, 图生视频 never: jieba cut them into
"text generation | video" or "video" alone). `compose` adds each spelling the learned part lacks,
after it, for the pairs the English papers write as a term ("text-to-video" in at least 3 of
them: 28 of the 81 pairs), as "a to b" (the words side by side, stopwords aside), "b generation",
and the usual acronym; its count is how many summaries hold it (at least 2, so that the
segmenter keeps it whole). A learned spelling keeps its readings and gains the acronym it lacks
(文生图: t2i).

    python bench/train_zh_dict.py --compose   # only redo the composed part of the file
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path

import jieba
import numpy as np
from scipy import sparse

from paperdex.text import IDEOGRAPHS, stemmer  # what paperdex.text.zh segments and the index stems: one rule each
from paperdex.text.zh import FUNCTION_CHARS

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
OUT = Path(__file__).resolve().parents[1] / "paperdex" / "data" / "zh-en-dict.tsv"
FIELDS = ("tldr", "motivation", "method", "result", "conclusion")
CJK_RUN = re.compile(f"[{IDEOGRAPHS}]+")
CJK = re.compile(f"^[{IDEOGRAPHS}]+$")
CLAUSE = re.compile(r"[()\[\]{},;:!?\"/]|\.(?!\d)")  # n-grams stay inside one
TOKEN = re.compile(r"[a-z][a-z0-9]*|[0-9]+[a-z][a-z0-9]*")
PAREN = re.compile(rf"([{IDEOGRAPHS}]+)\s*[（(]\s*([A-Za-z][A-Za-z0-9\- ]{{0,40}}?)\s*[)）]")
MIN_DF_ZH = 8  # a Chinese word seen in fewer summaries is not learned
MIN_DF_PHRASE = 8  # ... a phrase of two or three words
MIN_DF_EN = 8
MIN_P = 0.3  # P(English unit in paper | Chinese unit in summary), best alternative
MIN_LIFT = 2.0  # ... and at least this many times its base rate
ALT_P = 0.25  # further alternatives
ALT_SCORE = 0.3  # ... scoring (P(e|z) log lift) at least this share of the best one
OWN_SCORE = 0.5  # ... or, under ALT_P, when the Chinese unit is its best and it scores this close
SURE_P, SURE_LIFT = 0.5, 5.0  # a pair this strong needs no competition ...
EXPLAINED = 0.5  # ... when this share of its pairs stands without the English unit's best Chinese unit
COMPETE = 0.5  # Dice at least this share of the English unit's best Dice
SUBSUME = 0.5  # a longer alternative replaces a shorter one inside it when it covers this share
TOP = 4
# single-character function words: a phrase unit holding one as a word of its own is not a term
# (the product's list: a query's notices leave them out too)
ZH_FUNCTION = set(FUNCTION_CHARS)
# 过 opening a phrase is the prefix "over-" (过拟合, 过平滑, 过采样, 过参数化), which jieba cuts off
# (过 | 平滑), not the aspect particle, which follows its verb (学习过 | 的)
ZH_PREFIX = frozenset("过")
# words that frame what follows ("based on", "through", "using", "a kind of"): a phrase they open
# translates as what follows does (基于扩散 -> diffusion), and in a query it takes characters from
# the next word (基于扩散 | 策略 instead of 基于 | 扩散策略): such a phrase is not a unit
ZH_FRAME = frozenset("基于 通过 利用 使用 针对 用于 对于 关于 采用 借助 进行 提出 一种".split())
STOPWORDS = frozenset(  # the query engine's list when this was written
    "a an and are as at be by for from has have in is it its of on or that the this to was were "
    "with we our via using based towards toward into than then these those which".split()
)
EN_STOP = STOPWORDS | {"of", "we", "our", "its", "their", "can", "also", "such", "both", "not", "but"}


# LaTeX and Markdown out of the English text (kept here, not shared with the index: the
# dictionary must not change when the index's normaliser does)
_LATEX_CMD_ARG = re.compile(
    r"\\(?:textbf|textit|emph|mathrm|mathbf|mathcal|text|texttt|mathbb|underline)\s*\{([^{}]*)\}"
)
_LATEX_CMD = re.compile(r"\\([A-Za-z]+)")
_MARKUP = re.compile(r"\*\*|__|[{}$^~]|\\[,;:! ]")


def index_text(text: str) -> str:
    return _MARKUP.sub(" ", _LATEX_CMD.sub(r"\1", _LATEX_CMD_ARG.sub(r"\1", text)))


# the composed family: a modality's Chinese spellings -> its English word; the connectors
MODALITIES = {
    "text": ("文本", "文字"),
    "image": ("图像", "图片"),
    "video": ("视频",),
    "speech": ("语音",),
    "audio": ("音频",),
    "music": ("音乐",),
    "3d": ("三维",),
    "motion": ("动作",),
    "code": ("代码",),
}
SHORT = {"text": "文", "image": "图"}  # 文生图, 图生视频: one character, with 生 only
CONNECTORS = ("到", "生成", "转")
MADE = {"image": "image generation", "video": "video generation", "speech": "speech synthesis",
        "audio": "audio generation", "music": "music generation", "3d": "3d generation",
        "motion": "motion generation", "code": "code generation"}  # fmt: skip
ACRONYM = {("text", "image"): "t2i", ("text", "video"): "t2v", ("image", "video"): "i2v",
           ("text", "speech"): "tts", ("speech", "text"): "asr"}  # fmt: skip
# Words the learner cannot make, written by hand. 大模型 ("large model") is what Chinese writes
# where English papers write "LLM": the learner rightly finds no English unit specific to it (the
# papers behind its summaries say "llm" only a little more often than the rest: docs/relevance.md).
# 文字 ("written words") is what a question says for text (用文字指令编辑图像: edit an image by a
# text instruction); the summaries write it mostly of writing systems, so it was learned as "scripts".
# 量化 typed as a topic (大模型量化, 扩散模型量化) is quantization; the summaries write it more often
# as the verb "quantify", which the learner kept alone (docs/relevance.md).
# 工作 in a question is "work", a frame word set aside (上下文学习的工作机制: how in-context learning
# works); the summaries' 工作流 ("workflow", which jieba cuts 工作 | 流) taught the learner
# "workflows" for 工作 alone, so 工作流 gets that reading as a word of its own.
# 等变 ("equivariant") is cut 等 | 变 by jieba, and 等 ("etc.") is a function word, so no phrase of it
# is ever learned.
# 过优化 ("over-optimization", of a reward model) is learned as "policy": the summaries that hold it
# are about RL policies, and papers write "over-optimization" too seldom to be its unit.
HAND = {
    "大模型": "large language model | llm | large model",
    "文字": "text",
    "量化": "quantization | quantify",
    "工作": "work",
    "工作流": "workflow",
    "等变": "equivariant | equivariance",
    "过优化": "overoptimization",
}
COMPOSED = "# Composed by rule, not learned (bench/train_zh_dict.py, compose): a modality to a modality, then HAND.\n"


MIN_PAIR_PAPERS = 3  # papers writing "a to b" (or "a-to-b") for the pair to be a term of the field


def written_pairs(papers: Iterable[str]) -> set[tuple[str, str]]:
    """The modality pairs the English papers write as a term ("text-to-video"), MIN_PAIR_PAPERS times."""
    pattern = re.compile(rf"\b({'|'.join(MODALITIES)})[- ]to[- ]({'|'.join(MODALITIES)})\b")
    seen: Counter = Counter()
    for text in papers:
        seen.update({(m[1], m[2]) for m in pattern.finditer(text.lower())})
    return {pair for pair, n in seen.items() if n >= MIN_PAIR_PAPERS}


def composed(learned: dict[str, list[str]], summaries: list[str], pairs: set[tuple[str, str]]) -> list[str]:
    """The "A to B" family's lines for the words `learned` ({word: its alternatives}) lacks, for
    the `pairs` papers write (see the module's docstring); a learned spelling that lacks the
    pair's acronym gets it after its own alternatives (文生图: text to image | image generation | t2i)."""
    spellings: dict[str, tuple[str, str]] = {}
    for a, a_zh in MODALITIES.items():
        for b, b_zh in MODALITIES.items():
            if (a, b) not in pairs:
                continue
            for x in a_zh:
                for y in b_zh:
                    for c in CONNECTORS:
                        spellings[x + c + y] = (a, b)
                    if a in SHORT:
                        spellings[SHORT[a] + "生" + y] = (a, b)
            if a in SHORT and b in SHORT:
                spellings[SHORT[a] + "生" + SHORT[b]] = (a, b)

    def line(zh: str, alts: list[str]) -> str:
        """A composed line; its count is how many summaries hold the word, at least 2 (the segmenter
        keeps a word of count 2 or more whole)."""
        return f"{zh}\t{max(2, sum(zh in text for text in summaries))}\t{' | '.join(x for x in alts if x)}\n"

    rows = []
    for zh, (a, b) in sorted(spellings.items()):
        acronym = ACRONYM.get((a, b), "")
        if zh not in learned:
            rows.append(line(zh, [f"{a} to {b}", MADE.get(b, ""), acronym]))
        elif acronym and acronym not in learned[zh]:
            rows.append(line(zh, [*learned[zh], acronym]))
    return rows + [line(zh, alts_text.split(" | ")) for zh, alts_text in HAND.items()]


def compose() -> None:
    """Redo the composed part of the dictionary file, the learned part untouched."""
    text = OUT.read_text(encoding="utf-8")
    learned = text.split("# Composed by rule")[0]
    words = {r[0]: r[2].split(" | ") for r in (line.split("\t") for line in learned.splitlines()) if len(r) == 3}
    summaries = [
        json.dumps(json.loads(line), ensure_ascii=False)
        for line in gzip.open(SHARED / "zh-summaries-train.jsonl.gz", "rt")
    ]
    papers = (json.loads(line) for line in gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt"))
    rows = composed(words, summaries, written_pairs(f"{r['title']} {r['abstract']}" for r in papers))
    OUT.write_text(learned + COMPOSED + "".join(rows), encoding="utf-8")
    log(f"{len(rows)} composed entries -> {OUT}")


def log(msg: str, t0: float = time.time()) -> None:
    print(f"[{time.time() - t0:6.1f}s] {msg}", flush=True)


def en_units(text: str, stem) -> tuple[list[str], list[str]]:
    """Stemmed unigrams (no stopwords) and n-grams (n = 2, 3; no stopword at either end) of `text`,
    with the n-grams' surface forms. An n-gram does not cut a hyphenated word at a function word
    inside it: "end-to-end speech" gives "end to end", not "end speech", and "state-of-the-art
    performance" no "art performance" (端到端语音 had been learned as "end speech"); "in-context
    learning" still gives "context learning", and "AI-generated image" "generated image"."""
    units, surface = [], []
    for clause in CLAUSE.split(index_text(text).lower()):
        found = list(TOKEN.finditer(clause))
        words = [m[0] for m in found]
        cut = _cuts(clause, found)
        stems = stem.stemWords(words)
        for i, (w, s) in enumerate(zip(words, stems, strict=True)):
            if w in EN_STOP:
                continue
            units.append(s)
            surface.append(w)
            for n in (2, 3):
                j = i + n
                if j > len(words) or words[j - 1] in EN_STOP or cut[i] or cut[j]:
                    continue
                if n == 3 and words[i + 1] in EN_STOP and words[i + 1] not in ("of", "to"):
                    continue
                units.append(" ".join(stems[i:j]))
                surface.append(" ".join(words[i:j]))
    return units, surface


def _cuts(clause: str, found: list[re.Match]) -> list[bool]:
    """For each gap between words (gap k before word k; one more at the end), whether an n-gram
    starting or ending there would cut a hyphenated word at a function word with a content word
    on the far side of it (end-to|-end, chain|-of-thought; not in-|context, AI-|generated)."""
    words = [m[0] for m in found]
    joined = [clause[a.end() : b.start()] == "-" for a, b in pairwise(found)]
    cut = [False] * (len(words) + 1)
    for k in range(1, len(words)):
        if not joined[k - 1]:
            continue
        left, right = k - 1, k  # the words either side of the gap, and the content beyond the stopword
        while left > 0 and joined[left - 1] and words[left] in EN_STOP:
            left -= 1
        while right < len(words) - 1 and joined[right] and words[right] in EN_STOP:
            right += 1
        stop_at_gap = words[k - 1] in EN_STOP or words[k] in EN_STOP
        cut[k] = stop_at_gap and words[left] not in EN_STOP and words[right] not in EN_STOP
    return cut


def _framed_or_functional(toks: list[str]) -> bool:
    """Whether a phrase's words hold a function word, or open with a framing one (ZH_FRAME). A
    prefix opening it is not a function word there (ZH_PREFIX)."""
    rest = toks[1:] if toks[0] in ZH_PREFIX else toks
    return toks[0] in ZH_FRAME or any(t in ZH_FUNCTION for t in rest)


def zh_units(fields: list[str], counts: Counter) -> set[str]:
    """jieba words of two or more characters and phrases of 2-3 adjacent words, per CJK run;
    `counts` gets their occurrences."""
    out = set()
    for text in fields:
        for run in CJK_RUN.findall(text):
            toks = list(jieba.cut(run))
            for i in range(len(toks)):
                if len(toks[i]) >= 2:
                    out.add(toks[i])
                    counts[toks[i]] += 1
                for n in (2, 3):
                    if i + n <= len(toks):
                        p = "".join(toks[i : i + n])
                        if len(p) <= 8:
                            out.add(p)
                            counts[p] += 1
    return out


def main() -> None:
    jieba.setLogLevel(60)
    stem = stemmer()  # the index's stems (generalization apart from generation), so the readings match it
    summaries = [json.loads(line) for line in gzip.open(SHARED / "zh-summaries-train.jsonl.gz", "rt")]
    want = {r["id"] for r in summaries}
    papers = {}
    for line in gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt"):
        r = json.loads(line)
        if r["id"] in want:
            papers[r["id"]] = r["title"] + " . " + r["abstract"]
    summaries = [r for r in summaries if r["id"] in papers]
    log(f"{len(summaries)} summary/paper pairs")

    cache = Path(os.environ.get("ZH_TRAIN_CACHE", "/nonexistent"))  # for experiments: segment once
    if cache.exists():
        zh_docs, zcount, paren = pickle.loads(cache.read_bytes())
    else:
        zcount: Counter = Counter()
        zh_docs = []
        paren: Counter = Counter()
        for r in summaries:
            fields = [r["zh"].get(k) or "" for k in FIELDS]
            zh_docs.append(zh_units(fields, zcount))
            for text in fields:
                for zh_run, en in PAREN.findall(text):
                    toks = list(jieba.cut(zh_run))
                    for n in (1, 2, 3):
                        if n <= len(toks) and len("".join(toks[-n:])) >= 2:
                            paren["".join(toks[-n:]), en.lower().replace("-", " ").strip()] += 1
        if "ZH_TRAIN_CACHE" in os.environ:
            cache.write_bytes(pickle.dumps((zh_docs, zcount, paren)))
    log(f"segmented: {len(zcount)} Chinese units")
    en_docs = [set(en_units(papers[r["id"]], stem)[0]) for r in summaries]

    zdf = Counter(w for d in zh_docs for w in d)
    edf = Counter(w for d in en_docs for w in d)
    zv = sorted(
        w
        for w, c in zdf.items()
        if c >= (MIN_DF_ZH if w in jieba.dt.FREQ or len(w) <= 2 else MIN_DF_PHRASE)
        and (w in jieba.dt.FREQ or not _framed_or_functional(jieba.lcut(w)))
    )
    ev = sorted(w for w, c in edf.items() if c >= MIN_DF_EN)
    zi = {w: i for i, w in enumerate(zv)}
    ei = {w: i for i, w in enumerate(ev)}
    log(f"vocabulary: {len(zv)} Chinese, {len(ev)} English units")

    def matrix(docs, vocab):
        rows, cols = [], []
        for i, d in enumerate(docs):
            ids = sorted(vocab[w] for w in d if w in vocab)  # not in a set's order: the same each run
            rows += [i] * len(ids)
            cols += ids
        return sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(docs), len(vocab)))

    Z, E = matrix(zh_docs, zi), matrix(en_docs, ei)
    n_docs = Z.shape[0]
    nz = np.asarray(Z.sum(0)).ravel()
    ne = np.asarray(E.sum(0)).ravel()
    ZT = Z.T.tocsr()
    # pass 1: candidate pairs with their counts (pairs with a tiny Dice can win nothing)
    cand_f, cand_e, cand_c = [], [], []
    step = 1500
    for a in range(0, len(zv), step):
        co = (ZT[a : a + step] @ E).tocoo()
        f = co.row + a
        dice = 2 * co.data / (nz[f] + ne[co.col])
        pe = co.data / nz[f]
        keep = (co.data >= 3) & ((dice >= 0.03) | ((pe >= SURE_P) & (pe * n_docs >= SURE_LIFT * ne[co.col])))
        cand_f.append(f[keep])
        cand_e.append(co.col[keep])
        cand_c.append(co.data[keep])
    f = np.concatenate(cand_f)
    e = np.concatenate(cand_e)
    c = np.concatenate(cand_c)
    log(f"{len(c)} candidate pairs")
    p = c / nz[f]
    lift = p / (ne[e] / n_docs)
    dice = 2 * c / (nz[f] + ne[e])
    best_dice = np.zeros(len(ev))
    np.maximum.at(best_dice, e, dice)
    best_f = np.zeros(len(ev), np.int64)
    best_f[e] = -1
    order = np.lexsort((f, dice))  # later (larger) assignments win; a tie to the later unit, every run
    best_f[e[order]] = f[order]
    own = best_f[e] == f  # this Chinese unit is the English unit's best translation
    sure = (p >= SURE_P) & (lift >= SURE_LIFT) & (c >= 5)  # a rare synonym (文生图 beside 文本到图像)
    ok = ((dice >= COMPETE * best_dice[e]) | sure) & (lift >= MIN_LIFT) & ((p >= ALT_P) | own)
    score = p * np.log(lift)
    # ... unless the English unit's best Chinese unit, beside it in the same summaries, explains it
    # away (越狱攻击 -> safety: 安全 is there too); nested units (大语言模型, 语言) do not compete
    ZC = Z.tocsc()

    def explained(fi: int, ej: int, cc: float) -> bool:
        """Is English unit `ej` in the papers of Chinese unit `fi` mostly where the summary also
        has the English unit's best Chinese unit (a different word, not one inside the other)?"""
        other, unit = zv[best_f[ej]], ev[ej]
        if other in zv[fi] or zv[fi] in other:
            return False
        docs = ZC.indices[ZC.indptr[fi] : ZC.indptr[fi + 1]]
        alone = sum(1 for d in docs if unit in en_docs[d] and other not in zh_docs[d])
        return alone < EXPLAINED * cc

    for k in np.flatnonzero(sure & ~(dice >= COMPETE * best_dice[e]) & ok):
        ok[k] = not explained(int(f[k]), int(e[k]), c[k])
    by_f: dict[int, list[tuple[float, int, float, float]]] = defaultdict(list)
    for fi, ej, d, pp, cc in zip(f[ok], e[ok], score[ok], p[ok], c[ok], strict=True):
        by_f[int(fi)].append((float(d), int(ej), float(pp), float(cc)))
    log(f"{len(by_f)} Chinese units with candidates")

    table: dict[str, list[str]] = {}
    debug = open(os.environ["ZH_TRAIN_DEBUG"], "w") if "ZH_TRAIN_DEBUG" in os.environ else None
    if debug:  # ten best candidates (* = kept): unit dice/P(e|z)/score/the unit's best Chinese unit
        shown: dict[int, list[int]] = defaultdict(list)
        for k in np.lexsort((-dice, f)):
            if len(shown[int(f[k])]) < 10:
                shown[int(f[k])].append(int(k))
        for fi, ks in sorted(shown.items()):
            top = " | ".join(
                f"{'*'[: int(ok[k])]}{ev[e[k]]} {dice[k]:.2f}/{p[k]:.2f}/{score[k]:.2f}/{zv[best_f[e[k]]]}" for k in ks
            )
            debug.write(f"{zv[fi]}\t{top}\n")
    for fi, cands in by_f.items():
        cands.sort(reverse=True)
        if not any(pp >= MIN_P for _, _, pp, _ in cands):
            continue
        kept: list[tuple[float, str, float]] = []
        for d, ej, pp, cc in cands:
            unit = ev[ej]
            if d < ALT_SCORE * cands[0][0]:
                break
            if pp < ALT_P and d < OWN_SCORE * cands[0][0]:
                continue  # a rarer reading (量化: quantify, quantization) only when close to the best
            if kept and explained(fi, ej, cc):
                continue  # a word of the topic, not a translation (强化学习: reward, 奖励 is there too)
            kept.append((d, unit, cc))
        # of two alternatives where one holds all the words of the other, the longer one is the
        # more precise; keep it when it covers most of the shorter one's pairs, else the shorter
        # one (3d reconstruction over reconstruction; domain adaptation over unsupervised ...)
        drop = set()
        for _, a, ca in kept:
            for _, b, cb in kept:
                if set(a.split()) < set(b.split()):
                    drop.add(a if cb >= SUBSUME * ca else b)
        kept = [x for x in kept if x[1] not in drop] or kept[:1]  # each drops the other: the best stays
        table[zv[fi]] = [k for _, k, _ in kept]
    # a phrase of two or three words whose best translation is one word that one of its parts
    # already translates to adds nothing over its parts as separate concepts (推理加速 -> inference
    # would lose 加速; 分子生成 -> molecular would lose 生成): left to the parts
    for z in [z for z in table if z not in jieba.dt.FREQ]:
        best = table[z][0] if table[z] else ""
        parts = [t for t in jieba.lcut(z) if t != z]
        if " " not in best and len(parts) > 1 and any(best in table.get(t, ()) for t in parts):
            del table[z]
    # spelled-out pairs, 元学习（meta-learning）, 大语言模型（LLM）: an English term written after
    # the Chinese one in several summaries and in the papers well above its base rate
    by_zh: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for (z, en), n in paren.items():
        if n >= 3 and z in zi:
            by_zh[z].append((n, en))
    for z, pairs in by_zh.items():
        total = sum(n for n, _ in pairs)
        for n, en in sorted(pairs, reverse=True):
            key = " ".join(stem.stemWords(TOKEN.findall(en)))
            if n < 0.2 * total or key not in ei:
                continue
            j, i = ei[key], zi[z]
            p = Z[:, i].multiply(E[:, j]).sum() / nz[i]
            if p < ALT_P or p / (ne[j] / n_docs) < MIN_LIFT:
                continue
            alts = table.setdefault(z, [])
            if key not in alts and not any(set(a.split()) <= set(key.split()) for a in alts):
                alts.insert(1 if alts else 0, key)
    if debug:
        debug.close()
    table = {z: alts[:TOP] for z, alts in table.items() if alts}
    needed = {a for alts in table.values() for a in alts}
    log(f"{len(table)} entries; surface forms")

    # stems back to their commonest surface form
    surf: dict[str, Counter] = {u: Counter() for u in needed}
    for text in papers.values():
        units, surface = en_units(text, stem)
        for u, s in zip(units, surface, strict=True):
            if u in surf:
                surf[u][s] += 1
    rows = []
    for z, alts in sorted(table.items()):
        words = []
        for a in alts:
            s = surf[a].most_common(1)[0][0] if surf.get(a) else a
            if s not in words:
                words.append(s)
        rows.append(f"{z}\t{zcount[z]}\t{' | '.join(words[:TOP])}\n")
    OUT.write_text(
        "# Chinese word or phrase -> count in the training summaries -> English alternatives, best first.\n"
        "# Learned by bench/train_zh_dict.py from Chinese summaries by dw-dengwei/daily-arXiv-ai-enhanced\n"
        "# (Modified Apache License), aligned with the arXiv papers they summarise (CC0 metadata).\n" + "".join(rows)
    )
    log(f"{len(rows)} entries -> {OUT} ({OUT.stat().st_size / 1e6:.1f} MB)")
    compose()


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--compose"]:
        compose()
    else:
        main()

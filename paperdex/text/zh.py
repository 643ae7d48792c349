"""Chinese queries over English papers, lexical side.

A learned dictionary (paperdex/data/zh-en-dict.tsv, made by bench/train_zh_dict.py from Chinese
summaries aligned with their English papers) maps Chinese words and phrases to English
alternatives ("large language model", "llm"). `concepts` segments the Chinese text with jieba,
which also knows the dictionary's phrases, and turns each word into one concept: its English
alternatives, best first. A word the dictionary lacks backs off to the known words inside it
(模型量化 -> 模型, 量化), each a concept of its own. English words typed in the query are the
query engine's business; the dense side sees the query untouched."""

from __future__ import annotations

import hashlib
import math
import os
import re
import sqlite3
import time
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from paperdex.text import IDEOGRAPHS

DICT = Path(__file__).parents[1] / "data" / "zh-en-dict.tsv"
# Single-character function words (的, 和, 让): grammar, not topic. The dictionary learns no phrase
# holding one as a word of its own (bench/train_zh_dict.py), and a query's are read by nothing.
FUNCTION_CHARS = frozenset("的了和与及或在是对为将从以把被于中等并且其该这此之而由向到使让给也都就又所一个种着过")
# Words left unread on purpose, too generic to ask for: 模型 and 方法 (docs/relevance.md, "模型 and
# 方法 given readings"), and 用 ("use"), a question's frame as "use" is in English (QUERY_FILLER)
GENERIC = frozenset({"模型", "方法", "用"})
# Runs of the characters the dictionary knows (bench/train_zh_dict.py reads the same block):
# kana, hangul and rarer ideographs are not handed to jieba, which has no words for them.
_IDEOGRAPH_RUN = re.compile(f"[{IDEOGRAPHS}]+")


def has_cjk(text: str) -> bool:
    """Whether `text` has CJK Unified Ideographs, what this module reads (text.has_cjk: any CJK)."""
    return _IDEOGRAPH_RUN.search(text) is not None


@lru_cache(maxsize=4)
def _load(path: Path) -> tuple[dict[str, list[str]], dict[str, int]]:
    """{chinese: [alternative, ...]} and {chinese: count}, from `zh<TAB>count<TAB>alt | alt` lines."""
    alts: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if not line.startswith("#") and len(parts) >= 3 and parts[1].isdigit():
                alts[parts[0]] = [a.strip() for a in parts[2].split("|") if a.strip()]
                counts[parts[0]] = int(parts[1])
    return alts, counts


def dictionary() -> tuple[dict[str, list[str]], dict[str, int]]:
    """The bundled dictionary as _load reads it (for the search box's suggestions, web/suggest.py)."""
    return _load(DICT)


CACHE_FORMAT = 2
# The dictionary's counts are of 37,809 summaries (4.1M words), jieba's of its own corpus (60M):
# weighed up to jieba's scale, a word researchers write whole (大模型) is no longer cut into a
# common character and the next phrase (大 | 模型量化: "model quantization", not "LLM") (docs/relevance.md)
COUNT_SCALE = 15
# seconds after which another version's cache file goes (9.7 MB each; a version still in use writes it again)
STALE_CACHE = 7 * 86400


def _cache_file(path: Path, jieba) -> Path | None:
    """The combined prefix dictionary's cache, in the user's cache directory (never a data
    directory), named by what it is made from: a new jieba or dictionary gets a new file."""
    try:
        import platformdirs

        h = hashlib.sha256(f"{CACHE_FORMAT} {jieba.__version__}".encode())
        st = os.stat(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"))
        h.update(f" {st.st_size} {st.st_mtime_ns}".encode())
        h.update(path.read_bytes() if path.exists() else b"")
        return Path(platformdirs.user_cache_dir("paperdex")) / f"zh-segmenter-{h.hexdigest()[:16]}.sqlite"
    except OSError:
        return None


@lru_cache(maxsize=4)
def _tokenizer(path: Path, table: Any = None):
    """A jieba tokenizer of its own (the global one stays untouched) that also knows the
    dictionary's phrases, weighted by their counts. Its prefix dictionary is read key by key
    from the SQLite cache `table` (store.PrefixCounts) when there is one, as loading it whole
    cost seconds (docs/code-notes.md); else it is built in memory and saved for the next process."""
    with warnings.catch_warnings():  # jieba imports pkg_resources, which warns on every CLI run
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
        import jieba

    jieba.setLogLevel(60)
    tok = jieba.Tokenizer()
    db = _cache_file(path, jieba) if table is not None else None
    if db is not None and db.is_file():
        try:
            freq = table(db)
            total = freq.total()
        except (sqlite3.Error, TypeError):
            pass  # unreadable (cut short by a full disk?): build in memory
        else:
            tok.FREQ, tok.total, tok.initialized = freq, total, True
            return tok
    tok.initialize()
    _, counts = _load(path)
    for word, n in counts.items():
        if len(word) >= 2 and n > 1:
            tok.add_word(word, max(tok.FREQ.get(word) or 0, n * COUNT_SCALE))
    if db is not None:
        try:  # beside its final name, then renamed: a process reading it sees the whole file or none
            db.parent.mkdir(parents=True, exist_ok=True)
            tmp = db.with_name(f"{db.name}.{os.getpid()}.tmp")
            tmp.unlink(missing_ok=True)
            table.write(tmp, tok.FREQ, tok.total)
            os.replace(tmp, db)
            for old in db.parent.glob("zh-segmenter-*.sqlite"):  # an earlier dictionary's, unwritten for a week
                if old != db and time.time() - old.stat().st_mtime > STALE_CACHE:
                    old.unlink(missing_ok=True)
        except (OSError, sqlite3.Error):
            pass  # a read-only home: segmenting still works, just without the cache
    return tok


def _back_off(word: str, d: dict[str, list[str]], counts: dict[str, int]) -> list[str]:
    """The known words inside `word`: the split that covers most characters, then has fewest
    pieces, then the commonest pieces."""
    n = len(word)
    best: list[tuple[int, int, float, list[str]] | None] = [None] * (n + 1)
    best[0] = (0, 0, 0.0, [])

    def offer(j: int, cand: tuple[int, int, float, list[str]]) -> None:
        there = best[j]
        if there is None or cand[:3] > there[:3]:
            best[j] = cand

    for i in range(n):
        here = best[i]
        assert here is not None  # every position is reached: each offers the next (a skipped character)
        cov, pieces, score, parts = here
        offer(i + 1, here)  # skip one character
        for j in range(i + 2, n + 1):
            piece = word[i:j]
            if piece in d and piece != word:
                offer(j, (cov + j - i, pieces - 1, score + math.log(counts.get(piece, 1) + 1), [*parts, piece]))
    last = best[n]
    return last[3] if last else []


def segment(text: str, table: Any = None) -> list[str]:
    """The dictionary words of `text`'s Chinese, in order (unknown words backed off to their parts)."""
    d, counts = _load(DICT)
    out: list[str] = []
    for run in _IDEOGRAPH_RUN.findall(text):
        for word in _tokenizer(DICT, table).cut(run):
            if word in d:
                out.append(word)
            elif len(word) >= 3:
                out += _back_off(word, d, counts)
    return out


def concepts(text: str, enabled: bool = True, table: Any = None) -> list[list[str]]:
    """The concepts of `text`'s Chinese words, in order, each once; `enabled`: Settings.zh_dict."""
    return [alts for _, alts in words(text, enabled, table)]


def words(text: str, enabled: bool = True, table: Any = None) -> list[tuple[str, list[str]]]:
    """`concepts`, each with the Chinese word it reads (扩散模型: ["diffusion models"]), which
    papers written in Chinese are searched by as well (search/planning.py)."""
    if not enabled:
        return []
    d = _load(DICT)[0]
    out: list[tuple[str, list[str]]] = []
    seen: list[list[str]] = []
    for word in segment(text, table):
        for part, alts in _whole(word, d):
            if alts not in seen:
                seen.append(alts)
                out.append((part, alts))
    return out


def _whole(word: str, d: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """`word`'s concepts and the words they read: its alternatives, or, when they are the
    translations of its two halves (小目标检测: "small target | detection"), each half a concept,
    so "detection" alone never stands for the whole phrase."""
    alts = d[word]
    for k in range(1, len(word)):
        left, right = d.get(word[:k]), d.get(word[k:])
        if left and right and left[0] != right[0] and left[0] in alts and right[0] in alts:
            return [(word[:k], list(left)), (word[k:], list(right))]
    return [(word, list(alts))] if alts else []


def function_only(run: str) -> bool:
    """Whether Chinese is function words alone (和, 的, 让): what a stopword is to English."""
    return all(c in FUNCTION_CHARS for c in run.strip())


def unread_matters(run: str) -> bool:
    """Whether Chinese the dictionary could not read is worth telling the user about: not when it
    is only function words and words left unread on purpose (和, 模型, 用 RAG…)."""
    rest = "".join(c for c in run.strip() if c not in FUNCTION_CHARS)
    return bool(rest) and rest not in GENERIC

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
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from paperdex.text import IDEOGRAPHS

DICT = Path(__file__).parents[1] / "data" / "zh-en-dict.tsv"
# Runs of the characters the dictionary knows (bench/train_zh_dict.py reads the same block):
# kana, hangul and rarer ideographs are not handed to jieba, which has no words for them.
_IDEOGRAPH_RUN = re.compile(f"[{IDEOGRAPHS}]+")


def has_cjk(text: str) -> bool:
    """Whether `text` has characters this module reads (CJK Unified Ideographs), so that
    `concepts` can find anything in it; paperdex.text.has_cjk is the wider test of any CJK."""
    return _IDEOGRAPH_RUN.search(text) is not None


@lru_cache(maxsize=4)
def _load(path: Path) -> tuple[dict[str, list[str]], dict[str, int]]:
    """{chinese: [alternative, ...]} and {chinese: count in the training summaries}, from lines
    `zh<TAB>count<TAB>alt | alt | ...` (bench/train_zh_dict.py writes no other form)."""
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


CACHE_FORMAT = 1


def _cache_file(path: Path, jieba) -> Path | None:
    """Where the combined prefix dictionary is kept: the user's cache directory, named by what
    it is made from (jieba's version and dictionary, our dictionary's bytes), so a new version
    of either gets a new file. Like jieba's own cache (jieba.cache in the temp directory), it is
    derived from installed files, not from any data directory: readers of a store still never
    write to it."""
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
    """A jieba tokenizer of its own that also knows the dictionary's phrases, weighted by how
    often the training summaries use them (the global jieba stays untouched).

    Its prefix dictionary (word or prefix -> count) is read from a SQLite cache file one key at a
    time when there is one: a query looks up a few dozen fragments, and loading all of it cost
    seconds of a Chinese CLI search (docs/code-notes.md); the segmentation is the same
    (tests/test_zh.py). `table` is the cache's class (store.PrefixCounts: all SQL is the store's,
    and text sits below it); None: no cache, the dictionary is built in memory. The first
    process without the file builds it so and saves it for the next."""
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
            tok.add_word(word, max(tok.FREQ.get(word) or 0, n))
    if db is not None:
        try:  # beside its final name, then renamed: a process reading it sees the whole file or none
            db.parent.mkdir(parents=True, exist_ok=True)
            tmp = db.with_name(f"{db.name}.{os.getpid()}.tmp")
            tmp.unlink(missing_ok=True)
            table.write(tmp, tok.FREQ, tok.total)
            os.replace(tmp, db)
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
    """The dictionary words of the Chinese text of `text`, in order (unknown words backed off to
    their known parts, words without any translation left out); `table`: the cache's table."""
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
    """The concepts of `text`'s Chinese words, in order (the module's docstring says what they
    are): words without a translation and non-Chinese text are left out, a repeated word gives
    one concept. `enabled`: Settings.zh_dict, handed down by the searcher; `table`: see _tokenizer."""
    if not enabled:
        return []
    d = _load(DICT)[0]
    out: list[list[str]] = []
    for word in segment(text, table):
        for alts in _whole(word, d):
            if alts not in out:
                out.append(alts)
    return out


def _whole(word: str, d: dict[str, list[str]]) -> list[list[str]]:
    """`word`'s concepts: one, its alternatives, unless they are its parts. The learned
    dictionary sometimes lists a phrase's two halves as its alternatives (小目标检测: "small
    target | detection", the translations of 小目标 and of 检测); as alternatives, a paper that
    merely says "detection" would hold the whole phrase. Such a phrase is read as its two
    halves, each a concept, as a query that spaced them would be."""
    alts = d[word]
    for k in range(1, len(word)):
        left, right = d.get(word[:k]), d.get(word[k:])
        if left and right and left[0] != right[0] and left[0] in alts and right[0] in alts:
            return [list(left), list(right)]
    return [list(alts)] if alts else []

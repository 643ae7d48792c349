"""Chinese queries over English papers, lexical side: jieba segments the Chinese words and a
learned dictionary (paperdex/data/zh-en-dict.tsv, bench/train_zh_dict.py) adds their likely
English words as free words, so BM25 has something to match. English words typed in the
query are kept as they are. The dense side sees the query untouched."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from . import query as Q

DICT = Path(__file__).parent / "data" / "zh-en-dict.tsv"
ENABLED = os.environ.get("PAPERDEX_ZH_DICT", "1") != "0"
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


@lru_cache(maxsize=1)
def dictionary() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if DICT.exists():
        for line in DICT.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                zh, _, en = line.partition("\t")
                out[zh] = en.split()
    return out


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()
    return jieba


def translate(text: str) -> list[str]:
    """English words for the Chinese words of `text`, in order, without repeats."""
    runs = _CJK_RUN.findall(text)
    if not runs or not ENABLED:
        return []
    d = dictionary()
    out: list[str] = []
    for run in runs:
        for word in _jieba().cut(run):
            for en in d.get(word, ()):
                if en not in out:
                    out.append(en)
    return out


def expand(tree: Q.Bool) -> Q.Bool:
    """Add the translations of the query's free Chinese words as free words (raw="" keeps
    them out of the text the embedding model sees)."""
    soft = [c for c in tree.children if isinstance(c, Q.Text) and c.column is None and not c.phrase]
    words = translate(" ".join(c.raw for c in soft))
    if not words:
        return tree
    return Q.Bool(tree.op, [*tree.children, *(Q.Text([w], raw="") for w in words)])

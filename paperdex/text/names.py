"""A Chinese author's name as papers spell it: `au:何恺明` finds "Kaiming He".

Papers list Chinese authors in pinyin, given name first and joined ("Kaiming He"), sometimes
split or hyphenated ("Kai-Ming He") or family name first ("He Kaiming"). A researcher who types
the name in characters means any of these. The readings come from pypinyin: a family name is
read as a family name first (曾 is Zeng, not the word's ceng), then as usual; the given name
takes its usual reading. So the list stays short and each reading still needs the whole name.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import product

from paperdex.text import IDEOGRAPHS, fold, has_cjk

# Two-character family names (复姓), read as one: 欧阳娜娜 is Nana Ouyang, not Yangnana Ou
COMPOUND_SURNAMES = frozenset(
    "欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 令狐 宇文 长孙 司徒 司空 夏侯 轩辕 端木 西门 南宫 "
    "万俟 闻人 赫连 澹台 钟离 申屠 太史 独孤 呼延 百里 东郭 公冶 宗政 濮阳 淳于 单于".split()
)
# Family names read otherwise than as words (the list of python-pinyin issue 297, from overtrue/pinyin)
SURNAME_READINGS = {
    "曾": "zeng",
    "单": "shan",
    "区": "ou",
    "朴": "piao",
    "解": "xie",
    "乐": "yue",
    "仇": "qiu",
    "查": "zha",
    "缪": "miao",
    "翟": "zhai",
    "覃": "qin",
    "盖": "ge",
    "华": "hua",
    "纪": "ji",
    "种": "chong",
    "秘": "bi",
    "冼": "xian",
    "过": "guo",
    "繁": "po",
    "重": "chong",
    "瞿": "qu",
    "石": "shi",
    "薄": "bo",
    "贾": "jia",
    "柏": "bai",
    "牟": "mou",
    "阚": "kan",
    "叶": "ye",
    "沈": "shen",
    "宿": "su",
    "卜": "bu",
    "尉迟": "yuchi",
    "万俟": "moqi",
    "单于": "chanyu",
    "长孙": "zhangsun",
}
_NAME = re.compile(f"[{IDEOGRAPHS}]{{1,4}}")  # a name: one to four Chinese characters alone
MAX_READINGS = 12  # a name's readings at most (each is one phrase the index is asked for)
_U = {"lv": ("lu", "lyu"), "nv": ("nu", "nyu"), "lve": ("lue",), "nve": ("nue",)}  # ü as papers write it


def _usual(chars: str, wade_giles: bool = False) -> list[list[str]]:
    """Each character's usual reading, tone marks dropped: pinyin with ü as papers write it (lu
    and lyu), or Wade-Giles as Taiwan's authors write it (Hsuan, Chien: ü as u, no apostrophe)."""
    from pypinyin import Style, lazy_pinyin

    got = lazy_pinyin(chars, style=Style.WADEGILES if wade_giles else Style.NORMAL, errors="ignore")
    if wade_giles:
        return [[s.replace("'", "").replace("v", "u")] for s in got]
    return [list(_U.get(s, (s,))) for s in got]


def orders(name: str) -> list[str]:
    """A name typed in Latin letters as typed, then with its first or last part moved to the other
    end: papers write "Kaiming He" where a researcher may type the family name first ("He Kaiming"),
    and a three-part name may have either end as its family name ("Yang Ming-Hsuan"). [] for a
    name of one part."""
    parts = name.split()
    if len(parts) < 2 or has_cjk(name):  # a name in characters is read whole (`readings`)
        return []
    return list(dict.fromkeys(" ".join(p) for p in (parts, parts[1:] + parts[:1], parts[-1:] + parts[:-1])))


def readings(name: str) -> list[str]:
    """The ways papers spell a Chinese name, most usual first ("Kaiming He", "Kai Ming He",
    "He Kaiming", then Taiwan's "Kai Ming Ho"); [] when `name` is not one (not one to four
    Chinese characters alone, or one pypinyin cannot read)."""
    if not _NAME.fullmatch(chars := "".join(name.split())):  # "何 恺明" typed with a space is 何恺明
        return []
    cut = 2 if len(chars) > 2 and chars[:2] in COMPOUND_SURNAMES else 1
    read = _usual(chars)
    if len(read) != len(chars):
        return []
    family = [SURNAME_READINGS.get(chars[:cut], "")] + ["".join(p) for p in product(*read[:cut])]
    family = [f.title() for f in dict.fromkeys(family) if f]
    out: list[str] = []
    for f in family:
        for g in product(*read[cut:]):
            joined, split = "".join(g).title(), " ".join(s.title() for s in g)
            out += [f"{joined} {f}".strip(), f"{split} {f}".strip(), f"{f} {joined}".strip()]
    if cut < len(chars):  # Taiwan's spelling after the mainland's: "Ming-Hsuan Yang", the family name either way
        wg = _usual(chars, wade_giles=True)
        given = " ".join(s[0].title() for s in wg[cut:])
        out += [f"{given} {f}" for f in dict.fromkeys([family[0], "".join(s[0] for s in wg[:cut]).title()])]
    return list(dict.fromkeys(out))[:MAX_READINGS]


def in_one_author(authors: list[str], words: list[str]) -> bool:
    """An `au:` phrase's words in a row within one name. The full-text index holds a paper's
    authors as one text, so "Liu Ziwei" would match the paper of "Zizhou Liu, Ziwei Gong"."""
    run, joined = _name_run(tuple(w for w in words if not has_cjk(w))), " ; ".join(authors)
    # case folded first (C speed); a miss in names with accents is read again, accents folded (slow)
    return run.search(joined.casefold()) is not None or (not joined.isascii() and run.search(fold(joined)) is not None)


def matched(authors: list[str], phrases: list[list[str]]) -> list[str]:
    """The names among `authors` an `au:` search for any of `phrases` matched, in list order."""
    return [a for a in authors if any(in_one_author([a], ws) for ws in phrases)] if phrases else []


@lru_cache(maxsize=256)
def _name_run(ws: tuple[str, ...]) -> re.Pattern[str]:
    """`ws` as whole words apart only by what separates the words of one name (a space, "-",
    "."), never the ";" between names: one regex pass over a paper's names (a common name's
    phrase is checked on hundreds of papers per query)."""
    gap = r"(?:[^\w;]|_)+"
    return re.compile(r"(?<![^\W_])" + gap.join(map(re.escape, ws)) + r"(?![^\W_])")

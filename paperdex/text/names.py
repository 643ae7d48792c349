"""A Chinese author's name as papers spell it: `au:何恺明` finds "Kaiming He".

Papers list Chinese authors in pinyin, given name first and joined ("Kaiming He"), sometimes
split or hyphenated ("Kai-Ming He") or family name first ("He Kaiming"). A researcher who types
the name in characters means any of these. The readings come from pypinyin; a family name's
every reading is kept (曾 is Zeng as a family name, ceng as a word), the given name takes its
usual reading, so a reading list stays short and each one still needs the whole name.
"""

from __future__ import annotations

from itertools import product

# Two-character family names (复姓), read as one: 欧阳娜娜 is Nana Ouyang, not Yangnana Ou
COMPOUND_SURNAMES = frozenset(
    "欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 令狐 宇文 长孙 司徒 司空 夏侯 轩辕 端木 西门 南宫 "
    "万俟 闻人 赫连 澹台 钟离 申屠 太史 独孤 呼延 百里 东郭 公冶 宗政 濮阳 淳于 单于".split()
)
MAX_READINGS = 12  # a name's readings at most (each is one phrase the index is asked for)
_U = {"lv": ("lu", "lyu"), "nv": ("nu", "nyu"), "lve": ("lue",), "nve": ("nue",)}  # ü as papers write it


def _syllables(chars: str, every: bool) -> list[list[str]]:
    """Each character's readings, tone marks dropped (every reading, or the usual one)."""
    from pypinyin import Style, lazy_pinyin, pinyin

    if every:
        got = pinyin(chars, style=Style.NORMAL, heteronym=True, errors="ignore")
    else:
        got = [[s] for s in lazy_pinyin(chars, style=Style.NORMAL, errors="ignore")]
    return [list(dict.fromkeys(x for s in alts for x in _U.get(s, (s,)))) for alts in got]


def readings(name: str) -> list[str]:
    """The ways papers spell a Chinese name, most usual first ("Kaiming He", "Kai Ming He",
    "He Kaiming"); [] when `name` is not one (no Chinese characters, or more than four)."""
    chars = "".join(ch for ch in name if "\u4e00" <= ch <= "\u9fff")
    if not chars or len(chars) > 4 or len(chars) != len(name.strip()):
        return []
    cut = 2 if len(chars) > 2 and chars[:2] in COMPOUND_SURNAMES else 1
    family = ["".join(p) for p in product(*_syllables(chars[:cut], every=True))]
    given = _syllables(chars[cut:], every=False)
    if len(given) != len(chars) - cut or len(family) == 0:
        return []  # a character pypinyin cannot read
    out: list[str] = []
    for f in family:
        for g in product(*given) if given else [()]:
            joined, split = "".join(g).title(), " ".join(s.title() for s in g)
            out += [f"{joined} {f.title()}".strip(), f"{split} {f.title()}".strip(), f"{f.title()} {joined}".strip()]
    return list(dict.fromkeys(out))[:MAX_READINGS]

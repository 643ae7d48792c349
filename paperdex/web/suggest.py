"""Suggestions while typing in the search box: authors, categories, venues and the query syntax,
read from the store, for the word being typed. Each is the whole query with its last word
completed (and checked to parse); categories match by code and by English or Chinese name
(机器人 finds cs.RO)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from paperdex.paper import CATEGORY
from paperdex.store import Store
from paperdex.text import fold
from paperdex.web import i18n
from paperdex.web.render import parses

MAX_SUGGESTIONS = 8
MAX_AUTHOR_ROWS = 400  # papers read to find the authors whose names start so
# arXiv's names for the categories a CS corpus holds, in English and Chinese
CATEGORY_NAMES: dict[str, tuple[str, str]] = {
    "cs.AI": ("Artificial Intelligence", "人工智能"),
    "cs.CL": ("Computation and Language", "计算与语言 自然语言处理"),
    "cs.CV": ("Computer Vision and Pattern Recognition", "计算机视觉与模式识别"),
    "cs.LG": ("Machine Learning", "机器学习"),
    "cs.RO": ("Robotics", "机器人学"),
    "cs.IR": ("Information Retrieval", "信息检索"),
    "cs.NE": ("Neural and Evolutionary Computing", "神经与进化计算"),
    "cs.CR": ("Cryptography and Security", "密码学与安全"),
    "cs.HC": ("Human-Computer Interaction", "人机交互"),
    "cs.SE": ("Software Engineering", "软件工程"),
    "cs.DC": ("Distributed, Parallel, and Cluster Computing", "分布式与并行计算"),
    "cs.DB": ("Databases", "数据库"),
    "cs.GR": ("Graphics", "计算机图形学"),
    "cs.MA": ("Multiagent Systems", "多智能体系统"),
    "cs.SD": ("Sound", "声音"),
    "cs.CY": ("Computers and Society", "计算机与社会"),
    "cs.SI": ("Social and Information Networks", "社会与信息网络"),
    "cs.MM": ("Multimedia", "多媒体"),
    "cs.PL": ("Programming Languages", "编程语言"),
    "cs.DS": ("Data Structures and Algorithms", "数据结构与算法"),
    "cs.GT": ("Computer Science and Game Theory", "博弈论"),
    "cs.IT": ("Information Theory", "信息论"),
    "cs.SY": ("Systems and Control", "系统与控制"),
    "eess.IV": ("Image and Video Processing", "图像与视频处理"),
    "eess.AS": ("Audio and Speech Processing", "音频与语音处理"),
    "eess.SP": ("Signal Processing", "信号处理"),
    "eess.SY": ("Systems and Control", "系统与控制"),
    "stat.ML": ("Machine Learning (Statistics)", "统计机器学习"),
    "math.OC": ("Optimization and Control", "优化与控制"),
    "q-bio.NC": ("Neurons and Cognition", "神经元与认知"),
}
# The query language's fields, with what each one does in both interface languages
SYNTAX: list[tuple[str, str, str]] = [
    ("ti:", "in the title", "标题中"),
    ("au:", "an author", "作者"),
    ("abs:", "in the abstract", "摘要中"),
    ("cat:", "a category (cs.LG) or archive (cs)", "分类（cs.LG）或大类（cs）"),
    ("venue:", "a venue (NeurIPS 2025)", "会议/期刊"),
    ("area:", "a venue's area", "会议领域"),
    ("date:", "a date or range: 2025, 2025-01..2025-06", "日期或范围：2025、2025-01..2025-06"),
    ("-", "leave out papers with a word", "排除含某词的论文"),
    ('"', "an exact phrase", "精确短语"),
]
_CATEGORIES: dict[tuple[str, int], list[tuple[str, int]]] = {}  # per store and its newest rowid


@dataclass
class Suggestion:
    query: str  # the whole query with the last word completed
    label: str  # what the list shows
    kind: str  # author / category / venue / syntax
    note: str = ""  # a count or a description

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _split(q: str) -> tuple[str, str, str]:
    """(the text before the last word, the last word's field ('au', 'cat', '' ...), its value
    without quotes). An open quote makes the last word run from it (au:"Yoshua Ben)."""
    if q.count('"') % 2:
        start = q.rfind('"')
        m = re.search(r"[A-Za-z]+:$", q[:start])
        start = m.start() if m else start
    else:
        start = max(q.rfind(c) for c in " \t(") + 1
    if q[start : start + 1] == "-":
        start += 1
    head, last = q[:start], q[start:]
    field, _, value = last.partition(":") if re.match(r"^[A-Za-z]+:", last) else ("", "", last)
    return head, field.lower(), value.strip('"')


def _quoted(field: str, value: str) -> str:
    value = value.replace('"', " ").strip()
    return f'{field}:"{value}"' if re.search(r"[\s()]", value) else f"{field}:{value}"


def _papers(lang: str, n: int) -> str:
    return i18n.t(lang, "papers_n", n=n)


def authors(store: Store, head: str, prefix: str, lang: str, limit: int = MAX_SUGGESTIONS) -> list[Suggestion]:
    """Authors with a name word starting with each word of `prefix` (the last one as typed so
    far), most papers first, read from the unstemmed index's author column."""
    words = re.findall(r"\w+", fold(prefix))
    if not words or len(words[-1]) < 2 and len(words) == 1:
        return []
    expr = " AND ".join(f'"{w}"' + ("*" if i == len(words) - 1 else "") for i, w in enumerate(words))
    try:
        lists = store.author_lists_matching(f"{{authors}} : ({expr})", MAX_AUTHOR_ROWS)
    except Exception:  # an older store without the exact index: no author suggestions
        return []
    counts: dict[str, int] = {}
    for raw in lists:
        for name in json.loads(raw):
            parts = re.findall(r"\w+", fold(name))
            if all(any(p.startswith(w) for p in parts) for w in words):
                counts[name] = counts.get(name, 0) + 1
    top = sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:limit]
    return [Suggestion(head + _quoted("au", name), name, "author", _papers(lang, n)) for name, n in top]


def categories(
    store: Store, head: str, prefix: str, lang: str, limit: int = MAX_SUGGESTIONS, fielded: bool = False
) -> list[Suggestion]:
    """Categories of this store whose code starts with `prefix`, or whose English or Chinese
    name holds it, noted with their name (or paper count), labelled with their code (`fielded`:
    with cat: before it)."""
    p = fold(prefix).strip()
    key = (str(store.path), store.max_rowid())
    rows = _CATEGORIES.get(key)
    if rows is None:
        rows = store.paper_counts_by_category()
        _CATEGORIES.clear()
        _CATEGORIES[key] = rows
    out = []
    for cat, n in rows:
        en, zh = CATEGORY_NAMES.get(cat, ("", ""))
        if not CATEGORY.fullmatch(cat):  # an arXiv category, as the facets offer
            continue
        if not p or cat.lower().startswith(p) or (len(p) >= 2 and (p in en.lower() or prefix.strip() in zh)):
            note = (zh if lang == "zh" else en) or _papers(lang, n)
            out.append(Suggestion(head + f"cat:{cat}", f"cat:{cat}" if fielded else cat, "category", note))
        if len(out) == limit:
            break
    return out


def venues(store: Store, head: str, prefix: str, lang: str, limit: int = MAX_SUGGESTIONS) -> list[Suggestion]:
    """Venues of this store with a word starting with `prefix`, most papers first."""
    return [
        Suggestion(head + _quoted("venue", v), v, "venue", _papers(lang, n))
        for v, n in store.paper_counts_by_venue(prefix.strip(), limit)
        if v
    ]


def _syntax(head: str, lang: str) -> list[Suggestion]:
    return [Suggestion(head + token, token, "syntax", zh if lang == "zh" else en) for token, en, zh in SYNTAX]


def suggest(store: Store, q: str, lang: str = "en") -> list[Suggestion]:
    """What to offer for the query typed so far (see the module docstring)."""
    if len(q) > 500:
        return []
    head, field, value = _split(q)
    out: list[Suggestion] = []
    if field in ("au", "author"):
        out = authors(store, head, value, lang)
    elif field == "cat":
        out = categories(store, head, value, lang)
    elif field == "venue":
        out = venues(store, head, value, lang)
    elif not field and value:
        low = value.lower()
        out = [s for s in _syntax(head, lang) if s.label.startswith(low) and s.label != low and s.label[0].isalpha()]
        out += categories(store, head, value, lang, 3, fielded=True)
        if len(value) >= 3 and value.isascii():
            out += authors(store, head, value, lang, 3) + venues(store, head, value, lang, 2)
    elif not field and not q.strip():
        out = _syntax("", lang)[:7]
    # every one a query that parses, or a field waiting for its value
    good = [s for s in out if (s.kind == "syntax" and s.query.endswith(":")) or parses(s.query)]
    return good[:MAX_SUGGESTIONS]

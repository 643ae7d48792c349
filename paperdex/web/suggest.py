"""Suggestions while typing in the search box, read from the store, for the word being typed:
words and phrases of the papers' titles (acronyms with what they stand for), Chinese words the
zh dictionary knows whose English reading the store holds, authors, categories (by code and by
English or Chinese name: 机器人 finds cs.RO), venues and the query syntax. Each is the whole
query with its last word completed, checked to parse. Latency: docs/web.md."""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from functools import cache

from paperdex.messages import MESSAGES
from paperdex.paper import CATEGORY
from paperdex.store import Store
from paperdex.text import IDEOGRAPHS, QUERY_FILLER, STOPWORDS, acronyms, fold, tokens, zh
from paperdex.web import i18n
from paperdex.web.render import parses

MAX_SUGGESTIONS = 8
MAX_AUTHOR_ROWS = 400  # papers read to find the authors whose names start so
MAX_TERMS = 5  # title words and phrases offered, before the other kinds
TITLE_SAMPLE = 800  # titles read for a prefix at most (an even sample past that; cost: docs/web.md)
PHRASE_WORDS = 2  # words a phrase may run past the word being typed ("large" -> "large language models")
# arXiv's English and Chinese names of the categories a CS corpus holds (messages.toml: cat_name_<code>)
CATEGORY_NAMES = {code[9:]: (e["en"], e["zh"]) for code, e in MESSAGES.items() if code.startswith("cat_name_")}
# The query language's fields and signs, each with the message saying what it does
SYNTAX = {f"{f}:": f"syntax_{f}" for f in ("ti", "au", "abs", "cat", "venue", "area", "date")}
SYNTAX |= {"-": "syntax_minus", '"': "syntax_phrase"}
_CATEGORIES: dict[tuple[str, int], list[tuple[str, int]]] = {}  # per store and its newest rowid
# a word of a title as the index parts it, but `-` kept inside (vision-language, GPT-4)
_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
# the plain words (no field, no quote, no minus) that end what was typed before the last word
_CONTEXT = re.compile(rf"(?:^|(?<=\s))((?:[^\W_]+(?:-[^\W_]+)*\s+){{1,{PHRASE_WORDS}}})$")
_TRAILING_IDEOGRAPHS = re.compile(f"[{IDEOGRAPHS}]+$")
# a run of words a phrase stays in: words apart by spaces or one hyphen, no colon or comma between
_RUN = re.compile(r"[^\W_]+(?:(?:\s+|-)[^\W_]+)*")


@dataclass
class Suggestion:
    query: str  # the whole query with the last word completed
    label: str  # what the list shows
    kind: str  # term / acronym / zh / author / category / venue / syntax
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
    """Authors with a name word starting with each word of `prefix`, most papers first (the author index)."""
    words = re.findall(r"\w+", fold(prefix))
    if not words or len(words[-1]) < 2 and len(words) == 1:
        return []
    expr = " AND ".join(f'"{w}"' + ("*" if i == len(words) - 1 else "") for i, w in enumerate(words))
    lists = store.author_lists_matching(f"{{authors}} : ({expr})", MAX_AUTHOR_ROWS)
    counts: Counter[str] = Counter()
    for raw in lists:
        for name in json.loads(raw):
            parts = re.findall(r"\w+", fold(name))
            if all(any(p.startswith(w) for p in parts) for w in words):
                counts[name] += 1
    top = sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:limit]
    return [Suggestion(head + _quoted("au", name), name, "author", _papers(lang, n)) for name, n in top]


def categories(
    store: Store, head: str, prefix: str, lang: str, limit: int = MAX_SUGGESTIONS, fielded: bool = False
) -> list[Suggestion]:
    """Categories of this store whose code starts with `prefix`, or whose English or Chinese name
    holds it, noted with their name (or paper count), labelled with their code (`fielded`: cat:…)."""
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


def _title_phrases(title: str, typed: list[str]) -> dict[str, str]:
    """The words and phrases of one title that start with the `typed` words (folded, the last a
    prefix), running at most PHRASE_WORDS words further without crossing a colon or comma, not
    ending on a stopword nor alone a question's filler: {folded: as the title writes it}."""
    low = fold(title)
    aligned = len(low) == len(title)  # folding kept every letter in place: fold once, not per word
    out: dict[str, str] = {}
    k = len(typed)
    for run in _RUN.finditer(low if aligned else title):
        if aligned and typed[-1] not in run[0]:
            continue
        spans = [(run.start() + m.start(), run.start() + m.end()) for m in _COMPOUND.finditer(run[0])]
        words = [title[a:b] for a, b in spans]
        folded = [low[a:b] for a, b in spans] if aligned else [fold(w) for w in words]
        for i in range(len(words) - k + 1):
            if folded[i + k - 1].startswith(typed[-1]) and folded[i : i + k - 1] == typed[:-1]:
                for j in range(i + k, min(i + k + PHRASE_WORDS, len(words)) + 1):
                    if folded[j - 1] not in STOPWORDS and (j > i + 1 or folded[i] not in QUERY_FILLER):
                        out.setdefault(" ".join(folded[i:j]), " ".join(words[i:j]))
    return out


def _shown(written: str) -> str:
    """A title's words as a suggestion shows them: lower case, but a word with two capitals (LLMs, ViT) as written."""
    return re.sub(r"[^\W_]+", lambda m: m[0] if sum(c.isupper() for c in m[0]) >= 2 else m[0].lower(), written)


def _titles_holding(store: Store, phrase: str, prefix: bool = False) -> list[int]:
    """Rowids of the papers whose title holds `phrase` (its last word a prefix if `prefix`)."""
    return store.exact_phrase_rowids('{title} : "' + " ".join(tokens(phrase)) + '"' + ("*" if prefix else ""))


def _title_terms(store: Store, typed: list[str], limit: int) -> list[tuple[str, int]]:
    """(words as shown, papers whose title holds them), most papers first, for the `typed`
    words: found in a sample of the titles holding them, then counted in the index as a search
    would find them. A phrase running past the typed words needs two titles; one nearly always
    followed by the same word (large language -> large language models) gives way to the longer."""
    if not tokens(" ".join(typed)) or len(typed[-1]) < 2:
        return []
    rowids = _titles_holding(store, " ".join(typed), prefix=True)
    sample = rowids[:: max(1, -(-len(rowids) // TITLE_SAMPLE))]
    counts: Counter[str] = Counter()
    written: dict[str, Counter[str]] = {}
    for title in store.column_texts(sample, "title").values():
        for key, words in _title_phrases(title, typed).items():
            counts[key] += 1
            written.setdefault(key, Counter())[words] += 1
    longer: dict[str, int] = {}  # phrase -> the most papers of one phrase one word longer
    for key, n in counts.items():
        if n >= 2:  # a phrase offered
            shorter = key.rpartition(" ")[0]
            longer[shorter] = max(longer.get(shorter, 0), n)
    keep = [k for k, n in counts.items() if (n >= 2 or k.count(" ") < len(typed)) and longer.get(k, 0) < 0.8 * n]
    held = {k: len(_titles_holding(store, k)) for k in sorted(keep, key=lambda k: (-counts[k], len(k)))[:limit]}
    return [(_shown(written[k].most_common(1)[0][0]), n) for k, n in sorted(held.items(), key=lambda x: -x[1])]


def terms(
    store: Store, head: str, value: str, lang: str, field: str = "", quoted: bool = False, limit: int = MAX_TERMS
) -> list[Suggestion]:
    """Words and phrases of this store's titles that start with the word being typed, or with it
    and the plain words just before it ("speculative dec" -> speculative decoding), an acronym
    noted with what it stands for. After `ti:` or `abs:` (`field`), or in an open quote, the
    words typed there are completed there (ti:"speculative decoding")."""
    words = value.split()
    if not words or not all(_COMPOUND.fullmatch(w) for w in words):
        return []
    if field or quoted:
        found = _title_terms(store, [fold(w) for w in words], limit)
        opening = f'{field}:"' if field else '"'
        return [_term(head + (f'{opening}{t}"' if quoted else _quoted(field, t)), t, n, lang) for t, n in found]
    m = _CONTEXT.search(head)
    before = list(_COMPOUND.finditer(head, m.start(1))) if m else []
    for n in range(len(before), -1, -1):  # the longest phrase the titles hold first
        used = before[len(before) - n :]
        found = _title_terms(store, [fold(w[0]) for w in used] + [fold(value)], limit)
        if found:
            start = used[0].start() if used else len(head)
            return [_term(head[:start] + label, label, count, lang) for label, count in found]
    return []


def _term(query: str, label: str, count: int, lang: str) -> Suggestion:
    forms = acronyms.expand(label) if " " not in label and sum(c.isupper() for c in label) >= 2 else ()
    if forms:
        return Suggestion(query, label, "acronym", f"{forms[0]} · {_papers(lang, count)}")
    return Suggestion(query, label, "term", _papers(lang, count))


@cache
def _zh_words() -> tuple[list[str], dict[str, list[str]], dict[str, int]]:
    """The zh dictionary's words in order, their English readings and how often they are used."""
    readings, used = zh.dictionary()
    return sorted(readings), readings, used


def chinese(store: Store, head: str, value: str, lang: str, limit: int = MAX_TERMS) -> list[Suggestion]:
    """Words of the zh dictionary that start with the Chinese characters typed last (their
    longest ending that starts some word: 大语言模型推 -> 模型推理), one per English reading (the
    whole word over a piece of it used about as often: 大语言模型, not 大语言), most used first, of
    the 3 x `limit` most used those whose reading this store's titles hold."""
    run = _TRAILING_IDEOGRAPHS.search(value)
    if not run:
        return []
    keys, readings, used = _zh_words()
    for n in range(min(len(run[0]), 8), 0, -1):
        typed = run[0][-n:]
        starting = keys[bisect.bisect_left(keys, typed) : bisect.bisect_left(keys, typed + "\uffff")]
        if words := [w for w in starting if w != typed and readings[w]]:
            break
    best: dict[str, str] = {}  # English reading -> the word offered for it
    for w in sorted(words, key=lambda w: -used[w]):
        shown = best.get(readings[w][0], w)
        if shown in w and used[w] >= 0.8 * used[shown]:
            best[readings[w][0]] = w
    held = [(len(_titles_holding(store, r)) if tokens(r) else 0, r, w) for r, w in list(best.items())[: 3 * limit]]
    held = [h for h in held if h[0]][:limit]
    start = head + value[: len(value) - len(typed)]
    return [Suggestion(start + w, w, "zh", f"{r} · {_papers(lang, n)}") for n, r, w in held]


def _syntax(head: str, lang: str) -> list[Suggestion]:
    return [Suggestion(head + token, token, "syntax", i18n.t(lang, code)) for token, code in SYNTAX.items()]


def suggest(store: Store, q: str, lang: str = "en") -> list[Suggestion]:
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
    elif field in ("ti", "abs"):
        out = terms(store, head, value, lang, field, quoted=q.count('"') % 2 == 1)
    elif not field and value:
        low = value.lower()
        out = [s for s in _syntax(head, lang) if s.label.startswith(low) and s.label != low and s.label[0].isalpha()]
        out += terms(store, head, value, lang, quoted=q.count('"') % 2 == 1)  # after a field it may be starting
        out += categories(store, head, value, lang, 3, fielded=True)
        if len(value) >= 3 and value.isascii():
            out += authors(store, head, value, lang, 3) + venues(store, head, value, lang, 2)
        out += chinese(store, head, value, lang)  # after the category its Chinese name matched
    elif not field and not q.strip():
        out = _syntax("", lang)[:7]
    # every one a query that parses, or a field waiting for its value
    good = [s for s in out if (s.kind == "syntax" and s.query.endswith(":")) or parses(s.query)]
    return good[:MAX_SUGGESTIONS]

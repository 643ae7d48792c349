"""The query language (its syntax: the table in docs/search.md), parsed into a small tree.

User text never reaches FTS5 unescaped: every word becomes a double-quoted FTS5 string built
from \\w-characters only, so FTS5 operators, column filters and quotes typed by a user are
just words here. Syntax errors raise QueryError with the position of the problem.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date as _date

from paperdex.messages import Message, message, typed
from paperdex.paper import ARXIV_REF, CATEGORY_TYPED, doi_of
from paperdex.text import CJK as _CJK
from paperdex.text import STOPWORDS, names, tokens

FIELDS = {"ti", "au", "abs", "cat", "id", "date", "venue", "area", "decision", "all"}
# the same fields under the names arXiv's search form and Google Scholar (author:) give them
FIELD_ALIASES = {"title": "ti", "author": "au", "abstract": "abs", "category": "cat", "year": "date"}
# OpenReview's decisions as sources.openreview.decision_of names them
DECISIONS = ("accepted", "rejected", "desk_rejected", "withdrawn", "under_review", "submitted")
TEXT_COLUMNS = {"ti": "title", "au": "authors", "abs": "abstract"}
MAX_QUERY_CHARS = 20_000
MAX_TERMS = 64  # words, phrases and filters in one query
MAX_DEPTH = 32  # nested parentheses
__all__ = ["DATE_SHAPE", "STOPWORDS", "QueryError", "parse", "parse_literal", "date_range"]
_CJK_WORD = re.compile(f"^[{_CJK}]+$")
# A date's shape, YYYY[-MM[-DD]] (group 2: the day's part); each caller says in its words if it is not real
DATE_SHAPE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


class QueryError(ValueError):
    """A query the user must fix; str() is a message fit to show them, with the position."""

    def __init__(self, msg: Message, position: int | None = None) -> None:
        super().__init__(msg if position is None else message("at_character", message=msg, position=position + 1))
        self.position = position

    @property
    def message(self) -> Message:
        return self.args[0]


@dataclass
class Text:
    """Words or a phrase, optionally limited to one column."""

    words: list[str]
    column: str | None = None  # title / authors / abstract; None = all
    phrase: bool = False
    prefix: bool = False
    raw: str = ""
    source: str = ""  # a Chinese author name this reading was made from (`author_readings`)


@dataclass
class Filter:
    kind: str  # cat / id / date / venue / area / decision
    value: str | tuple[str, str]


@dataclass
class Bool:
    op: str  # AND / OR
    children: list[Node] = field(default_factory=list)


@dataclass
class Not:
    child: Node


Node = Text | Filter | Bool | Not


@dataclass
class Tok:
    kind: str  # WORD PHRASE LP RP OR AND NOT FIELD
    value: str
    pos: int
    neg: bool = False


_QUOTES = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u300c": '"', "\u300d": '"'}
    # the dashes an editor, a chat tool or a PDF puts for "-" (en and em dash, minus sign, hyphens):
    # `diffusion –video` required "video", the opposite of `diffusion -video`
    | {c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212"}
    | {c: " " for c in [*range(32), *range(0x7F, 0xA0)]}  # NULs and control characters: spaces
)


def _clean(q: str) -> str:
    """NFKC (an input method's ＯＲ and `ti：`), curly quotes straight, control characters spaces."""
    return unicodedata.normalize("NFKC", q).translate(_QUOTES)


def _phrase_end(q: str, i: int) -> int:
    """Where the phrase opened by the quote at `i` closes, the phrase checked: `""` or `"-"` would
    match every paper silently, and "weight dec*" looked for the word "dec" (no paper, no reason)."""
    if (end := q.find('"', i + 1)) < 0:
        raise QueryError(message("unbalanced_quote"), i)
    if not tokens(q[i + 1 : end]):
        raise QueryError(message("empty_phrase"), i)
    if "*" in q[i + 1 : end]:
        raise QueryError(message("star_in_quotes", phrase=q[i + 1 : end]), i)
    return end


def lex(q: str) -> list[Tok]:
    toks: list[Tok] = []
    i, n = 0, len(q)
    while i < n:
        if (ch := q[i]).isspace():
            i += 1
            continue
        neg = False
        if ch == "-" and i + 1 < n and not q[i + 1].isspace() and q[i + 1] != "-":
            neg, i = True, i + 1
            ch = q[i]
        start = i
        if ch == "(":
            toks.append(Tok("LP", "(", i, neg))
            i += 1
        elif ch == ")":
            if neg:
                raise QueryError(message("minus_before_close"), i - 1)
            toks.append(Tok("RP", ")", i))
            i += 1
        elif ch == '"':
            end = _phrase_end(q, i)
            toks.append(Tok("PHRASE", q[i + 1 : end], i, neg))
            i = end + 1
        else:
            while i < n and not q[i].isspace() and q[i] not in '()"':
                i += 1
            word = q[start:i]
            head, sep, rest = word.partition(":")
            if sep and (fld := FIELD_ALIASES.get(head.lower(), head.lower())) in FIELDS:
                toks.append(Tok("FIELD", fld, start, neg))
                if rest:
                    toks.append(Tok("WORD", rest, start + len(head) + 1))
                elif i >= n or q[i].isspace():
                    raise QueryError(message("field_needs_value", field=head), start)
            elif word in ("OR", "AND", "NOT", "|") and not neg:
                toks.append(Tok("OR" if word == "|" else word, word, start))
            else:
                toks.append(Tok("WORD", word, start, neg))
    return toks


class _Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.toks, self.i, self.depth = toks, 0, 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> Tok:
        self.i += 1
        return self.toks[self.i - 1]

    def parse(self) -> Bool:
        # MAX_TERMS bounds query syntax; plain text is bounded by its length and MAX_POSTINGS
        syntax = any(t.kind != "WORD" or t.neg for t in self.toks)
        terms = sum(t.kind in ("WORD", "PHRASE") for t in self.toks)
        if syntax and terms > MAX_TERMS:
            raise QueryError(message("too_many_terms", terms=terms, limit=MAX_TERMS))
        node = self.or_expr(None)
        if (t := self.peek()) is not None:
            raise QueryError(
                message("unbalanced_close") if t.kind == "RP" else message("unexpected", token=t.value), t.pos
            )
        return node if isinstance(node, Bool) and node.op == "AND" else Bool("AND", [node])

    def or_expr(self, fld: str | None) -> Node:
        if (t := self.peek()) is not None and t.kind in ("OR", "AND"):
            raise QueryError(message("needs_term_before", op=t.kind), t.pos)
        parts = [self.and_expr(fld)]
        while (t := self.peek()) is not None and t.kind == "OR":
            self.take()
            if (nxt := self.peek()) is None or nxt.kind in ("RP", "OR", "AND"):
                raise QueryError(message("or_needs_term_after"), t.pos)
            parts.append(self.and_expr(fld))
        return parts[0] if len(parts) == 1 else Bool("OR", parts)

    def and_expr(self, fld: str | None) -> Node:
        parts: list[Node] = []
        while (t := self.peek()) is not None and t.kind not in ("RP", "OR"):
            if t.kind == "AND":
                self.take()
                nxt = self.peek()
                if not parts or nxt is None or nxt.kind in ("RP", "OR", "AND"):
                    raise QueryError(message("and_needs_both_sides"), t.pos)
                continue
            parts.append(self.unary(fld))
        if not parts:
            if (t := self.peek()) is None:
                return Bool("AND", [])
            if t.kind == "RP" and self.depth == 0:  # `)` typed first: no group was opened
                raise QueryError(message("unbalanced_close"), t.pos)
            raise QueryError(message("empty_group"), t.pos)
        return parts[0] if len(parts) == 1 else Bool("AND", parts)

    def unary(self, fld: str | None) -> Node:
        t = self.peek()
        assert t is not None
        if t.kind == "NOT":
            self.take()
            if (nxt := self.peek()) is None or nxt.kind in ("RP", "OR", "AND", "NOT"):
                raise QueryError(message("not_needs_term_after"), t.pos)
            return Not(self.unary(fld))
        node = self.primary(fld)
        return Not(node) if t.neg else node

    def primary(self, fld: str | None) -> Node:
        if (t := self.take()).kind == "LP":
            if (nxt := self.peek()) is not None and nxt.kind == "RP":
                raise QueryError(message("empty_parentheses"), t.pos)
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise QueryError(message("too_deep", limit=MAX_DEPTH), t.pos)
            node = self.or_expr(fld)
            self.depth -= 1
            if (close := self.peek()) is None or close.kind != "RP":
                raise QueryError(message("unbalanced_open"), t.pos)
            self.take()
            return node
        if t.kind == "FIELD":
            if fld is not None:
                raise QueryError(message("field_nested", field=t.value, outer=fld), t.pos)
            if (nxt := self.peek()) is None or nxt.kind not in ("WORD", "PHRASE", "LP"):
                raise QueryError(message("field_needs_value", field=t.value), t.pos)
            if nxt.kind == "LP" and t.value not in TEXT_COLUMNS and t.value != "all":
                raise QueryError(message("field_one_value", field=t.value), t.pos)
            nxt.neg = False
            return self.primary(t.value)
        if t.kind in ("WORD", "PHRASE"):
            return make_leaf(fld, t.value, phrase=t.kind == "PHRASE", pos=t.pos)
        raise QueryError(message("unexpected", token=t.value), t.pos)


def author_readings(value: str) -> Node | None:
    """`au:何恺明` as any of the name's pinyin spellings, each a phrase ("Kaiming He" OR ...)."""
    if not (spelled := names.readings(value)):
        return None
    alts: list[Node] = [Text(tokens(r), "authors", True, False, r, source=value.strip()) for r in spelled]
    # and as written: a paper from a Chinese source names its authors in characters (张三)
    written = "".join(value.split())
    alts.append(Text(tokens(written), "authors", True, False, written, source=value.strip()))
    return Bool("OR", alts)


def author_orders(value: str, phrase: bool) -> Node | None:
    """`au:"He Kaiming"` as the name either way round ("He Kaiming" OR "Kaiming He"), each a phrase
    within one name; None for a name of one part (`names.orders`) or words not quoted."""
    if not phrase:
        return None
    alts: list[Node] = [Text(tokens(r), "authors", True, False, r) for r in names.orders(value)]
    return Bool("OR", alts) if len(alts) > 1 else None


def make_leaf(fld: str | None, value: str, phrase: bool, pos: int | None) -> Node:
    """A field's value as a node; `pos` its place in the query (None: a filter, no place in it)."""
    if fld == "au" and not tokens(value):  # the author filter's "-" or '""' matched every paper
        raise QueryError(message("author_needs_name", value=value.strip()[:40]), pos)
    if fld in (None, "all") or fld in TEXT_COLUMNS:
        text = Text(tokens(value), TEXT_COLUMNS.get(fld or ""), phrase, value.endswith("*") and not phrase, value)
        return (author_readings(value) or author_orders(value, phrase) or text) if fld == "au" else text
    if fld == "cat":  # cs, cs.LG; cs.* (arXiv's way to write the archive) for cs; cs.C* a prefix
        return Filter("cat", category_value(value, pos))
    if fld == "id":
        return Filter("id", re.sub(r"v\d+$", "", value.strip()))
    if fld == "date":
        start, dots, end = value.partition("..")
        return Filter("date", date_range(start, end if dots else start, pos))
    if fld == "decision":
        if (v := value.strip().lower().replace("-", "_").replace(" ", "_")) not in DECISIONS:
            raise QueryError(message("decision_expects", choices=", ".join(DECISIONS), value=value), pos)
        return Filter("decision", v)
    return Filter(fld, value.strip())  # venue / area


def category_value(value: str, pos: int | None) -> str:
    """What `cat:` asks for (`paper.category_asked` reads it): a category, an archive (cs, and
    cs.* as arXiv writes it) or a prefix ending in * (cs.C*: cs.CV, cs.CL, ...)."""
    v = value.strip()
    if v.strip("*.") == "":  # cat:* is every category: no condition, refused as a bare * is
        raise QueryError(message("cat_every", value=typed(v)), pos)
    if not re.fullmatch(rf"{CATEGORY_TYPED}\.?\*?", v):
        raise QueryError(message("cat_expects", value=value), pos)
    return v.rstrip("*").rstrip(".") if v.endswith((".*", ".")) else v


def date_range(start: str | None, end: str | None, pos: int | None = None) -> tuple[str, str]:
    """The one date rule: YYYY[-MM[-DD]], real dates, an open end "", START <= END."""
    start, end = (start or "").strip(), (end or "").strip()
    if not start and not end:
        raise QueryError(message("date_range_open"), pos)
    for part in filter(None, (start, end)):
        if not DATE_SHAPE.match(part):
            raise QueryError(message("date_shape", value=part), pos)
        try:
            _date(*(int(x) for x in (part + "-01-01")[:10].split("-")))
        except ValueError:
            raise QueryError(message("date_not_real", value=part), pos) from None
    if start and end and date_bounds(start, end)[0] > date_bounds(start, end)[1]:
        raise QueryError(message("date_range_backwards", start=start, end=end), pos)
    return start, end


def date_bounds(start: str, end: str) -> tuple[int, int]:
    """A checked range's first and last day as YYYYMMDD (the index's dates): a year or a month
    stands for all its days, to the month's last ("2025-03" ends on the 31st; it had ended on the
    12th, `+ "-12-31"` cut to ten characters); an open end is the first or the last day there is."""
    lo = int((start + "-01-01")[:10].replace("-", "")) if start else 1
    if not end:
        return lo, 99991231
    if len(end) == 4:
        return lo, int(end + "1231")
    if len(end) == 7:
        year, month = int(end[:4]), int(end[5:])
        return lo, year * 10000 + month * 100 + calendar.monthrange(year, month)[1]
    return lo, int(end.replace("-", ""))


def paper_ref(q: str) -> tuple[str, str] | None:
    """A pasted paper reference: ("id", arXiv id) (an id, arXiv URL or DOI), or ("doi", doi)."""
    q = q.strip()
    if (m := ARXIV_REF.match(q)) is not None:
        pid = m.group(1)
        return ("id", pid.lower() if "/" in pid else pid)
    return ("doi", doi) if (doi := doi_of(q)) is not None else None


def pasted_ids(q: str) -> list[str]:
    """The arXiv ids of a list of them pasted (two or more, by spaces or commas; URLs too), else
    []: searched as `id:a OR id:b`, where the words "2505.13738 2504.17160" matched no paper."""
    parts = [x for x in re.split(r"[\s,;]+", q.strip()) if x]
    refs = [paper_ref(x) for x in parts]
    if not 2 <= len(parts) <= MAX_TERMS or any(r is None or r[0] != "id" for r in refs):
        return []
    return list(dict.fromkeys(r[1] for r in refs if r is not None))


def parse(q: str) -> Bool:
    """Parse a user query. The result is always a top-level AND (possibly empty)."""
    if len(q) > MAX_QUERY_CHARS:
        raise QueryError(message("query_too_long", n=len(q), limit=MAX_QUERY_CHARS))
    return _Parser(lex(_clean(q))).parse()


def prose_words(q: str) -> int:
    """How many words `q` has when it is too long for query syntax and uses none but parentheses
    and quotes, else 0: a pasted abstract ("... video large language models (VideoLLMs) ...") is
    read as plain text (`parse_literal`), not refused for MAX_TERMS. A field, an operator or a
    minus keeps the query a query (and the refusal): someone wrote it as one."""
    words = (q := _clean(q)).split()
    if len(words) <= MAX_TERMS or not any(c in q for c in '()"'):
        return 0  # (no parenthesis and no quote: plain words, no syntax to set aside)
    for w in (w.lstrip('("') for w in words):
        head, sep, _ = w.partition(":")
        if w in ("OR", "AND", "NOT", "|") or (len(w) > 1 and w[0] == "-" != w[1]):
            return 0
        if sep and FIELD_ALIASES.get(head.lower(), head.lower()) in FIELDS:
            return 0
    return len(words)


def parse_literal(q: str) -> Bool:
    """Plain text, no syntax ('(' and '-' are prose): every token is a free word."""
    q = _clean(q)[:MAX_QUERY_CHARS]
    return Bool("AND", [Text(tokens(tok), raw=tok) for tok in q.split()])


def fts_string(t: Text) -> str | None:
    """A phrase as an FTS5 expression of quoted \\w-words; None if nothing searchable is left."""
    if not (ws := [w for w in t.words if not _CJK_WORD.match(w)]):
        return None
    body = '"' + " ".join(ws) + '"'
    return f"{{{t.column}}} : {body}" if t.column else body

"""The query language, parsed into a small tree and compiled to parameterised SQL.

    free text            words; the paper must contain at least one, BM25 ranks the rest
    "exact phrase"       unstemmed, words adjacent, required
    ti: au: abs:         restrict a word, "phrase" or (group) to title, authors, abstract
    cat:cs.LG  cat:cs    a category, or every category of an archive
    id:2510.05491        one paper
    venue: area:         substring of the venue ("NeurIPS 2025") or area ("Language Models")
    date:2025-01..2025-06   date:2025   date:2025-03-01..   date:..2024
    -term  NOT term      exclude
    a OR b, a AND b, ( )  boolean structure; AND binds tighter than OR
    transform*           prefix

User text never reaches FTS5 unescaped: every word becomes a double-quoted FTS5 string built
from \\w-characters only, so FTS5 operators, column filters and quotes typed by a user are
just words here. Syntax errors raise QueryError with the position of the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FIELDS = {"ti", "au", "abs", "cat", "id", "date", "venue", "area", "all"}
TEXT_COLUMNS = {"ti": "title", "au": "authors", "abs": "abstract"}
MAX_QUERY_CHARS = 20_000
MAX_TERMS = 64
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were "
    "with we our via using based towards toward into than then these those which".split()
)
# CJK runs and other word runs are separate words ("Muon优化器" -> "muon", "优化器"); the
# English papers' index holds no CJK words, so those only feed the dense side.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]+|[^\\W{_CJK}]+", re.UNICODE)
_CJK_WORD = re.compile(f"^[{_CJK}]+$")
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


class QueryError(ValueError):
    """A query the user must fix; str() is a message fit to show them."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message if position is None else f"{message} (at character {position + 1})")
        self.position = position


# --- tree -----------------------------------------------------------------------------


@dataclass
class Text:
    """Words or a phrase, optionally limited to one column."""

    words: list[str]
    column: str | None = None  # title / authors / abstract; None = all
    phrase: bool = False
    prefix: bool = False
    raw: str = ""


@dataclass
class Filter:
    kind: str  # cat / id / date / venue / area
    value: str | tuple[str, str]


@dataclass
class Bool:
    op: str  # AND / OR
    children: list[Node] = field(default_factory=list)


@dataclass
class Not:
    child: Node


Node = Text | Filter | Bool | Not


# --- lexer ----------------------------------------------------------------------------


@dataclass
class Tok:
    kind: str  # WORD PHRASE LP RP OR AND NOT FIELD
    value: str
    pos: int
    neg: bool = False


def _clean(q: str) -> str:
    """NULs and control characters are never meaningful in a query; they become spaces."""
    return "".join(" " if (ord(ch) < 32 or ch == "\x7f") else ch for ch in q)


def lex(q: str) -> list[Tok]:
    toks: list[Tok] = []
    i, n = 0, len(q)
    while i < n:
        ch = q[i]
        if ch.isspace():
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
                raise QueryError("'-' must stand before a word, phrase or group, not ')'", i - 1)
            toks.append(Tok("RP", ")", i))
            i += 1
        elif ch == '"':
            end = q.find('"', i + 1)
            if end < 0:
                raise QueryError('unbalanced quote: this " has no closing "', i)
            toks.append(Tok("PHRASE", q[i + 1 : end], i, neg))
            i = end + 1
        else:
            while i < n and not q[i].isspace() and q[i] not in '()"':
                i += 1
            word = q[start:i]
            head, sep, rest = word.partition(":")
            if sep and head.lower() in FIELDS:
                toks.append(Tok("FIELD", head.lower(), start, neg))
                if rest:
                    toks.append(Tok("WORD", rest, start + len(head) + 1))
                elif i >= n or q[i].isspace():
                    raise QueryError(f"{head}: needs a value right after the colon", start)
            elif word in ("OR", "AND", "NOT") and not neg:
                toks.append(Tok(word, word, start))
            elif word == "|" and not neg:
                toks.append(Tok("OR", word, start))
            else:
                toks.append(Tok("WORD", word, start, neg))
    return toks


# --- parser ---------------------------------------------------------------------------


class _Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def parse(self) -> Bool:
        node = self.or_expr(None)
        t = self.peek()
        if t is not None:
            if t.kind == "RP":
                raise QueryError("unbalanced parenthesis: this ')' has no matching '('", t.pos)
            raise QueryError(f"unexpected {t.value!r}", t.pos)
        return node if isinstance(node, Bool) and node.op == "AND" else Bool("AND", [node])

    def or_expr(self, fld: str | None) -> Node:
        t = self.peek()
        if t is not None and t.kind in ("OR", "AND"):
            raise QueryError(f"{t.kind} needs a term before it", t.pos)
        parts = [self.and_expr(fld)]
        while (t := self.peek()) is not None and t.kind == "OR":
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind in ("RP", "OR", "AND"):
                raise QueryError("OR needs a term after it", t.pos)
            parts.append(self.and_expr(fld))
        return parts[0] if len(parts) == 1 else Bool("OR", parts)

    def and_expr(self, fld: str | None) -> Node:
        parts = []
        while (t := self.peek()) is not None and t.kind not in ("RP", "OR"):
            if t.kind == "AND":
                self.take()
                nxt = self.peek()
                if not parts or nxt is None or nxt.kind in ("RP", "OR", "AND"):
                    raise QueryError("AND needs a term on both sides", t.pos)
                continue
            parts.append(self.unary(fld))
        if not parts:
            t = self.peek()
            if t is None:
                return Bool("AND", [])
            raise QueryError("empty group", t.pos)
        return parts[0] if len(parts) == 1 else Bool("AND", parts)

    def unary(self, fld: str | None) -> Node:
        t = self.peek()
        assert t is not None
        if t.kind == "NOT":
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind in ("RP", "OR", "AND"):
                raise QueryError("NOT needs a term after it", t.pos)
            return Not(self.unary(fld))
        node = self.primary(fld)
        return Not(node) if t.neg else node

    def primary(self, fld: str | None) -> Node:
        t = self.take()
        if t.kind == "LP":
            if (nxt := self.peek()) is not None and nxt.kind == "RP":
                raise QueryError("empty parentheses", t.pos)
            node = self.or_expr(fld)
            close = self.peek()
            if close is None or close.kind != "RP":
                raise QueryError("unbalanced parenthesis: this '(' is never closed", t.pos)
            self.take()
            return node
        if t.kind == "FIELD":
            if fld is not None:
                raise QueryError(f"{t.value}: cannot be nested inside {fld}:", t.pos)
            nxt = self.peek()
            if nxt is None or nxt.kind not in ("WORD", "PHRASE", "LP"):
                raise QueryError(f"{t.value}: needs a value right after the colon", t.pos)
            if nxt.kind == "LP" and t.value not in TEXT_COLUMNS and t.value != "all":
                raise QueryError(f"{t.value}: takes one value, not a group", t.pos)
            nxt.neg = False
            return self.primary(t.value)
        if t.kind in ("WORD", "PHRASE"):
            return make_leaf(fld, t.value, phrase=t.kind == "PHRASE", pos=t.pos)
        raise QueryError(f"unexpected {t.value!r}", t.pos)


def words(text: str) -> list[str]:
    """The words the index can match, lowercased: \\w-runs as FTS5's unicode61 sees them,
    without CJK (absent from English papers)."""
    return [w.lower() for w in _WORD.findall(text) if not _CJK_WORD.match(w)]


def make_leaf(fld: str | None, value: str, phrase: bool, pos: int) -> Node:
    if fld in (None, "all") or fld in TEXT_COLUMNS:
        prefix = value.endswith("*") and not phrase
        ws = words(value)
        return Text(ws, TEXT_COLUMNS.get(fld or ""), phrase, prefix, value)
    if fld == "cat":
        if not re.fullmatch(r"[A-Za-z\-]+(\.[A-Za-z\-]+)?\*?", value.strip()):
            raise QueryError(f"cat: expects a category such as cs.LG or cs, got {value!r}", pos)
        return Filter("cat", value.strip().rstrip("*"))
    if fld == "id":
        return Filter("id", re.sub(r"v\d+$", "", value.strip()))
    if fld == "date":
        start, dots, end = value.partition("..")
        if not dots:
            end = start
        for part in (start, end):
            if part and not _DATE.match(part):
                raise QueryError(
                    f"date: expects YYYY, YYYY-MM or YYYY-MM-DD, or a range START..END, got {value!r}", pos
                )
        if not start and not end:
            raise QueryError("date: needs at least one end of the range", pos)
        if start and end and start > end:
            raise QueryError(f"date: range {value!r} ends before it starts", pos)
        return Filter("date", (start, end))
    return Filter(fld, value.strip())  # venue / area


def parse(q: str) -> Bool:
    """Parse a user query. The result is always a top-level AND (possibly empty)."""
    if len(q) > MAX_QUERY_CHARS:
        raise QueryError(f"query too long ({len(q):,} characters; the limit is {MAX_QUERY_CHARS:,})")
    return _Parser(lex(_clean(q))).parse()


def parse_literal(q: str) -> Bool:
    """Plain text, no syntax: every whitespace-separated token is a free word. For pasted
    sentences and known-item query sets, where '(' or '-' are prose, not operators."""
    q = _clean(q)[:MAX_QUERY_CHARS]
    return Bool("AND", [Text(words(tok), raw=tok) for tok in q.split()])


# --- compilation ----------------------------------------------------------------------


def fts_string(t: Text) -> str | None:
    """One Text as an FTS5 expression made only of quoted \\w-words; None if nothing
    searchable is left (an emoji, punctuation)."""
    if not t.words:
        return None
    body = '"' + " ".join(t.words) + '"'
    if t.prefix and len(t.words) == 1:
        body += " *"
    return f"{{{t.column}}} : {body}" if t.column else body


@dataclass
class Compiled:
    """What search needs from a query.

    where/params: SQL over `papers p` for the hard clauses (dense results obey these too);
    soft: the free words, at least one of which a lexical hit must contain;
    rank: one FTS5 expression (stemmed index) ranking lexical hits by BM25;
    dense_text: the query as a sentence for the embedding model;
    highlight: words to mark in titles and abstracts.
    """

    where: str = ""
    params: list = field(default_factory=list)
    rank_parts: list[tuple[str, str | None]] = field(default_factory=list)  # (FTS string, bare word)
    soft: str | None = None
    rank: str | None = None
    dense_text: str = ""
    highlight: list[str] = field(default_factory=list)
    has_text: bool = False


def compile_query(tree: Bool, extra_filters: list[Node] | None = None) -> Compiled:
    out = Compiled()
    soft: list[Text] = []
    hard: list[Node] = []
    for child in tree.children:
        if isinstance(child, Text) and child.column is None and not child.phrase:
            soft.append(child)
        else:
            hard.append(child)
    hard.extend(extra_filters or [])

    positives: list[Text] = []
    _collect_positive(tree, positives)
    seen: set[str] = set()
    for t in positives:
        s = fts_string(t)
        if s and s not in seen and len(seen) < MAX_TERMS:
            if not t.phrase and t.column is None and t.words[0] in STOPWORDS and len(positives) > 1:
                continue
            seen.add(s)
            bare = t.words[0] if (t in soft and len(t.words) == 1 and not t.prefix) else None
            out.rank_parts.append((s, bare))
    out.rank = " OR ".join(s for s, _ in out.rank_parts) or None
    out.highlight = sorted({w for t in positives for w in t.words if w not in STOPWORDS})
    out.dense_text = " ".join(t.raw for t in positives if t.column != "authors").strip()
    out.has_text = bool(out.dense_text)

    soft_strs = []
    for t in soft:
        s = fts_string(t)
        if s and (t.words[0] not in STOPWORDS or len(soft) == 1) and s not in soft_strs:
            soft_strs.append(s)
    out.soft = " OR ".join(soft_strs[:MAX_TERMS]) or None

    clauses = [c for c in (_sql(n, out.params) for n in hard) if c]
    out.where = " AND ".join(f"({c})" for c in clauses)
    return out


def _collect_positive(node: Node, out: list[Text]) -> None:
    if isinstance(node, Text):
        if node.words or node.raw.strip():
            out.append(node)
    elif isinstance(node, Bool):
        for c in node.children:
            _collect_positive(c, out)


_NOTHING = "0"  # SQL false: a required clause with nothing searchable matches nothing


def _sql(node: Node, params: list) -> str | None:
    if isinstance(node, Text):
        s = fts_string(node)
        if s is None:
            return _NOTHING
        table = "fts_exact" if node.phrase else "fts"
        params.append(s)
        return f"p.rowid IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)"
    if isinstance(node, Filter):
        if node.kind == "cat":
            v = str(node.value)
            if "." in v:
                params.append(v.lower())
                return "p.rowid IN (SELECT paper FROM paper_categories WHERE lower(category) = ?)"
            params.extend([v.lower(), v.lower() + ".%"])
            return "p.rowid IN (SELECT paper FROM paper_categories WHERE lower(category) = ? OR lower(category) LIKE ?)"
        if node.kind == "id":
            params.append(node.value)
            return "p.id = ?"
        if node.kind == "date":
            start, end = node.value  # type: ignore[misc]
            parts = []
            if start:
                params.append(start)
                parts.append("p.date >= ?")
            if end:
                params.append(end + "\uffff")  # '2025-06' covers every day of June
                parts.append("p.date <= ?")
            return " AND ".join(parts)
        column = {"venue": "p.venue", "area": "p.venue_area"}[node.kind]
        params.append("%" + str(node.value).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        return f"{column} LIKE ? ESCAPE '\\'"
    if isinstance(node, Not):
        inner = _sql(node.child, params)
        return f"NOT ({inner})" if inner else None
    parts = [c for c in (_sql(c, params) for c in node.children) if c]
    if not parts:
        return None
    return f" {node.op} ".join(f"({c})" for c in parts)

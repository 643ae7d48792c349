"""Which papers a query's parts allow, as boolean masks over the lexical snapshot: the
constraints (`constraints`) and the free words' concepts (`find_words`). `Eval` reads the
postings, memoises them and bounds what one query may read."""

from __future__ import annotations

import math
import re
import string
import time
from dataclasses import replace
from functools import partial, reduce

import numpy as np

from paperdex.index import lexical
from paperdex.messages import message, typed
from paperdex.paper import ARXIV_ID
from paperdex.search import query as Q
from paperdex.search.corpus import Corpus
from paperdex.search.planning import Concept, Plan, alt_pairs, concepts_of, text_pairs, together, zh_alt
from paperdex.search.rank import (
    PHRASE_BOOST,
    PHRASE_BOOST_STATEMENT,
    Words,
    phrase_bonus,
    phrase_candidates,
    together_mask,
)
from paperdex.text import HIDDEN, STOPWORDS, has_cjk, stem, stemmer, tokens, zh

# words one prefix (transform*) may stand for; past it the query is refused, as docs/search.md says
# (it was 256, cut silently to the commonest: co* undercounted by 5,974 papers' words, multi* by 120;
# the 63k store's widest two-letter prefix, co*, has 2,443)
MAX_PREFIX_TERMS = 4096
MAX_POSTINGS = 20_000_000  # postings one query may read: the bound on its cost
RELAX_BELOW = 10  # papers holding all of 3-5 concepts under which all but one will do
# A typed compound's other spelling ("oversmoothing" / "over-smoothing") is the same concept when
# papers write it at least this often per use of the typed one, and in at least MIN_SPELLING papers
SPELLING_SHARE = 0.05
MIN_SPELLING = 2
# A typed word in at most RARE_WORD papers, one edit from a word in RESPELL_TIMES as many (and at
# least RESPELL_MIN), gets a "did you mean" (`respellings`): "tranformer" -> "transformer"
RARE_WORD = 2
RESPELL_TIMES = 20
RESPELL_MIN = 20
RESPELL_CHECKED = 3  # fixes checked for papers that write them so, best first
# Typed words longer than this get no fix (docs/search.md): a pasted run of letters took 90 s
RESPELL_LONGEST = 32


class OverBudget(Exception):
    """The query ran past the deadline (``time.monotonic()``) given to ``Searcher.search``."""


def required(n: int, with_all: int | None = None) -> int:
    """How many of n free concepts a lexical match (the matched set) must contain: both of
    two; all of three to five while at least RELAX_BELOW papers of the whole store hold them
    all (`with_all`; None: the widest rule), else all but one; half of a longer text (a pasted
    sentence is a description, not a checklist)."""
    if n <= 2:
        return n
    if n <= 5:
        return n if with_all is not None and with_all >= RELAX_BELOW else n - 1
    return math.ceil(n / 2)


class Eval:
    """Evaluates one query over one lexical snapshot, reading at most MAX_POSTINGS postings."""

    def __init__(
        self, ix: lexical.LexIndex, corpus: Corpus, deadline: float | None = None, zh_dict: bool = True
    ) -> None:
        self.ix, self.corpus, self.zh_dict = ix, corpus, zh_dict  # zh_dict: Settings.zh_dict
        self.cost = 0
        self.deadline = deadline  # time.monotonic() past which evaluation stops (OverBudget)
        self.notices: list[str] = []
        self.said: set[int] = set()  # the nodes that match nothing and said why (`explained`)
        self._stem_cache: dict[tuple[str, str | None], np.ndarray] = {}
        self._spelled: dict[tuple[str, tuple[tuple[str, ...], ...], str], Concept] = {}

    def _charge(self, n: int) -> None:
        self.cost += n
        if self.cost > MAX_POSTINGS:
            raise Q.QueryError(message("too_broad"))
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OverBudget("the query ran out of its time budget")

    def stem_mask(self, s: str, column: str | None) -> np.ndarray:
        key = (s, column)
        if (m := self._stem_cache.get(key)) is None:
            t = self.ix.term(s)
            held = self.ix.column_mask(t) if t is not None and column is None else None
            if held is not None:  # a common word: its column says where it is
                self._charge(int(self.ix.df[t]))
                m = held
            else:
                m = np.zeros(self.ix.n, dtype=bool)
                if t is not None:
                    docs = self.ix.term_docs(t, column)
                    self._charge(len(docs))
                    m[docs] = True
            m.setflags(write=False)  # handed out as it is (`concept_mask`)
            self._stem_cache[key] = m
        return m

    def known_mask(self, s: str) -> np.ndarray | None:
        """The papers holding stem `s` anywhere, if matching has read it already (uncharged)."""
        return self._stem_cache.get((s, None))

    def spelled(self, c: Concept) -> Concept:
        """The concept with its typed compound's other spelling (`other_spelling`), when papers use
        it; once a search (a constraint's words are ranked too)."""
        key = (c.label, tuple(c.alts), c.zh)
        if (done := self._spelled.get(key)) is None:
            if (got := other_spelling(self.ix, c)) is None:
                done = c
            else:
                other, weight = got
                weights = [*(c.weights or [1.0] * len(c.alts)), weight]
                done = Concept(c.label, [*c.alts, other], weights, c.loose, c.zh)
            self._spelled[key] = done
        return done

    def respelled(self, word: str) -> str | None:
        """The best of `respellings` that papers write as such: a stem says "semant" for the
        nonsense "semantation" (one letter from "segmantation") as for "semantic"."""
        for w in respellings(self.ix, word)[:RESPELL_CHECKED]:
            t = Q.Text([w], phrase=True, raw=w)
            try:
                if self.corpus.phrase_rowids(t, f'"{w}"', partial(self._phrase_candidates, t)):
                    return w
            except Q.QueryError:  # too many papers to check one by one (Milvus): a word that common is one
                return w
        return None

    def concept_mask(self, c: Concept, column: str | None = None) -> np.ndarray:
        """The papers holding any of the concept's alternatives (in `column`, or anywhere), or
        its Chinese word (`held_zh`)."""
        zh_word = held_zh(self.ix, c)
        if len(c.alts) == 1 and len(c.alts[0]) == 1 and not zh_word:
            return self.stem_mask(c.alts[0][0], column)  # one word: its mask (read-only)
        out = np.zeros(self.ix.n, dtype=bool)
        for alt in c.alts:
            out |= self._alt_mask(alt, together(c, alt), column)
        if zh_word:  # its bigrams standing together: the word as written
            out |= self._alt_mask(zh_word, len(zh_word) > 1, column)
        return out

    def _alt_mask(self, alt: tuple[str, ...], joined: bool, column: str | None) -> np.ndarray:
        """The papers holding every word of `alt`, standing together if `joined`."""
        m = self.stem_mask(alt[0], column)
        for s in alt[1:]:
            m = m & self.stem_mask(s, column)
        if joined and m.any():
            self._charge(int(np.count_nonzero(m)) * len(alt_pairs(alt)))
            m = m & together_mask(self.ix, alt)
            if column is not None and m.any():  # the pair index spans title and abstract: the field's own text
                docs = np.flatnonzero(m)
                m[docs] = self._adjacent_in(docs, alt, column)
        return m

    def _adjacent_in(self, docs: np.ndarray, alt: tuple[str, ...], column: str) -> np.ndarray:
        """For each of `docs` (whose title or abstract holds alt's pairs), whether they stand together
        in that field itself (in the abstract: unless the title does not hold them)."""
        rowids = self.ix.rowids[docs]
        if column != "abstract":
            got = self._field_pairs(rowids, column)
            return np.array([all(p in got[int(r)] for p in alt_pairs(alt)) for r in rowids], dtype=bool)
        ok = np.ones(len(docs), dtype=bool)
        for a, b in alt_pairs(alt):
            idx = np.flatnonzero(ok & self.stem_mask(a, "title")[docs] & self.stem_mask(b, "title")[docs])
            if len(idx) == 0:
                continue
            in_title = self._field_pairs(rowids[idx], "title")
            if both := [i for i in idx.tolist() if (a, b) in in_title[int(rowids[i])]]:
                in_abs = self._field_pairs(rowids[both], "abstract")
                ok[both] = [(a, b) in in_abs[int(rowids[i])] for i in both]
        return ok

    def _field_pairs(self, rowids: np.ndarray, column: str) -> dict[int, set[tuple[str, str]]]:
        """The adjacent word pairs of one field of these papers, read from their records."""
        self._charge(len(rowids) * (512 if column == "abstract" else 64))
        ids = [int(r) for r in rowids]
        texts = self.corpus.field_texts(ids, column)  # none for a paper deleted since the snapshot
        return {r: text_pairs(texts[r]) if r in texts else set() for r in ids}

    def concept_score(self, c: Concept, acc: np.ndarray) -> None:
        """acc += the concept's BM25F: its best alternative's (the sum of its words), weighed;
        its Chinese word (`held_zh`) one more where papers hold it, weighed as `zh_weight` says
        (else the sums are as they were, to the bit: a store without Chinese ranks as before)."""
        zh_word = held_zh(self.ix, c)
        if len(c.alts) == 1 and not zh_word:
            self._alt_score(c.alts[0], acc)
            return
        best = np.zeros(self.ix.n, dtype=np.float32)
        if zh_word:
            self._alt_score(zh_word, best)
            if (w := zh_weight(self.ix, c, zh_word)) != 1.0:
                best *= w
        for i, alt in enumerate(c.alts):
            a = np.zeros(self.ix.n, dtype=np.float32)
            self._alt_score(alt, a)
            if c.weight(i) != 1.0:
                a *= c.weight(i)  # a less frequent translation
            np.maximum(best, a, out=best)
        acc += best

    def _alt_score(self, alt: tuple[str, ...], acc: np.ndarray) -> None:
        for s in dict.fromkeys(alt):
            if (t := self.ix.term(s)) is None:
                continue
            col = self.ix.column(t)
            if col is not None:  # a common word: one pass over N, the same sums (LexIndex.column)
                self._charge(int(self.ix.df[t]))
                acc += col
            else:
                d, sc = self.ix.term_scores(t)
                self._charge(len(d))
                np.add.at(acc, d, sc)  # one pass, the same sums as acc[d] += sc

    def begins_none(self, word: str) -> bool:
        """Whether no word begins with `word`, nor is it one the index holds by its stem."""
        return not len(self.ix.prefix_terms(word, 1)) and self.ix.term(stem(word)) is None

    def prefix_mask(self, word: str, column: str | None) -> np.ndarray:
        if len(word) < 2:
            raise Q.QueryError(message("prefix_too_short", word=word))
        out = np.zeros(self.ix.n, dtype=bool)
        if len(got := self.ix.prefix_terms(word, MAX_PREFIX_TERMS + 1)) > MAX_PREFIX_TERMS:
            raise Q.QueryError(message("prefix_too_common", word=word, limit=MAX_PREFIX_TERMS))
        terms = [int(t) for t in got]
        # the index holds stems: learning* is the stems from "learning" on, and learn, which the word
        # itself finds (learning, learned), so a prefix never finds less than its word typed whole
        if (own := self.ix.term(stem(word))) is not None and own not in terms:
            terms.append(own)
        for t in terms:
            docs = self.ix.term_docs(t, column)
            self._charge(len(docs))
            out[docs] = True
        return out

    def rowid_mask(self, rowids: list[int]) -> np.ndarray:
        m = np.zeros(self.ix.n, dtype=bool)
        m[self.ix.docs_of_rowids(np.array(rowids, dtype=np.int64))] = True
        return m

    def text_mask(self, t: Q.Text) -> np.ndarray | None:
        """A Text node as a constraint; None when it constrains nothing (stopwords only)."""
        col = t.column
        if col == "authors" and t.words and all(has_cjk(w) for w in t.words):  # a name in characters, as written
            return reduce(np.logical_and, [self.stem_mask(stem(w), col) for w in t.words])
        if t.prefix and not t.words:  # "*" alone, or after no letter: every paper, silently
            raise Q.QueryError(message("prefix_too_short", word=t.raw.rstrip("*")))
        if (word := prefix_word(t)) is not None:
            if len(word) > 1 and self.begins_none(word):  # said, not left to "the query's conditions"
                self.notices.append(message("prefix_no_word", word=typed(word)))
                self.said.add(id(t))
            return self.prefix_mask(word, col)
        cs, untranslated = concepts_of(t, self.zh_dict)
        untranslated = [w for w in untranslated if not zh.function_only(w)]  # ti:让AI is ti:AI, as ti:the AI
        # Chinese no English word is known for, that papers written in Chinese hold (ti:基于): as written
        written = [c for w in untranslated if held_zh(self.ix, c := Concept(w.strip(), [], zh=w.strip()))]
        if len(written) < len(untranslated):
            self.notices.extend(message("untranslated_no_words", word=typed(w)) for w in untranslated)
            self.said.add(id(t))
            return np.zeros(self.ix.n, dtype=bool)
        if not t.phrase:  # a quoted phrase is matched as typed
            cs = [self.spelled(c) for c in cs]
        cs += written
        m: np.ndarray | None = None
        plain = [w for w in t.words if not has_cjk(w)]
        # the word index holds no stopword, and a name may be one (au:An, "Li An"): the phrase index has it
        named = t.column == "authors" and any(w in STOPWORDS for w in plain)
        if (named or t.phrase and len(plain) > 1) and (fts := Q.fts_string(t)):
            rows = self.corpus.phrase_rowids(t, fts, lambda: self._phrase_candidates(t))
            self._charge(len(rows) * 8)
            m = self.rowid_mask(rows)
        for c in cs:
            if t.phrase and m is not None and not has_cjk(c.label):
                continue  # the exact phrase already requires its English words
            cm = self.concept_mask(c, col)
            m = cm if m is None else (m & cm)
        return m

    def filter_mask(self, f: Q.Filter) -> np.ndarray:
        ix = self.ix
        m = np.zeros(ix.n, dtype=bool)
        if f.kind == "cat":
            m[ix.category_docs(str(f.value))] = True
        elif f.kind == "date":
            assert isinstance(f.value, tuple)  # query.date_range's (from, to)
            lo, hi = Q.date_bounds(*f.value)
            m = (ix.dates >= lo) & (ix.dates <= hi)
        elif f.kind == "id":
            if (row := self.corpus.rowid(str(f.value))) is not None:
                m = self.rowid_mask([row])
            else:  # one id of a pasted list, or id:X typed: say which is missing (how to add an arXiv one)
                known = ARXIV_ID.fullmatch(str(f.value)) is not None
                self.notices.append(message("id_not_in_store" if known else "id_unknown", id=typed(str(f.value))))
                self.said.add(id(f))
        else:  # venue / area: substring, case-insensitive; decision: exactly
            m = self.rowid_mask(self.corpus.rowids_where(f.kind, str(f.value)))
        return m

    def _phrase_candidates(self, t: Q.Text) -> np.ndarray:
        """Every rowid holding all of a phrase's words in its field (a superset of the phrase)."""
        m = np.ones(self.ix.n, dtype=bool)
        for w in t.words:
            if not has_cjk(w) and w not in STOPWORDS:
                m &= self.stem_mask(stem(w), t.column)
        return self.ix.rowids[m]

    def node(self, n: Q.Node) -> np.ndarray | None:
        if isinstance(n, Q.Text):
            return self.text_mask(n)
        if isinstance(n, Q.Filter):
            return self.filter_mask(n)
        if isinstance(n, Q.Not):
            inner = self.node(n.child)
            return None if inner is None else ~inner
        masks = [m for m in (self.node(c) for c in n.children) if m is not None]
        return reduce(np.logical_and if n.op == "AND" else np.logical_or, masks[1:], masks[0].copy()) if masks else None

    def explained(self, n: Q.Node) -> bool:
        """Whether `n` matches nothing and has said why (an id not in the store, a prefix no word
        begins with, Chinese no English word is known for): "no paper here meets the query's
        conditions" would say it again, vaguer (`id:nope` gave both)."""
        if isinstance(n, Q.Bool):
            said = [self.explained(c) for c in n.children]
            return bool(said) and (any(said) if n.op == "AND" else all(said))
        return id(n) in self.said


def prefix_word(t: Q.Text) -> str | None:
    """The letters of a prefix (`transform*`) as the index is asked for them, else None."""
    return t.words[0].rstrip("*") if t.prefix and len(t.words) == 1 and not has_cjk(t.raw) else None


def prefixes_set_aside(ev: Eval, p: Plan) -> list[Q.Text]:
    """The free prefixes no word begins with (`diffusion xqzpl*`): set aside, as a free word no paper
    holds is (`find_words` says so), when the query has other free words. Under a field, or with
    nothing else to search, one stands: it matches nothing and says why (`explained`)."""
    if not (p.concepts or p.cjk_words):
        return []
    return [
        n
        for n in p.hard
        if isinstance(n, Q.Text) and n.column is None and (w := prefix_word(n)) and len(w) > 1 and ev.begins_none(w)
    ]


def plan_constraints(ev: Eval, p: Plan) -> tuple[np.ndarray | None, list[Q.Text]]:
    """A plan's constraints (`constraints`) but the prefixes set aside, and those (`prefixes_set_aside`)."""
    aside = prefixes_set_aside(ev, p)
    return constraints(ev, [n for n in p.hard if all(n is not a for a in aside)]), aside


def constraints(ev: Eval, hard: list[Q.Node]) -> np.ndarray | None:
    """C: what every result obeys (None: nothing constrains)."""
    masks = [m for m in map(ev.node, hard) if m is not None]
    return reduce(np.logical_and, masks) if masks else None


def find_words(ev: Eval, p: Plan, C: np.ndarray | None, notices: list[str], aside: list[Q.Text] | None = None) -> Words:
    """The free words as concepts: which papers hold enough of them (L, decided over the
    whole corpus so that a filter only narrows), which hold any (A), and their scores;
    `aside`: the prefixes `prefixes_set_aside` took out of the constraints."""
    n = ev.ix.n
    concepts = [ev.spelled(c) for c in p.concepts]
    masks = [ev.concept_mask(c) for c in concepts]
    held = [bool(m.any()) for m in masks]  # asked once a concept
    present = [(c, m) for c, m, h in zip(concepts, masks, held, strict=True) if h]
    missing = [c.label for c, h in zip(concepts, held, strict=True) if not h]
    for t in aside or []:  # as a free word no paper holds: "...; showing results without" when others are
        word = typed(prefix_word(t) or "")
        notices.append(message("prefix_no_word_without" if present else "prefix_no_word", word=word))
    if missing and present:
        notices.append(message("missing_words_without", words=_named(missing)))
    if present:
        cov: np.ndarray = np.zeros(n, dtype=np.uint8) if len(present) < 256 else np.zeros(n, dtype=np.int32)
        for _, m in present:
            cov += m.view(np.uint8)
        n_all = len(present)
        # how many papers hold them all, counted only where `required` depends on it
        with_all = int(np.count_nonzero(cov >= n_all)) if required(n_all) != required(n_all, RELAX_BELOW) else None
        L, A = cov >= required(n_all, with_all), cov > 0
    elif p.concepts or p.cjk_words:
        L = A = np.zeros(n, dtype=bool)  # no free word is in any paper
        if missing:
            notices.append(message("missing_words", words=_named(missing)))
    else:
        L = A = np.ones(n, dtype=bool)  # no free words, or stopwords only: constraints alone
        if p.soft and not p.hard:  # (an emoji, "*" or a zero-width space holds no word at all)
            shown = HIDDEN.sub("", p.q).strip()[:40]
            words = any(t.words for t in p.soft)
            notices.append(message("only_common_words") if words else message("no_word_to_search", q=shown))
    if fixes := {w: r for c in p.concepts if (w := c.label.lower()) and (r := ev.respelled(w))}:
        query = re.sub(r"[A-Za-z]+", lambda m: fixes.get(m[0].lower(), m[0]), p.q)
        notices.append(message("did_you_mean", query=query))
    for name in p.name_like:  # 谢赛宁 typed as a word, an author's name: au:谢赛宁 offered
        spelled = Q.author_readings(name)  # None: not a name (its pinyin readings are the search)
        if spelled is not None and (named := ev.node(spelled)) is not None and named.any():
            # the name where it stands alone (name_like's rule), not inside au:何恺明 typed before it
            query = re.sub(rf"(?<!\S){re.escape(name)}(?!\S)", f"au:{name}", p.q, count=1)
            notices.append(message("search_as_author", name=name, query=query))
    if C is not None:
        L, A = L & C, A & C
    rank_concepts = [c for c, _ in present] + [ev.spelled(c) for c in p.rank_concepts([])]  # + the constraints' words
    acc = np.zeros(n, dtype=np.float32)
    # every paper's postings, within C or not: cheaper than choosing C's first
    for c in rank_concepts:
        ev.concept_score(c, acc)
    boost = PHRASE_BOOST_STATEMENT if p.statement else PHRASE_BOOST
    top, exact = phrase_candidates(acc, A & (acc > 0))
    # the words standing together as typed: the concepts without their other spellings
    as_typed = [_with_zh(ev.ix, c) for c, h in zip(p.concepts, held, strict=True) if h]
    quoted = phrase_bonus(ev.ix, acc, as_typed, top, boost, ev.known_mask)
    if len(present) > 1 and p.query_class[1] == "keywords":
        acc *= cov.astype(np.float32) * (1 / len(present))  # coordination: one of two words weighs half
        exact = False  # which reorders the candidates
    notices.extend(ev.notices)
    return Words(L, A, acc, rank_concepts, bool(rank_concepts), quoted, top if exact else None)


def other_spelling(ix: lexical.LexIndex, c: Concept) -> tuple[tuple[str, ...], float] | None:
    """A typed compound's other spelling and its weight, when papers use it (SPELLING_SHARE): one
    word split in two where papers write the two together ("oversmoothing": `over smooth`, as in
    "over-smoothing", the split the most papers write: `LexIndex.apart`), or two words joined,
    hyphenated or a Chinese word's translation ("fine-tuning", 微调 "fine tuning": `finetun`).
    Its weight keeps a paper found by the other spelling from scoring more than one found by the
    typed: the typed words' IDF over the other's, at most 1."""
    typed = c.alts[0]
    word = c.label.lower()
    if len(typed) == 1 and len(word) >= 5 and word.isascii() and word.isalnum() and stem(word) == typed[0]:
        split, n = ix.apart(word)  # most words: none, kept from the first search that asked
        other: tuple[str, ...] | None = split
    elif len(typed) == 2 and ("-" in word or " " in word) and not has_cjk(word):  # typed, or a translation
        words = [w for w in tokens(word) if w not in STOPWORDS]  # (not "2.5": numbers are not compounds)
        if len(words) != 2 or tuple(map(stem, words)) != typed:
            return None
        other = (stem("".join(words)),)
        n = _papers(ix, other)
    else:
        return None
    if other is None or other in c.alts or n < max(MIN_SPELLING, SPELLING_SHARE * _papers(ix, typed)):
        return None
    typed_idf = _idf(ix, typed)
    return other, min(1.0, typed_idf / _idf(ix, other)) if typed_idf else 1.0


def held_zh(ix: lexical.LexIndex, c: Concept) -> tuple[str, ...]:
    """The concept's Chinese word as bigrams (`planning.zh_alt`) when the index holds each of
    them, else (): a store of English papers holds none, and its masks and scores are as before."""
    alt = zh_alt(c)
    return alt if alt and all(ix.term(g) is not None for g in alt) else ()


def _with_zh(ix: lexical.LexIndex, c: Concept) -> Concept:
    """The concept with its Chinese word as one more way to stand together, for the phrase bonus:
    a Chinese paper writing 扩散模型 holds the phrase as an English one writing "diffusion model"
    does (without it, zh-1 of the sample + 2 ranked 236th of 306 for 扩散模型, its English twin
    19th). Only a concept that already asks its words to stand together (a multi-word reading),
    and only where the index holds the word: an English store's units are as before."""
    if not any(len(alt) > 1 for alt in c.alts) or not (zh := held_zh(ix, c)):
        return c
    return replace(c, alts=[*c.alts, zh], weights=None)


def zh_weight(ix: lexical.LexIndex, c: Concept, written: tuple[str, ...]) -> float:
    """What a paper found by the concept's Chinese word counts, as another spelling's does
    (`other_spelling`): its first English reading's IDF over the bigrams', at most 1. Among English
    papers a Chinese word's bigrams are rare, and their IDF summed over two or three bigrams made a
    Chinese paper holding only 数据集 ("dataset") second of 3,079 for a long query it has no other
    word of; so weighed, it scores as an English paper holding "dataset". 1 where no paper holds
    the English (a store of Chinese papers: BM25F over the bigrams)."""
    english = _idf(ix, c.alts[0]) if c.alts else 0.0
    return min(1.0, english / own) if english and (own := _idf(ix, written)) else 1.0


def _papers(ix: lexical.LexIndex, alt: tuple[str, ...]) -> int:
    """How many papers hold a one-word alternative, or a two-word one's words together."""
    terms = [t for s in alt if (t := ix.term(s)) is not None]
    if len(terms) < len(alt) or len(terms) > 2:
        return 0
    return int(ix.df[terms[0]]) if len(terms) == 1 else len(ix.pair_docs(terms[0], terms[1]))


def _idf(ix: lexical.LexIndex, alt: tuple[str, ...]) -> float:
    """The summed IDF of an alternative's words (BM25's, as the index scores them; 0 if one is absent)."""
    dfs = [int(ix.df[t]) if (t := ix.term(s)) is not None else 0 for s in alt]
    return 0.0 if 0 in dfs else sum(float(lexical.idf(df, ix.n)) for df in dfs)


def _named(words: list[str]) -> str:
    """The words a notice says no paper holds, each quoted as `messages.typed` names it."""
    return ", ".join(f"“{typed(w)}”" for w in words)


def respellings(ix: lexical.LexIndex, word: str) -> list[str]:
    """The words one edit from a rare typed `word` whose stems papers hold RESPELL_TIMES as often,
    most held first: a likely typo's fixes, offered, never searched for the user (a rare name one
    letter from a common word stays as typed). Only for words of five to RESPELL_LONGEST letters,
    in at most RARE_WORD papers. Where fixes share a stem ("robotcs": robotics, robots), the
    likeliest typo comes first: a letter left out, then two swapped, one changed, one too many."""
    if not 5 <= len(word) <= RESPELL_LONGEST or not (word.isascii() and word.isalpha()):
        return []
    t = ix.term(stem(word))
    if (df := int(ix.df[t]) if t is not None else 0) > RARE_WORD:
        return []
    cut = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    likeliness: dict[str, int] = {}
    for rank, edits in enumerate(
        [
            {a + b[1:] for a, b in cut if b},  # a letter too many
            {a + x + b[1:] for a, b in cut if b for x in string.ascii_lowercase},  # a letter changed
            {a + b[1] + b[0] + b[2:] for a, b in cut if len(b) > 1},  # two letters swapped
            {a + x + b for a, b in cut for x in string.ascii_lowercase},  # a letter left out
        ]
    ):
        likeliness.update(dict.fromkeys(edits - {word}, rank))
    need = max(RESPELL_MIN, RESPELL_TIMES * df)
    cands = sorted(likeliness)
    held = {}
    for w, s in zip(cands, stemmer().stemWords(cands), strict=True):  # one call, no cache filled with typos
        if (u := ix.vocab.index(s)) is not None and int(ix.df[u]) >= need:
            held[w] = (int(ix.df[u]), likeliness[w])
    return sorted(held, key=lambda w: (-held[w][0], -held[w][1], w))

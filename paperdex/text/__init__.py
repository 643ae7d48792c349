"""One normalisation rule for documents and queries, so that what a user types and what the
index holds meet: NFKC (full-width ＬＬＭ -> LLM, the ﬁ ligature -> fi), case folding, accents
removed, words as runs of letters and digits, Porter stems."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

# Words too common to mean anything alone. Checked per word: `in-context` keeps `context`.
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were "
    "with we our via using based towards toward into than then these those which".split()
)
# The frame of a question or a request, not its topic: a query's concept made only of these
# words is set aside when the query has others (search.is_filler). The index keeps them.
QUERY_FILLER = frozenset(
    "how why what which who whom whose when where whether do does did done can could should would will shall "
    "may might must is are be been being am there here some any such other more most much many each every "
    "all both not no i you they them their it me my us method methods approach approaches technique "
    "techniques way ways paper papers work works study studies research researchers existing recent current "
    "propose proposed proposes use used uses help helps make makes".split()
)
# Characters that make text read other than it is: C0 and C1 controls but tab and newline (ESC
# starts a terminal escape sequence; 0x9b is CSI on its own), bidirectional marks, overrides
# and isolates, the zero-width space and the byte-order mark. One rule for what shown text
# loses (the CLI, machine summaries) and what a name may not hold (tags, saved searches).
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
# The CJK scripts by Unicode block, in one place. `CJK`, any of them, is text in Chinese, Japanese
# or Korean: unspaced text to the index, the highlighter and the query's words, and left to e5 by
# the English-only MiniLM (index/embed.py). `IDEOGRAPHS` alone is what text/zh.py reads.
IDEOGRAPHS = "\u4e00-\u9fff"  # CJK Unified Ideographs
# Hiragana and Katakana, Extension A, Hangul Syllables, Compatibility Ideographs (NFKC folds them)
CJK = "\u3040-\u30ff" + "\u3400-\u4dbf" + IDEOGRAPHS + "\uac00-\ud7af" + "\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{CJK}]+")
# A word: a run of letters and digits (`_`, `-` and the rest separate), a CJK run apart from the
# letters beside it ("Muon优化器" -> "muon", "优化器"); documents and queries alike (`tokens`).
WORD = re.compile(f"[{CJK}]+|[^\\W_{CJK}]+")


# A Greek letter standing alone (β-VAE, π0, ε-greedy, μP) is the name the index holds for TeX's
# ($\beta$-VAE -> "beta", text/latex.py), so either spelling finds both; a Greek word (two
# letters or more together) keeps its letters. The symbol forms (ϵ, ϑ, ϕ, µ) are their letters.
_GREEK_NAME = {
    c: m[1].lower().replace("lamda", "lambda")
    for c in map(chr, range(0x391, 0x3CA))
    if (m := re.fullmatch(r"GREEK (?:SMALL|CAPITAL) LETTER (?:FINAL )?(\w+)", unicodedata.name(c, "")))
}
_SYMBOL_FORMS = "\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5\u00b5"  # ϑ ϕ ϖ ϰ ϱ ϵ, and the micro sign
_GREEK_NAME |= dict(zip(_SYMBOL_FORMS, "theta phi pi kappa rho epsilon mu".split(), strict=True))
_GREEK_BLOCKS = "\u0370-\u03ff\u1f00-\u1fff\u00b5"
_LONE_GREEK = re.compile(f"(?<![{_GREEK_BLOCKS}])[{''.join(_GREEK_NAME)}](?![{_GREEK_BLOCKS}])")


def _named(m: re.Match) -> str:
    """The name, parted by a space from a letter or digit beside it ("μP" -> "mu P")."""
    s, i, j = m.string, m.start(), m.end()
    before = " " if i and s[i - 1].isalnum() else ""
    return before + _GREEK_NAME[m[0]] + (" " if j < len(s) and s[j].isalnum() else "")


def greek_names(text: str) -> str:
    """Each Greek letter standing alone as its name: "β-VAE" -> "beta-VAE", "μP" -> "mu P"."""
    return text if text.isascii() else _LONE_GREEK.sub(_named, text)


def fold(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold()
    if not t.isascii():
        t = greek_names(t)
        t = "".join(c for c in unicodedata.normalize("NFKD", t) if not unicodedata.combining(c))
    return t


def tokens(text: str) -> list[str]:
    """Folded words (`WORD`): what the index holds and what a query's words are."""
    return WORD.findall(fold(text))


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def cjk_grams(run: str) -> list[str]:
    """A CJK run as the word index holds it: its overlapping character bigrams (扩散模型 -> 扩散,
    散模, 模型), a lone character as itself. Bigrams, as Lucene's CJKAnalyzer indexes CJK, not a
    dictionary's words: a title's words are then found by any word typed inside them, whatever the
    dictionary knows (a new term, a name) and however jieba would cut the title, and the query's
    word, its bigrams standing together (the word pairs the index keeps), is found as a substring."""
    return [run[i : i + 2] for i in range(len(run) - 1)] or [run]


def index_words(text: str) -> list[str]:
    """`tokens` as the word index holds a title or an abstract: each CJK run as its `cjk_grams`.
    Text with no CJK is its `tokens`, unchanged."""
    ws = tokens(text)
    if text.isascii() or not any(_CJK_RUN.match(w) for w in ws):
        return ws
    return [g for w in ws for g in (cjk_grams(w) if _CJK_RUN.match(w) else [w])]


def runs(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[str, bool]]:
    """`text` cut into (segment, matched) runs at `spans` ((start, end), in order, not
    overlapping)."""
    out: list[tuple[str, bool]] = []
    last = 0
    for start, end in [*spans, (len(text), len(text))]:
        out += [(text[last:start], False), (text[start:end], True)]
        last = end
    return [(seg, hit) for seg, hit in out if seg]


def split_cjk(text: str) -> list[tuple[str, bool]]:
    """`Muon优化器` -> [("Muon", False), ("优化器", True)]."""
    return runs(text, (m.span() for m in _CJK_RUN.finditer(text)))


class _Stemmer:
    """Porter's stems, but where Porter makes one word of two of the field's concepts that
    papers write often (docs/search.md, "Stems"): "generalization" is not "generation", nor
    "general" or "generic"; "community" is not "communication"; "news" is not "new"."""

    def __init__(self) -> None:
        import Stemmer  # PyStemmer

        self.porter = Stemmer.Stemmer("porter")

    def stemWord(self, word: str) -> str:  # PyStemmer's name, which callers use
        if word.startswith(("generaliz", "generalis")) and not word.startswith("generalist"):
            return "generaliz"
        if word.startswith(("general", "generic")):
            return "generic" if word.startswith("generic") else "general"
        if word.startswith("communit"):
            return "communiti"
        return "news" if word == "news" else self.porter.stemWord(word)

    def stemWords(self, words: list[str]) -> list[str]:
        return [self.stemWord(w) for w in words]


@lru_cache(maxsize=1)
def stemmer() -> _Stemmer:
    return _Stemmer()


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return stemmer().stemWord(word)

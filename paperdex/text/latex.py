"""LaTeX to plain text, in one place, on pylatexenc.

arXiv metadata is TeX: author names in listings carry accents as macros (``Fr\\'ed\\'eric``,
``J{\\o}rgen``), titles and abstracts carry math and markup. Paper records keep titles and
abstracts as the source gave them; names are decoded on the way in (a name is not math, and
matching and display both want ``Frédéric``). Anything that needs readable text from TeX calls
:func:`to_text` rather than a regular expression of its own.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text

# pylatexenc logs a warning for every macro a text uses with too few arguments (`\frac` alone):
# a quirk of the abstract, kept verbatim, not something to print during an ingest of 63k papers
logging.getLogger("pylatexenc").setLevel(logging.ERROR)

# Two quirks of real feeds that pylatexenc would misread:
# - an accent macro whose backslash arrived doubled (``E\\"otv\\"os``): ``\\`` is a line break
#   in TeX, so ``\\"o`` would become a newline and a stray quote;
# - a backslash left in front of a character already decoded upstream (arXiv's OAI ``arXiv``
#   format sends ``Lagouti\ère``): pylatexenc would read ``\è`` as an unknown macro and drop it.
_DOUBLED_ACCENT = re.compile(r"\\\\(?=['\"`^~=.uvHckbdr]\s*[{A-Za-z\\])")
_BACKSLASH_BEFORE_DECODED = re.compile(r"\\(?=[^\x00-\x7f])")
# TeX specials that are plain characters in metadata ("50% fewer", "R&D"); unescaped, pylatexenc
# would treat % as a comment (dropping the rest of the text) and & as a table column.
_BARE_SPECIAL = re.compile(r"(?<!\\)([%&#])")


@lru_cache(maxsize=1)
def _converter(math: str) -> LatexNodes2Text:
    return LatexNodes2Text(math_mode=math, strict_latex_spaces=False)


def _prepare(text: str) -> str:
    text = _DOUBLED_ACCENT.sub(r"\\", text)
    text = _BACKSLASH_BEFORE_DECODED.sub("", text)
    return _BARE_SPECIAL.sub(r"\\\1", text)


def to_text(text: str | None, *, keep_math: bool = True) -> str:
    """Readable text from TeX: accents decoded, markup (``\\textbf{x}``, ``{\\it x}``) removed,
    whitespace collapsed. Math (``$\\beta$``) is kept verbatim unless ``keep_math`` is False, in
    which case it becomes text as well (``β``)."""
    if not text:
        return ""
    if "\\" not in text and "{" not in text and "$" not in text:
        return " ".join(text.split())
    try:
        out = _converter("verbatim" if keep_math else "text").latex_to_text(_prepare(text))
    except Exception:  # pylatexenc is tolerant, but a name must never stop an ingest
        return " ".join(text.split())
    return " ".join(out.split())


# An accent macro and its letter, or a special letter, outside math: `\"o`, `{\"o}`, `\'{e}`,
# `\v{c}`, `\c c`, `{\o}`, `\ss`, `\'{\i}`. Letter-named accents (\v, \c, \u...) need a
# brace or a space after them, so `\cite` or `\url` never match; special letters must end the
# macro name (`\o` is not `\omega`).
_ACCENT_CORE = (
    r"\\(?:['\"`^~=.]|[uvHckbdr](?=[\s{]))\s*(?:\{\s*\\?[A-Za-z]\s*\}|\\[ij](?![A-Za-z])|[A-Za-z])"
    r"|\\(?:ss|o|O|aa|AA|ae|AE|oe|OE|l|L|i|j)(?![A-Za-z])"
)
_ACCENT = re.compile(rf"\{{(?:{_ACCENT_CORE})\}}|(?:{_ACCENT_CORE})(?:\{{\}}| (?=[a-z]))?")
_MATH_SPAN = re.compile(r"(\$\$?[^$]*\$\$?)")


def decode_accents(text: str | None) -> str:
    """TeX accents outside math as the letters they stand for, everything else untouched:
    ``M\\"obius maps of $\\hat{x}$`` -> ``Möbius maps of $\\hat{x}$``. For titles and venues,
    which are shown as text, where a literal ``\\"o`` helps no reader (math stays TeX)."""
    if not text or "\\" not in text:
        return text or ""
    parts = _MATH_SPAN.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside math
        if "\\" in parts[i]:
            parts[i] = _ACCENT.sub(lambda m: to_text(m.group(0), keep_math=False) or m.group(0), parts[i])
    return "".join(parts)


def decode_name(name: str) -> str:
    """A person's name as text: ``Lor\\'and E\\"otv\\"os`` -> ``Loránd Eötvös``."""
    return to_text(name, keep_math=False).strip(" ,")


# --- the search index's text ------------------------------------------------------------------

# Greek letters are indexed by name ($\beta$-VAE is found by "beta-VAE", as before pylatexenc),
# and \ell as "ell"; everything else is pylatexenc's text (\mathbb{R} -> ℝ, which NFKC folds to R).
_GREEK = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi "
    "varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi "
    "Sigma Upsilon Phi Psi Omega ell"
).split()
# Where TeX is: a math span, a macro with its braced arguments, an escaped character, a group.
_ISLAND = re.compile(
    r"\$\$?[^$]{0,400}?\$\$?"  # math
    r"|\\[A-Za-z]+\*?(?:\s*\{[^{}]{0,400}\})*"  # a macro and its arguments
    r"|\\[^A-Za-z\s](?:\{[^{}]{0,20}\}|\\[ij]\b|[A-Za-z])?"  # an accent and its letter, or \%
    r"|\{[^{}]{0,400}\}"  # a group
)
# Font and box macros pylatexenc does not know: it would drop their argument with them.
_BOX = re.compile(r"\\(?:texttt|textsf|textup|textmd|textsl|mbox|underline)\b\s*")
_DROPPED = ("cite", "citep", "citet", "ref", "eqref", "label", "footnote")  # not words of the paper
_MARKUP = re.compile(r"\*\*|__|[{}$^~]")


@lru_cache(maxsize=1)
def _index_converter() -> LatexNodes2Text:
    from pylatexenc.latex2text import MacroTextSpec, get_default_latex_context_db

    db = get_default_latex_context_db()
    db.add_context_category(
        "paperdex-index",
        prepend=True,
        macros=[
            *(MacroTextSpec(g, f" {g.lower()} ") for g in _GREEK),
            *(MacroTextSpec(m, "") for m in _DROPPED),
        ],
    )
    # an unknown macro is indexed by its name, as before pylatexenc (\\Omega-like names, typos)
    db.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=lambda n: f" {n.macroname} "))
    return LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=False)


@lru_cache(maxsize=65536)
def _island_text(island: str) -> str:
    try:
        out = _index_converter().latex_to_text(_prepare(_BOX.sub("", island)))
    except Exception:  # a fragment pylatexenc cannot read is indexed as its letters
        out = re.sub(r"\\([A-Za-z]+)", r" \1 ", island)
    return f" {out} " if island.startswith("$") else out  # $ parted words before, and still does


def index_text(text: str) -> str:
    """Plain words for the search index: ``$\\beta$-VAE`` -> ``beta -VAE``, ``\\textbf{X}`` ->
    ``X``, ``Fr\\'ed\\'eric`` -> ``Frédéric``, ``50\\%`` -> ``50%``. Runs on every title and
    abstract of an index build, so only the TeX in a text goes through pylatexenc, one cached
    fragment at a time (most abstracts have none; whole-text parsing was ~14x slower)."""
    if not text:
        return ""
    if "\\" in text or "$" in text:
        text = _ISLAND.sub(lambda m: _island_text(m.group(0)), _BARE_SPECIAL.sub(r"\\\1", text))
    return " ".join(_MARKUP.sub(" ", text).split())

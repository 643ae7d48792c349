"""LaTeX to plain text, in one place. Records keep titles and abstracts as given; names are
decoded on the way in (``Fr\\'ed\\'eric`` -> ``Frédéric``: matching and display both want it).
Names and accents go through pylatexenc (:func:`to_text`), so do the index's words
(:func:`index_text`); the legible text a reader sees (``$\\beta$-VAE`` reads ``β-VAE``) is
:func:`parse_tex`'s, whose markers paperdex/web/render.py turns into HTML.
"""

from __future__ import annotations

import logging
import re
import tomllib
import unicodedata
from functools import lru_cache
from importlib import resources
from urllib.parse import urlparse

from pylatexenc.latex2text import LatexNodes2Text

from paperdex.text import greek_names

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
BARE_SPECIAL = re.compile(r"(?<!\\)([%&#])")


@lru_cache(maxsize=1)
def _converter() -> LatexNodes2Text:
    return LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


def _prepare(text: str) -> str:
    text = _DOUBLED_ACCENT.sub(r"\\", text)
    text = _BACKSLASH_BEFORE_DECODED.sub("", text)
    return BARE_SPECIAL.sub(r"\\\1", text)


def to_text(text: str | None) -> str:
    """Readable text from TeX: accents decoded, markup (``\\textbf{x}``, ``{\\it x}``) removed,
    math made text (``$\\beta$`` -> ``β``), whitespace collapsed."""
    if not text:
        return ""
    if "\\" not in text and "{" not in text and "$" not in text:
        return " ".join(text.split())
    try:
        out = _converter().latex_to_text(_prepare(text))
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
            parts[i] = _ACCENT.sub(lambda m: to_text(m.group(0)) or m.group(0), parts[i])
    return "".join(parts)


def decode_name(name: str) -> str:
    """A person's name as text: ``Lor\\'and E\\"otv\\"os`` -> ``Loránd Eötvös``."""
    return to_text(name).strip(" ,")


# --- the search index's text ------------------------------------------------------------------

# Greek letters and \ell: a reader sees the letter (SYMBOLS), the index keeps the name ($\beta$-VAE
# is found by "beta-VAE", as before pylatexenc), four more of them too; everything else is
# pylatexenc's text (\mathbb{R} -> ℝ, which NFKC folds to R).
_TEX = tomllib.loads(resources.files("paperdex").joinpath("data", "tex.toml").read_text("utf-8"))
_GREEK: dict[str, str] = _TEX["greek"]
_NAMED_IN_INDEX = [*_GREEK, "varpi", "varrho", "varsigma", "Upsilon"]
# ... each by its letter's name: $\varepsilon$-greedy is found by "ε-greedy" (text.greek_names)
_INDEX_NAME = {g: g.lower().removeprefix("var") for g in _NAMED_IN_INDEX}
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
            *(MacroTextSpec(g, f" {name} ") for g, name in _INDEX_NAME.items()),
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
    """Plain words for the search index: ``$\\beta$-VAE`` -> ``beta -VAE``, ``50\\%`` -> ``50%``,
    ``β-VAE`` -> ``beta-VAE`` (`greek_names`). Only the TeX fragments go through pylatexenc, each
    cached: most abstracts have none."""
    if not text:
        return ""
    if "\\" in text or "$" in text:
        text = _ISLAND.sub(lambda m: _island_text(m.group(0)), BARE_SPECIAL.sub(r"\\\1", text))
    return " ".join(_MARKUP.sub(" ", greek_names(text)).split())


# --- legible text: what a reader sees (the web, the tools, the digest) ---------------------------

# Private-use code points mark where generated markup goes; input text is stripped of them
# first, so a paper cannot inject one.
MATH_ON, MATH_OFF, BOLD_ON, BOLD_OFF, EM_ON, EM_OFF = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005"
LINK_ON, LINK_OFF = "\ue006", "\ue007"
# A math or link opener is followed by one code point naming its entry in the text's list of TeX
# sources or URLs, so a snippet cut from anywhere in the text still knows what it shows.
REF_BASE, MAX_REFS = 0xE010, 0xE0
LBRACE, RBRACE = "\ue0fe", "\ue0ff"  # escaped braces, kept apart from grouping braces until the end
MARKERS = re.compile("[\ue000-\ue0ff]")

SYMBOLS: dict[str, str] = {**_GREEK, **_TEX["symbols"]}
BLACKBOARD: dict[str, str] = _TEX["blackboard"]
SUP = str.maketrans("0123456789+-=()nix", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱˣ")
SUB = str.maketrans("0123456789+-=()aeiox", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢₒₓ")

_BOLD_CMD = re.compile(r"\\(?:textbf|mathbf|bm|boldsymbol)\s*\{([^{}]*)\}")
_EM_CMD = re.compile(r"\\(?:textit|emph|mathit)\s*\{([^{}]*)\}")
_PLAIN_CMD = re.compile(
    r"\\(?:text|textrm|texttt|textsc|textsf|mathrm|mathsf|mathtt|operatorname|underline|mbox)\s*\{([^{}]*)\}"
)
_MATH_ACCENT = re.compile(r"\\(widetilde|tilde|widehat|hat|bar|overline|vec|dot|ddot)\s*(?:\{([^{}]*)\}|([A-Za-z]))")
_MATH_ACCENT_MARK: dict[str, str] = _TEX["math_accents"]  # the combining mark after the base
_FRAC = re.compile(r"\\[dt]?frac\s*(\{[^{}]*\}|\\?[A-Za-z0-9])\s*(\{[^{}]*\}|\\?[A-Za-z0-9])")  # {a}{b}, or \frac12
_CITE = re.compile(r"\s*~?\\(?:cite[a-z]*|ref|eqref|label|footnote)\*?(?:\[[^\]]*\])*\{[^{}]*\}")
_URL_CMD = re.compile(r"\\url\s*\{([^{}]*)\}|\\href\s*\{([^{}]*)\}\s*\{[^{}]*\}")
_URL = re.compile(r"https?://[^\s<>\"'`{}|\\^\ue000-\ue0ff]+", re.IGNORECASE)
_BB = re.compile(r"\\mathbb\s*\{\s*([A-Za-z])\s*\}|\\mathbb\s*([A-Za-z])")
_CAL = re.compile(r"\\mathcal\s*\{\s*([A-Za-z]+)\s*\}|\\mathcal\s*([A-Za-z])")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SCRIPT = re.compile(r"([\^_])\s*(\{([^{}]*)\}|\\?[A-Za-z0-9+\-*])")
_CMD = re.compile(r"\\([A-Za-z]+|[%&_#${},;:! ])\s?")
_MATH = re.compile(r"(?<!\\)\$\$?([^$]{1,300}?)\$\$?")
_MD_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")


def _script(m: re.Match) -> str:
    kind, body = m.group(1), m.group(3) if m.group(3) is not None else m.group(2)
    body = _CMD.sub(lambda c: SYMBOLS.get(c.group(1), c.group(1)), body).strip()
    table = SUP if kind == "^" else SUB
    if body and all(ord(ch) in table for ch in body):
        return body.translate(table)
    # a word needs no parentheses: Θ_post, L_KL; an expression does: x^(n+1)
    return kind + (body if len(body) == 1 or body.isalpha() else f"({body})")


def _group(s: str) -> str:
    """An argument as it reads after a / or √: a word or number alone, else in parentheses."""
    s = s.removeprefix("{").removesuffix("}").strip()  # a \frac's argument comes with its braces
    return s if re.fullmatch(r"[\w.\\]+", s) else f"({s})"


def _math_accent(m: re.Match) -> str:
    """\\tilde O -> Õ: the accent as a combining mark after its base (after a command's name,
    so \\hat{\\theta} becomes θ̂ once the command is replaced)."""
    base = (m.group(2) if m.group(2) is not None else m.group(3)).strip()
    return base + _MATH_ACCENT_MARK[m.group(1)]


def _math(body: str) -> str:
    """A readable plain-text form of one `$...$` span (what a reader without JavaScript sees)."""
    s = body.replace("\\|", "‖").replace("\\{", LBRACE).replace("\\}", RBRACE)
    # text commands first, as one group, so a script reads their word: \Theta_\text{post} -> Θ_post
    s = _PLAIN_CMD.sub(lambda m: "{" + m.group(1) + "}", s)
    for _ in range(3):  # inside out: \frac{\sqrt{x}}{2}
        before = s
        s = _SQRT.sub(lambda m: "√" + _group(m.group(1)), s)
        s = _FRAC.sub(lambda m: f"{_group(m.group(1))}/{_group(m.group(2))}", s)
        s = _MATH_ACCENT.sub(_math_accent, s)
        s = _SCRIPT.sub(_script, s)
        if s == before:
            break
    s = _BB.sub(lambda m: BLACKBOARD.get(m.group(1) or m.group(2), m.group(1) or m.group(2)), s)
    s = _CAL.sub(lambda m: m.group(1) or m.group(2), s)
    for cmd in (_BOLD_CMD, _EM_CMD, _PLAIN_CMD):  # bold, italic and text commands: their content
        s = cmd.sub(r"\1", s)
    s = _SCRIPT.sub(_script, s)
    s = _CMD.sub(lambda c: SYMBOLS.get(c.group(1), c.group(1)), s)
    s = s.replace("{", "").replace("}", "").replace("~", " ")
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", s).strip())  # O + combining tilde -> Õ


def _command(c: re.Match) -> str:
    """A text-mode command: its symbol, keeping the space that ended it."""
    out = SYMBOLS.get(c.group(1), c.group(1))
    return out + " " if c.group(0).endswith(" ") else out


_LINK_SLOT = re.compile("\ue006([\ue010-\ue0ff])\ue007")


_DELIMITED = re.compile(r"(?<!\\)\\\((.{1,300}?)\\\)|(?<!\\)\\\[(.{1,300}?)\\\]", re.S)


def _dollar_math(text: str) -> str:
    """\\(…\\) as $…$ and \\[…\\] as $$…$$, for the one math reader; a span holding a $ is left."""
    if "\\(" not in text and "\\[" not in text:
        return text

    def dollars(m: re.Match) -> str:
        body, fence = (m.group(1), "$") if m.group(1) is not None else (m.group(2), "$$")
        return m.group(0) if "$" in body or not body.strip() else f"{fence}{body.strip()}{fence}"

    return _DELIMITED.sub(dollars, text)


@lru_cache(maxsize=8192)
def parse_tex(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Paper text with LaTeX and Markdown made legible, plus the TeX of each math span and each
    http(s) URL it contains. Formatting survives as private-use markers that
    :func:`segments_html` turns into tags after escaping."""
    if not text:
        return "", (), ()
    s = _dollar_math(MARKERS.sub("", text)).replace("\\b{eta}", "β")  # a common arXiv mangling of \beta
    s = _URL_CMD.sub(lambda m: m.group(1) or m.group(2), s)
    urls: list[str] = []

    def keep_url(m: re.Match) -> str:  # set aside before any TeX rule can touch it (~, --, _)
        url = m.group(0).rstrip(".,;:!?)]")
        if len(urls) >= MAX_REFS or not safe_url(url):
            return m.group(0)
        urls.append(url)
        return LINK_ON + chr(REF_BASE + len(urls) - 1) + LINK_OFF + m.group(0)[len(url) :]

    s = _URL.sub(keep_url, s)
    maths: list[str] = []

    def keep_math(m: re.Match) -> str:
        maths.append(m.group(1).strip().replace(LBRACE, "\\{").replace(RBRACE, "\\}"))
        ref = chr(REF_BASE + len(maths) - 1) if len(maths) <= MAX_REFS else ""
        return MATH_ON + ref + _math(m.group(1)) + MATH_OFF

    s = _MATH.sub(keep_math, s.replace("\\{", LBRACE).replace("\\}", RBRACE))
    s = _CITE.sub("", s)
    s = _BOLD_CMD.sub(lambda m: BOLD_ON + m.group(1) + BOLD_OFF, s)
    s = _EM_CMD.sub(lambda m: EM_ON + m.group(1) + EM_OFF, s)
    s = _PLAIN_CMD.sub(r"\1", s)
    s = _MD_BOLD.sub(lambda m: BOLD_ON + m.group(1) + BOLD_OFF, s)
    s = _CMD.sub(_command, s).replace("{}", "")
    s = re.sub(r"(?<![\\\ue000-\ue0ff])[{}]", "", s)  # grouping braces left around a word: {\eta} -> η
    s = s.replace("``", "“").replace("''", "”").replace("~", " ").replace("---", "—").replace("--", "–")
    s = re.sub(r"[ \t]+", " ", s).strip().replace(LBRACE, "{").replace(RBRACE, "}")
    # the URLs go back in verbatim, after the TeX rules
    s = _LINK_SLOT.sub(lambda m: LINK_ON + m.group(1) + urls[ord(m.group(1)) - REF_BASE] + LINK_OFF, s)
    return s, tuple(maths), tuple(urls)


def clean_tex(text: str) -> str:
    """Paper text made legible, with formatting markers (see :func:`parse_tex`)."""
    return parse_tex(text)[0]


def plain_tex(text: str) -> str:
    """Like :func:`clean_tex`, without any markup: for <title>, BibTeX, tool output."""
    return MARKERS.sub("", clean_tex(text))


def safe_url(url: str | None) -> str | None:
    """Only http(s) links reach an href: a `javascript:` code URL in the data is dropped."""
    if not url or not isinstance(url, str):
        return None
    try:
        u = urlparse(url.strip())
    except ValueError:
        return None
    if u.scheme not in ("http", "https") or not u.netloc:
        return None
    return url.strip()

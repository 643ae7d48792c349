"""Turning paper text into safe, readable HTML.

Paper text is data, never markup: everything goes through :func:`html.escape` here, and the
only tags that come out are the ones this module writes (``<mark>``, ``<strong>``, ``<em>``,
``<span class="math" data-tex="…">``, ``<a rel="noopener nofollow">`` for http(s) URLs). Math is
written twice: as readable text (``$\\beta$-VAE`` reads ``β-VAE``, ``x^{2}`` reads ``x²``), which
is what a reader without JavaScript sees, and as its TeX source in ``data-tex``, which the local
KaTeX (``static/katex``) typesets in the browser. ``\\textbf{X}`` and ``**X**`` become bold X.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from urllib.parse import urlparse

from markupsafe import Markup

from ..paper import Paper
from ..search import mark, snippet, stems_of

# Private-use code points mark where generated markup goes; input text is stripped of them
# first, so a paper cannot inject one.
MATH_ON, MATH_OFF, BOLD_ON, BOLD_OFF, EM_ON, EM_OFF = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005"
LINK_ON, LINK_OFF = "\ue006", "\ue007"
# A math or link opener is followed by one code point naming its entry in the text's list of TeX
# sources or URLs, so a snippet cut from anywhere in the text still knows what it shows.
REF_BASE, MAX_REFS = 0xE010, 0xE0
LBRACE, RBRACE = "\ue0fe", "\ue0ff"  # escaped braces, kept apart from grouping braces until the end
_PRIVATE = re.compile("[\ue000-\ue0ff]")
_TAGS = {
    MATH_ON: ('<span class="math">', "math"),
    MATH_OFF: ("</span>", "math"),
    BOLD_ON: ("<strong>", "b"),
    BOLD_OFF: ("</strong>", "b"),
    EM_ON: ("<em>", "em"),
    EM_OFF: ("</em>", "em"),
    LINK_ON: ("", "link"),
    LINK_OFF: ("</a>", "link"),
}
_OPENERS = {MATH_ON: "math", BOLD_ON: "b", EM_ON: "em", LINK_ON: "link"}
_CLOSE_TAG = {"math": "</span>", "b": "</strong>", "em": "</em>", "link": "</a>"}

SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "times": "×", "cdot": "·", "pm": "±", "mp": "∓", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥",
    "neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "simeq": "≃", "equiv": "≡", "propto": "∝",
    "infty": "∞", "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "leftrightarrow": "↔",
    "mapsto": "↦", "uparrow": "↑", "downarrow": "↓", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆",
    "cup": "∪", "cap": "∩", "forall": "∀", "exists": "∃", "partial": "∂", "nabla": "∇", "sum": "∑",
    "prod": "∏", "int": "∫", "sqrt": "√", "ell": "ℓ", "dots": "…", "ldots": "…", "cdots": "⋯", "circ": "∘",
    "star": "⋆", "ast": "∗", "oplus": "⊕", "otimes": "⊗", "langle": "⟨", "rangle": "⟩", "lfloor": "⌊",
    "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "emptyset": "∅", "neg": "¬", "land": "∧", "lor": "∨",
    "checkmark": "✓", "degree": "°", "%": "%", "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}",
    "log": "log", "exp": "exp", "max": "max", "min": "min", "arg": "arg", "sin": "sin", "cos": "cos",
    "quad": " ", "qquad": "  ", ",": " ", ";": " ", ":": " ", "!": "", " ": " ", "left": "", "right": "",
    "big": "", "Big": "", "bigl": "", "bigr": "", "displaystyle": "", "textstyle": "",
}  # fmt: skip
BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}
SUP = str.maketrans("0123456789+-=()nix", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱˣ")
SUB = str.maketrans("0123456789+-=()aeiox", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢₒₓ")
_SUP_CHARS, _SUB_CHARS = set("0123456789+-=()nix"), set("0123456789+-=()aeiox")

_BOLD_CMD = re.compile(r"\\(?:textbf|mathbf|bm|boldsymbol)\s*\{([^{}]*)\}")
_EM_CMD = re.compile(r"\\(?:textit|emph|mathit)\s*\{([^{}]*)\}")
_PLAIN_CMD = re.compile(
    r"\\(?:text|textrm|texttt|textsc|textsf|mathrm|mathsf|mathtt|operatorname|underline|mbox)\s*\{([^{}]*)\}"
)
_ACCENT = re.compile(r"\\(widetilde|tilde|widehat|hat|bar|overline|vec|dot|ddot)\s*(?:\{([^{}]*)\}|([A-Za-z]))")
_ACCENT_MARK = {"tilde": "\u0303", "widetilde": "\u0303", "hat": "\u0302", "widehat": "\u0302", "bar": "\u0304",
                "overline": "\u0305", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308"}  # fmt: skip
_BARE_FRAC = re.compile(r"\\[dt]?frac\s*(\{[^{}]*\}|\\?[A-Za-z0-9])\s*(\{[^{}]*\}|\\?[A-Za-z0-9])")
_CITE = re.compile(r"\s*~?\\(?:cite[a-z]*|ref|eqref|label|footnote)\*?(?:\[[^\]]*\])*\{[^{}]*\}")
_URL_CMD = re.compile(r"\\url\s*\{([^{}]*)\}|\\href\s*\{([^{}]*)\}\s*\{[^{}]*\}")
_URL = re.compile(r"https?://[^\s<>\"'`{}|\\^\ue000-\ue0ff]+", re.IGNORECASE)
_BB = re.compile(r"\\mathbb\s*\{\s*([A-Za-z])\s*\}|\\mathbb\s*([A-Za-z])")
_CAL = re.compile(r"\\mathcal\s*\{\s*([A-Za-z]+)\s*\}|\\mathcal\s*([A-Za-z])")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SCRIPT = re.compile(r"([\^_])\s*(\{([^{}]*)\}|\\?[A-Za-z0-9+\-*])")
_CMD = re.compile(r"\\([A-Za-z]+|[%&_#${},;:! ])\s?")
_MATH = re.compile(r"(?<!\\)\$\$?([^$]{1,300}?)\$\$?")
_MD_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")


def _script(m: re.Match) -> str:
    kind, body = m.group(1), m.group(3) if m.group(3) is not None else m.group(2)
    body = _CMD.sub(lambda c: SYMBOLS.get(c.group(1), c.group(1)), body).strip()
    chars = _SUP_CHARS if kind == "^" else _SUB_CHARS
    if body and all(ch in chars for ch in body):
        return body.translate(SUP if kind == "^" else SUB)
    return kind + (body if len(body) == 1 else f"({body})")


def _group(s: str) -> str:
    s = s.strip()
    return s if re.fullmatch(r"[\w.\\]+", s) else f"({s})"


def _accent(m: re.Match) -> str:
    """\\tilde O -> Õ: the accent as a combining mark after its base (after a command's name,
    so \\hat{\\theta} becomes θ̂ once the command is replaced)."""
    base = (m.group(2) if m.group(2) is not None else m.group(3)).strip()
    return base + _ACCENT_MARK[m.group(1)]


def _unbrace(arg: str) -> str:
    return arg[1:-1] if arg.startswith("{") else arg


def _math(body: str) -> str:
    """A readable plain-text form of one `$...$` span (what a reader without JavaScript sees)."""
    s = body.replace("\\|", "‖").replace("\\{", LBRACE).replace("\\}", RBRACE)
    for _ in range(3):  # inside out: \frac{\sqrt{x}}{2}
        before = s
        s = _SQRT.sub(lambda m: "√" + _group(m.group(1)), s)
        s = _FRAC.sub(lambda m: f"{_group(m.group(1))}/{_group(m.group(2))}", s)
        s = _BARE_FRAC.sub(lambda m: f"{_group(_unbrace(m.group(1)))}/{_group(_unbrace(m.group(2)))}", s)
        s = _ACCENT.sub(_accent, s)
        s = _SCRIPT.sub(_script, s)
        if s == before:
            break
    s = _BB.sub(lambda m: BLACKBOARD.get(m.group(1) or m.group(2), m.group(1) or m.group(2)), s)
    s = _CAL.sub(lambda m: m.group(1) or m.group(2), s)
    s = _BOLD_CMD.sub(r"\1", s)
    s = _EM_CMD.sub(r"\1", s)
    s = _PLAIN_CMD.sub(r"\1", s)
    s = _SCRIPT.sub(_script, s)
    s = _CMD.sub(lambda c: SYMBOLS.get(c.group(1), c.group(1)), s)
    s = s.replace("{", "").replace("}", "").replace("~", " ")
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", s).strip())  # O + combining tilde -> Õ


def _command(c: re.Match) -> str:
    """A text-mode command: its symbol, keeping the space that ended it."""
    out = SYMBOLS.get(c.group(1), c.group(1))
    return out + " " if c.group(0).endswith(" ") else out


_LINK_SLOT = re.compile("\ue006([\ue010-\ue0ff])\ue007")


def _ref(i: int) -> str:
    return chr(REF_BASE + i) if i < MAX_REFS else ""


@lru_cache(maxsize=8192)
def parse_tex(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Paper text with LaTeX and Markdown made legible, plus the TeX of each math span and each
    http(s) URL it contains. Formatting survives as private-use markers that
    :func:`segments_html` turns into tags after escaping."""
    if not text:
        return "", (), ()
    s = _PRIVATE.sub("", text).replace("\\b{eta}", "β")  # a common arXiv mangling of \beta
    s = _URL_CMD.sub(lambda m: m.group(1) or m.group(2), s)
    urls: list[str] = []

    def keep_url(m: re.Match) -> str:  # set aside before any TeX rule can touch it (~, --, _)
        url = m.group(0).rstrip(".,;:!?)]")
        if len(urls) >= MAX_REFS or not safe_url(url):
            return m.group(0)
        urls.append(url)
        return LINK_ON + _ref(len(urls) - 1) + LINK_OFF + m.group(0)[len(url) :]

    s = _URL.sub(keep_url, s)
    maths: list[str] = []

    def keep_math(m: re.Match) -> str:
        maths.append(m.group(1).strip().replace(LBRACE, "\\{").replace(RBRACE, "\\}"))
        return MATH_ON + _ref(len(maths) - 1) + _math(m.group(1)) + MATH_OFF

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
    return _PRIVATE.sub("", clean_tex(text))


_MARKER_SPLIT = re.compile("([\ue000-\ue0ff])")


def segments_html(segments: list[tuple[str, bool]], maths: tuple[str, ...] = (), urls: tuple[str, ...] = ()) -> Markup:
    """Escape (segment, is_match) runs, wrap matches in <mark>, and turn the formatting markers
    into balanced tags (a snippet window can cut a bold, math or link run in half). `maths` and
    `urls` are the text's TeX sources and URLs from :func:`parse_tex`, which the markers name."""
    pieces: list[tuple[str, bool]] = []
    for text, hit in segments:
        if hit:
            pieces.append((text, True))
        else:
            pieces.extend((x, False) for x in _MARKER_SPLIT.split(text) if x)
    out: list[str] = []
    stack: list[str] = []
    i = 0
    while i < len(pieces):
        piece, hit = pieces[i]
        i += 1
        if hit:
            out.append(f"<mark>{html.escape(_PRIVATE.sub('', piece))}</mark>")
            continue
        tag = _TAGS.get(piece)
        if tag is None:
            if len(piece) > 1 or not ("\ue000" <= piece <= "\ue0ff"):
                out.append(html.escape(piece))
            continue
        kind = tag[1]
        if piece in _OPENERS:
            ref = None
            if i < len(pieces) and not pieces[i][1] and len(pieces[i][0]) == 1 and ord(pieces[i][0]) >= REF_BASE:
                ref = ord(pieces[i][0]) - REF_BASE
                i += 1
            if kind in stack:
                continue
            if kind == "math":
                tex = maths[ref] if ref is not None and ref < len(maths) else None
                out.append(f'<span class="math" data-tex="{html.escape(tex)}">' if tex else tag[0])
            elif kind == "link":
                url = safe_url(urls[ref]) if ref is not None and ref < len(urls) else None
                if url is None:
                    continue  # the start of the URL was cut off: its text stays plain
                out.append(f'<a class="extlink" href="{html.escape(url)}" rel="noopener nofollow">')
            else:
                out.append(tag[0])
            stack.append(kind)
        elif kind in stack:
            while stack:  # close inner runs too, keeping tags nested
                k = stack.pop()
                out.append(_CLOSE_TAG[k])
                if k == kind:
                    break
    while stack:
        out.append(_CLOSE_TAG[stack.pop()])
    return Markup("".join(out))


def matched_stems(*segment_lists: list[tuple[str, bool]]) -> frozenset[str]:
    """The query's stems, recovered from what the searcher highlighted."""
    words = sorted({t for segs in segment_lists for t, hit in segs if hit})
    return stems_of(tuple(words))


def tex_html(text: str, stems: frozenset[str] = frozenset(), links: bool = True) -> Markup:
    """Whole text (a title, a full abstract) as safe HTML, query words highlighted. `links`:
    False inside an element that is itself a link (a card title)."""
    clean, maths, urls = parse_tex(text)
    return segments_html(mark(clean, stems), maths, urls if links else ())


def snippet_html(text: str, stems: frozenset[str], width: int = 320) -> Markup:
    """The best window of an abstract as safe HTML. No links: the snippet sits in a <summary>
    whose click opens the abstract."""
    clean, maths, _ = parse_tex(text)
    return segments_html(snippet(clean, stems, width), maths)


def author_names(p: Paper, cut: int = 10) -> tuple[list[str], bool]:
    """The first `cut` authors, and whether there are more (the card then ends "et al." / "等")."""
    return p.authors[:cut], len(p.authors) > cut or p.authors_truncated


def authors_line(p: Paper, etal: str, cut: int = 10) -> str:
    """First `cut` authors, then "et al." (or "等"), as the seed products show them: the Chinese
    venue search also separates names with ", " and writes "A, B, … J 等"."""
    names, more = author_names(p, cut)
    line = ", ".join(names)
    return f"{line} {etal}" if more else line


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


def safe_links(p: Paper) -> dict[str, str]:
    return {k: v for k, v in ((k, safe_url(v)) for k, v in p.links().items()) if v}


def _bib_escape(s: str) -> str:
    return s.replace("\\", "").replace("{", "").replace("}", "").replace("%", r"\%").replace("&", r"\&")


def bibtex(p: Paper) -> str:
    """The paper's BibTeX entry: the one writer `paperdex export` uses, so the page, the API and
    the MCP tool give the same entry."""
    from ..sources.bibtex import entry

    return entry(p)

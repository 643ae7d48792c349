"""Turning paper text into safe, readable HTML.

Paper text is data, never markup: everything goes through :func:`html.escape` here, and the
only tags that come out are the ones this module writes (``<mark>``, ``<strong>``, ``<em>``,
``<span class="math">``). LaTeX is made legible rather than typeset: ``$\\beta$-VAE`` reads
``β-VAE``, ``\\textbf{X}`` and ``**X**`` become bold X, ``x^{2}`` becomes ``x²``.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from urllib.parse import urlparse

from markupsafe import Markup

from ..paper import Paper
from ..search import mark, snippet, stems_of

# Private-use code points mark where generated markup goes; input text is stripped of them
# first, so a paper cannot inject one.
MATH_ON, MATH_OFF, BOLD_ON, BOLD_OFF, EM_ON, EM_OFF = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005"
_PRIVATE = re.compile("[\ue000-\ue0ff]")
_TAGS = {
    MATH_ON: ('<span class="math">', "math"),
    MATH_OFF: ("</span>", "math"),
    BOLD_ON: ("<strong>", "b"),
    BOLD_OFF: ("</strong>", "b"),
    EM_ON: ("<em>", "em"),
    EM_OFF: ("</em>", "em"),
}
_OPENERS = {MATH_ON: "math", BOLD_ON: "b", EM_ON: "em"}
_CLOSE_TAG = {"math": "</span>", "b": "</strong>", "em": "</em>"}

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
    return kind + (body if len(body) == 1 else f"{{{body}}}")


def _group(s: str) -> str:
    s = s.strip()
    return s if re.fullmatch(r"[\w.\\]+", s) else f"({s})"


def _math(body: str) -> str:
    """A readable plain-text form of one `$...$` span."""
    s = _BB.sub(lambda m: BLACKBOARD.get(m.group(1) or m.group(2), m.group(1) or m.group(2)), body)
    s = _CAL.sub(lambda m: m.group(1) or m.group(2), s)
    s = _FRAC.sub(lambda m: f"{_group(m.group(1))}/{_group(m.group(2))}", s)
    s = _SQRT.sub(r"√(\1)", s)
    s = _BOLD_CMD.sub(r"\1", s)
    s = _EM_CMD.sub(r"\1", s)
    s = _PLAIN_CMD.sub(r"\1", s)
    s = _SCRIPT.sub(_script, s)
    s = _CMD.sub(lambda c: SYMBOLS.get(c.group(1), c.group(1)), s)
    s = s.replace("{", "").replace("}", "").replace("~", " ")
    return re.sub(r"\s+", " ", s).strip()


def _command(c: re.Match) -> str:
    """A text-mode command: its symbol, keeping the space that ended it."""
    out = SYMBOLS.get(c.group(1), c.group(1))
    return out + " " if c.group(0).endswith(" ") else out


@lru_cache(maxsize=8192)
def clean_tex(text: str) -> str:
    """Paper text with LaTeX and Markdown made legible; formatting survives as private-use
    markers that :func:`segments_html` turns into tags after escaping."""
    if not text:
        return ""
    s = _PRIVATE.sub("", text).replace("\\b{eta}", "β")  # a common arXiv mangling of \beta
    s = _MATH.sub(lambda m: MATH_ON + _math(m.group(1)) + MATH_OFF, s)
    s = _BOLD_CMD.sub(lambda m: BOLD_ON + m.group(1) + BOLD_OFF, s)
    s = _EM_CMD.sub(lambda m: EM_ON + m.group(1) + EM_OFF, s)
    s = _PLAIN_CMD.sub(r"\1", s)
    s = _MD_BOLD.sub(lambda m: BOLD_ON + m.group(1) + BOLD_OFF, s)
    s = _CMD.sub(_command, s).replace("{}", "")
    s = s.replace("``", "“").replace("''", "”").replace("~", " ").replace("---", "—").replace("--", "–")
    return re.sub(r"[ \t]+", " ", s).strip()


def plain_tex(text: str) -> str:
    """Like :func:`clean_tex`, without any markup: for <title>, BibTeX, tool output."""
    return _PRIVATE.sub("", clean_tex(text))


_MARKER_SPLIT = re.compile("([\ue000-\ue0ff])")


def segments_html(segments: list[tuple[str, bool]]) -> Markup:
    """Escape (segment, is_match) runs, wrap matches in <mark>, and turn the formatting markers
    into balanced tags (a snippet window can cut a bold or math run in half)."""
    out: list[str] = []
    stack: list[str] = []
    for text, hit in segments:
        if hit:
            out.append(f"<mark>{html.escape(_PRIVATE.sub('', text))}</mark>")
            continue
        for piece in _MARKER_SPLIT.split(text):
            if not piece:
                continue
            tag = _TAGS.get(piece)
            if tag is None:
                if len(piece) > 1 or not ("\ue000" <= piece <= "\ue0ff"):
                    out.append(html.escape(piece))
                continue
            kind = tag[1]
            if piece in _OPENERS:
                if kind not in stack:
                    stack.append(kind)
                    out.append(tag[0])
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


def tex_html(text: str, stems: frozenset[str] = frozenset()) -> Markup:
    """Whole text (a title, a full abstract) as safe HTML, query words highlighted."""
    return segments_html(mark(clean_tex(text), stems))


def snippet_html(text: str, stems: frozenset[str], width: int = 320) -> Markup:
    """The best window of an abstract as safe HTML."""
    return segments_html(snippet(clean_tex(text), stems, width))


def authors_line(p: Paper, etal: str, cut: int = 10) -> str:
    """First `cut` authors, then "et al." (or "等"), as the seed products show them."""
    names = p.authors[:cut]
    more = len(p.authors) > cut or p.authors_truncated
    sep = "、" if etal == "等" else ", "
    line = sep.join(names)
    if more:
        line += etal if etal == "等" else f" {etal}"
    return line


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

"""LaTeX to plain text, in one place, on pylatexenc.

arXiv metadata is TeX: author names in listings carry accents as macros (``Fr\\'ed\\'eric``,
``J{\\o}rgen``), titles and abstracts carry math and markup. Paper records keep titles and
abstracts as the source gave them; names are decoded on the way in (a name is not math, and
matching and display both want ``Frédéric``). Anything that needs readable text from TeX calls
:func:`to_text` rather than a regular expression of its own.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text

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


def decode_name(name: str) -> str:
    """A person's name as text: ``Lor\\'and E\\"otv\\"os`` -> ``Loránd Eötvös``."""
    return to_text(name, keep_math=False).strip(" ,")

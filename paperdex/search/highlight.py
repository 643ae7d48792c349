"""Highlighting as text runs: which words of a title or an abstract match the query's stems
(`mark`), the abstract's best window (`snippet`), and which stems are worth highlighting at all
(`distinguishing`). No HTML: the interfaces render the runs."""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from typing import Any

from paperdex.text import STOPWORDS, WORD, fold, has_cjk, runs, stem

MAX_SNIPPET_SOURCE = 20_000  # characters of an abstract searched for the best window


@lru_cache(maxsize=500_000)
def _word_stem(word: str) -> str:
    return stem(fold(word))


def stems_of(words: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The stems highlighting compares with: what `mark` and `snippet` take."""
    return frozenset(_word_stem(w) for w in words)


@lru_cache(maxsize=1024)
def _finder(stems: frozenset[str]) -> re.Pattern:
    """Words that may have one of these stems in lower-cased ASCII: Porter rewrites only a
    word's ending, so a stem but its last letter begins the word; candidates are stemmed."""
    if not (heads := sorted({re.escape(s[: max(1, len(s) - 1)]) for s in stems if s}, key=len, reverse=True)):
        return re.compile(r"(?!)")  # matches nothing
    return re.compile(r"(?<![a-z0-9])(?:" + "|".join(heads) + r")[a-z0-9]*")


# Two words joined by a hyphen: "Over-smoothing" is marked whole when "oversmoothing" is asked for
_HYPHENATED = re.compile(r"(?<![\w-])([^\W_]+)-([^\W_]+)(?![\w-])")


def _matches(text: str, stems: frozenset[str]) -> list[tuple[int, int]]:
    """Where the words of text whose stem is one of `stems` are ((start, end), in order); a
    hyphenated pair whose joined spelling is asked for is one match (masks.other_spelling); a
    Chinese word asked for (a concept's `zh`) wherever it is written, inside a run of characters
    as the index finds it (`text.cjk_grams`)."""
    words = _finder(stems).finditer(text.lower()) if text.isascii() else WORD.finditer(text)
    found = [m.span() for m in words if m.group() and _word_stem(m.group()) in stems]
    if not text.isascii() and (written := _cjk_spans(text, stems)):
        found = _merged(found + written)
    if not (whole := [m.span() for m in _HYPHENATED.finditer(text) if _word_stem(m[1] + m[2]) in stems]):
        return found
    return sorted(whole + [w for w in found if not any(a <= w[0] < b for a, b in whole)])


def _cjk_spans(text: str, stems: frozenset[str]) -> list[tuple[int, int]]:
    """Where each CJK word of `stems` is written in `text` (a word is not stemmed)."""
    return [m.span() for s in stems if has_cjk(s) for m in re.finditer(re.escape(s), text)]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans in order, those that overlap or touch made one (扩散 inside 扩散模型)."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def mark(text: str, stems: frozenset[str]) -> list[tuple[str, bool]]:
    """Split text into (segment, is_match) runs: a word matches when its stem is one of `stems`."""
    return runs(text, _matches(text, stems)) if stems else [(text, False)]


def snippet(text: str, stems: frozenset[str], width: int = 320) -> list[tuple[str, bool]]:
    """The window of the abstract with the most matched words, cut at word boundaries."""
    if len(text) <= width:
        return mark(text, stems)
    best_start = 0
    if stems:
        positions = [start for start, _ in _matches(text[:MAX_SNIPPET_SOURCE], stems)]
        best = 0
        for i, start in enumerate(positions):  # the matches in the window from each
            if (n := bisect_left(positions, start + width) - i) > best:
                best, best_start = n, max(0, start - 40)
    if best_start:
        sp = text.find(" ", best_start, best_start + 30)
        best_start = sp + 1 if sp >= 0 else best_start
    if (end := best_start + width) < len(text):
        sp = text.rfind(" ", best_start, end)
        end = sp if sp > best_start else end
    head = [("…", False)] if best_start else []
    return head + mark(text[best_start:end], stems) + ([("…", False)] if end < len(text) else [])


def plain(segments: list[tuple[str, bool]]) -> str:
    return "".join(s for s, _ in segments)


# A word in more than this share of the store's papers is not highlighted (docs/web.md)
COMMON_SHARE = 0.15
# Words of no topic rare enough to pass COMMON_SHARE ("use less memory during inference"): not highlighted
EVERYDAY = stems_of(
    "about above across after again against almost already also although always among another around "
    "because before behind below beside besides between beyond during each either else enough even ever "
    "few fewer however less more most much neither never often once only onto other others otherwise over "
    "per perhaps quite rather same several since still such though through throughout thus together too "
    "under until upon very whereas whether while within without yet".split()
)


def distinguishing(stems: frozenset[str], ix: Any = None) -> frozenset[str]:
    """The stems worth highlighting: no stopwords; no EVERYDAY words, nor words of over
    COMMON_SHARE of the papers in `ix`, unless nothing else is left (then the rarest)."""
    keep = frozenset(s for s in stems if s and s not in STOPWORDS and len(s) > 1)
    keep = keep - EVERYDAY or keep
    if ix is None or not keep or not getattr(ix, "n", 0):
        return keep
    share = {s: float(ix.df[t]) / ix.n if (t := ix.term(s)) is not None else 0.0 for s in keep}
    rare = frozenset(s for s in keep if share[s] <= COMMON_SHARE)
    return rare or frozenset([min(keep, key=lambda s: (share[s], s))])

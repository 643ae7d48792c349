"""Milvus decides a multi-word alternative's adjacency from a row's `lex` (title x3, abstract,
authors; `_lex`) where it can: never a different answer from the paper's own text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperdex.backends.milvus import _lex, _lex_adjacent, _spaced, _stems
from paperdex.paper import index_text
from paperdex.search import text_pairs

PAPERS = Path(__file__).parents[1] / "data" / "papers.jsonl"


def row(title: str, abstract: str, authors: list[str]) -> tuple[str, str, str]:
    """lex, ti_lex, au_lex as MilvusBackend writes them (`_row`)."""
    ti, ab, au = _stems(index_text(title)), _stems(index_text(abstract)), _stems(" ".join(authors))
    return _lex(ti, ab, au), _spaced(list(dict.fromkeys(ti)))[:8000], _spaced(list(dict.fromkeys(au)))


def truth(title: str, abstract: str, pairs) -> bool:
    have = text_pairs(title) | text_pairs(abstract)
    return all(p in have for p in pairs)


def candidate_pairs(title: str, abstract: str, authors: list[str]):
    """Pairs of the paper, pairs across its parts (title end -> title start, title end ->
    abstract start, abstract end -> first author) and a pair it does not have."""
    ti, ab, au = _stems(index_text(title)), _stems(index_text(abstract)), _stems(" ".join(authors))
    out = [list(zip(ti, ti[1:], strict=False))[:1], list(zip(ab, ab[1:], strict=False))[-1:]]
    if ti:
        out.append([(ti[-1], ti[0])])
        if ab:
            out.append([(ti[-1], ab[0])])
    if ab and au:
        out.append([(ab[-1], au[0])])
    out.append([("qwxzv", "plorb")])
    return [p for p in out if p]


def test_lex_agrees_with_the_text_on_the_fixture_papers():
    decided = 0
    for line in PAPERS.read_text().splitlines():
        p = json.loads(line)
        lex, ti_lex, au_lex = row(p["title"], p["abstract"], p["authors"])
        for pairs in candidate_pairs(p["title"], p["abstract"], p["authors"]):
            got = _lex_adjacent(pairs, lex, ti_lex, au_lex)
            if got is not None:
                decided += 1
                assert got == truth(p["title"], p["abstract"], pairs), (p["id"], pairs)
    assert decided > 1000  # the row decides nearly always


@pytest.mark.parametrize(
    "title, abstract, authors, pairs, want",
    [
        ("Going large", "Language models here.", ["Ada Lovelace"], [("larg", "languag")], False),
        ("Large language", "Models here.", ["Ada Lovelace"], [("languag", "model")], False),
        ("Large language", "Models here.", ["Ada Lovelace"], [("larg", "languag")], True),
        ("A study", "On large language models.", ["Ada Lovelace"], [("larg", "languag"), ("languag", "model")], True),
        ("Model model model", "Of a model.", ["Ada Lovelace"], [("model", "model")], True),
        ("A model", "Model here.", ["Ada Lovelace"], [("model", "model")], False),
    ],
)
def test_lex_reads_the_parts_of_a_row(title, abstract, authors, pairs, want):
    assert truth(title, abstract, pairs) == want
    assert _lex_adjacent(pairs, *row(title, abstract, authors)) in (want, None)
    assert _lex_adjacent(pairs, *row(title, abstract, authors)) is not None or title.startswith("Model")


def test_rows_that_cannot_say_are_left_to_the_text():
    # a pair whose second word is an author's: the abstract's end or the authors' own words
    assert _lex_adjacent([("sampl", "jo")], *row("A title", "Big sample", ["Jo Large"])) is None
    assert _lex_adjacent([("big", "sampl")], *row("A title", "Big sample", ["Jo Large"])) is True
    # an "s" is the stem "": the row keeps it (Moloch's Bargain)
    assert _lex_adjacent([("moloch", "")], *row("Moloch's bargain", "Text.", ["Ada"])) is True
    # no title
    assert _lex_adjacent([("larg", "languag")], *row("", "Large language models.", ["Ada"])) is None
    # so many authors that `lex` is the distinct stems once: no title three times
    many = [f"Author{i} Name{i}" for i in range(4000)]
    lex, ti_lex, au_lex = row("Large language models", "We study large language models.", many)
    assert len(lex.encode()) <= 65_000
    assert _lex_adjacent([("larg", "languag")], lex, ti_lex, au_lex) is None

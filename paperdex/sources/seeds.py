"""Records of the plain-text result pages the project was seeded from. Their import is gone (a
format the docs never offered, docs/code-notes.md); stores still hold its records, untitled (the
title is the abstract's start, ``extra["seed"]["title_from_abstract"]``) until a merge finds the
real paper by abstract (merge.py), so the source keeps its ranks."""

from paperdex.sources.registry import Source, register, trust

# Untitled, hand-collected records: trusted for the venue area they name and little else.
register(
    Source(
        name="seed",
        ranks={"seed": trust(title=1, abstract=20, authors=10, venue=30, dates=5, links=5, code=5, categories=5)},
    )
)

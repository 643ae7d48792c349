"""What the search engine reads, on any backend: a `Corpus`, the primitives of docs/scale-out.md.

The engine decides what a query means over two snapshots (the lexical arrays and the vectors)
and reads records only to show them or to check what the arrays cannot say; a backend supplies
the primitives, never a second copy of the search: `StoreCorpus` here, MilvusCorpus on Milvus.
Row ids are the system of record's own, in the lexical snapshot's order.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from paperdex.index import lexical
from paperdex.index.snapshots import shared, stamp
from paperdex.paper import Paper
from paperdex.store import Store
from paperdex.text.names import in_one_author

if TYPE_CHECKING:
    from collections.abc import Callable

    from paperdex.search import query as Q


class Vectors(Protocol):
    """The dense side: every paper's vector under one model (paperdex.index.vectors.VectorIndex)."""

    @property
    def model(self) -> str | None:
        """The model the vectors came from (None: unnamed, ranked with no model's floors)."""

    def __len__(self) -> int: ...

    def scan(
        self, q: np.ndarray, depth: int, pool: int, allowed: np.ndarray | None
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], Any]:
        """(the `depth` nearest, the `pool` nearest among `allowed`, state for `cosines_of`)."""

    def cosines_of(self, state: Any, rowids: np.ndarray) -> np.ndarray:
        """The query's cosine with each of `rowids` (NaN for a row with no vector)."""

    def vector(self, rowid: int) -> np.ndarray | None: ...

    def vectors(self, rowids: list[int]) -> dict[int, np.ndarray]:
        """The unit vectors of those of `rowids` that have one."""

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]: ...


class Corpus(Protocol):
    """The primitives one search reads (see the module's docstring)."""

    @property
    def model(self) -> str | None: ...

    def lexical(self) -> lexical.LexIndex:
        """The lexical snapshot searches use now."""

    def vectors(self) -> Vectors | None:
        """The vector index searches use now; None when no paper has a vector."""

    def papers(self, rowids: list[int]) -> dict[int, Paper]: ...

    def get(self, pid: str) -> Paper | None: ...

    def rowid(self, pid: str) -> int | None: ...

    def by_doi(self, doi: str) -> Paper | None:
        """The paper with this DOI (lower case), for a pasted reference."""

    def field_texts(self, rowids: list[int], column: str) -> dict[int, str]:
        """One field's text (title, abstract, or the authors joined by spaces) of these rows."""

    def phrase_rowids(self, t: Q.Text, fts: str, candidates: Callable[[], np.ndarray]) -> list[int]:
        """The rows holding the exact phrase `t` (`fts`: as FTS5; `candidates()`: those could)."""

    def rowids_where(self, kind: str, value: str) -> list[int]:
        """`venue:` / `area:` (substring, as SQLite's LIKE) and `decision:` (exactly)."""


def has_run(seq: list[str], ws: list[str]) -> bool:
    """`ws` in a row somewhere in `seq`."""
    n = len(ws)
    return any(seq[i : i + n] == ws for i in range(len(seq) - n + 1))


def lex_index(source: Store | lexical.Source) -> lexical.LexIndex:
    """The lexical snapshot searches use now: the published one, else one built in memory."""
    sid = source.store_id()
    published = stamp(source.data_dir / lexical.POINTER)
    # none published: the one built in memory is kept only while the store has not changed
    key = (published, sid) if published is not None else (None, sid, source.generation())
    ix = shared(source.data_dir, "lexical", key, lambda: lexical.load(source) or lexical.build(source))
    if ix.store_id != sid:  # a recreated store: never adopt the old index
        ix = shared(source.data_dir, "lexical", (None, sid), lambda: lexical.build(source))
    return ix


class StoreCorpus:
    """The embedded data directory as a `Corpus` (one thread's, as its store)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.papers, self.get, self.rowid = store.get_many, store.get, store.rowid
        self.rowids_where = store.rowids_where  # `venue:`, `area:` (as SQLite's LIKE), `decision:`

    @property
    def model(self) -> str | None:
        return self.store.model

    def lexical(self) -> lexical.LexIndex:
        return lex_index(self.store)

    def vectors(self) -> Vectors | None:
        from paperdex.index.vectors import VectorIndex

        return VectorIndex.current(self.store)

    def by_doi(self, doi: str) -> Paper | None:
        pid = self.store.paper_id_by_doi(doi)
        return self.store.get(pid) if pid else None

    def field_texts(self, rowids: list[int], column: str) -> dict[int, str]:
        texts = self.store.column_texts(rowids, column)
        return {r: " ".join(json.loads(text)) for r, text in texts.items()} if column == "authors" else texts

    def phrase_rowids(self, t: Q.Text, fts: str, candidates: Callable[[], np.ndarray]) -> list[int]:
        rows = self.store.exact_phrase_rowids(fts)
        if t.column != "authors":
            return rows
        names = self.store.column_texts(rows, "authors")  # the column alone: a common name has hundreds of rows
        return sorted(r for r, text in names.items() if in_one_author(json.loads(text), t.words))

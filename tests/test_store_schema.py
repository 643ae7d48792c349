"""Schema 7: the stemmed FTS5 index (`fts`) and its vocab table are gone. Nothing read them
(searches read the lexical snapshot and `fts_exact`); writers dropped them from old stores,
readers refuse an old store and leave it as it is."""

import sqlite3

import pytest

from paperdex.paper import Paper
from paperdex.search import Searcher
from paperdex.store import SCHEMA_VERSION, Store, StoreError


def _tables(path) -> set[str]:
    with sqlite3.connect(path) as c:
        return {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _papers() -> list[Paper]:
    return [
        Paper(id="a1", title="Decaying weights", abstract="weight decay is studied here", published="2025-01-02"),
        Paper(id="a2", title="Sparse attention", abstract="attention made sparse", published="2025-01-03"),
    ]


def _as_version(path, version: int, *undo: str) -> None:
    """The store at `path` as schema `version` left it (`undo`: the statements that take the newer
    schema's parts away), and a reader refusing it: only a writer migrates."""
    with sqlite3.connect(path / "paperdex.db") as c:
        for sql in undo:
            c.execute(sql)
        c.execute(f"PRAGMA user_version = {version}")
    with pytest.raises(StoreError, match=f"schema version {version}, older than this paperdex reads"):
        Store(path, readonly=True)


def test_a_new_store_has_no_stemmed_index_and_no_vocab(tmp_path):
    with Store(tmp_path) as s:
        s.upsert(_papers())
        assert s.schema_version() == SCHEMA_VERSION >= 7
        names = {r[0] for r in s.conn.execute("SELECT name FROM sqlite_temp_master")}
        assert "fts_vocab" not in names
        assert [h.paper.id for h in Searcher(s).search('"weight decay"', mode="lexical").hits] == ["a1"]
    tables = _tables(tmp_path / "paperdex.db")
    assert "fts_exact" in tables and "fts" not in tables


def test_a_writer_drops_the_stemmed_index_of_a_version_6_store_and_a_reader_refuses_it(tmp_path):
    with Store(tmp_path) as s:
        s.upsert(_papers())
    _as_version(tmp_path, 6, "CREATE VIRTUAL TABLE fts USING fts5(title, abstract, authors, categories, content='')")
    assert "fts" in _tables(tmp_path / "paperdex.db")
    with Store(tmp_path) as w:
        assert w.schema_version() == SCHEMA_VERSION
        w.upsert([Paper(id="a3", title="Weight decay again", abstract="more decay", published="2025-01-04")])
        assert {h.paper.id for h in Searcher(w).search('"weight decay"', mode="lexical").hits} == {"a1", "a3"}
    assert "fts" not in _tables(tmp_path / "paperdex.db")


def test_a_version_8_store_gains_the_alias_table_and_a_move_is_remembered(tmp_path):
    """Schema 9: the ids merges moved (paper_aliases). A version 8 store is refused by a reader and
    migrated by a writer; the ids it lost before cannot come back, later moves are kept."""
    with Store(tmp_path) as s:
        s.upsert(_papers())
    _as_version(tmp_path, 8, "DROP TABLE paper_aliases")
    with Store(tmp_path) as w:
        assert w.schema_version() == SCHEMA_VERSION >= 9 and w.resolve("a1") == "a1"
        w.upsert([Paper(id="2501.00001", title="Decaying weights", published="2025-01-02")], moved={"a1": "2501.00001"})
        assert w.resolve("a1") == "2501.00001" and w.get("a1").id == "2501.00001" and w.count() == 2
    with Store(tmp_path, readonly=True) as r:
        assert r.rowid("a1") == r.rowid("2501.00001")


def test_a_version_9_store_gains_the_doi_index_with_the_dois_of_its_papers(tmp_path):
    """Schema 10: every DOI a paper carries (paper_dois), filled for the papers a version 9 store
    holds, so a BibTeX entry's DOI and a `doi:` id are found once a writer has migrated it."""
    bib = Paper(id="bib:k", title="Kernels", sources=["bibtex"], extra={"bibtex": {"doi": "10.1162/NECO.1998"}})
    with Store(tmp_path) as s:
        s.upsert([*_papers(), bib, Paper(id="doi:10.1000/XYZ", title="By its id")])
    _as_version(tmp_path, 9, "DROP TABLE paper_dois")
    with Store(tmp_path) as w:
        assert w.schema_version() == SCHEMA_VERSION == 10
    with Store(tmp_path, readonly=True) as r:
        assert r.paper_id_by_doi("10.1162/neco.1998") == "bib:k"
        assert r.paper_id_by_doi("10.1000/xyz") == "doi:10.1000/XYZ"  # an id in upper case too
        assert [h.paper.id for h in Searcher(r).search("https://doi.org/10.1162/NECO.1998").hits] == ["bib:k"]
        plan = r.conn.execute("EXPLAIN QUERY PLAN SELECT paper FROM paper_dois WHERE doi = 'x'").fetchone()[3]
        assert "USING PRIMARY KEY" in plan  # an index look-up, not a scan of every paper's extra

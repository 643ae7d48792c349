"""All storage behind one module: one data directory, one SQLite database (WAL), the single
source of truth, plus derived snapshots (``lexical.py``, ``vectors.py``) published from it.
Writers commit each batch in one transaction; WAL gives every reader the last committed one.
A data directory::

    paperdex.db          papers, their categories, the exact-phrase FTS5 index, vectors (int8
                         blobs), the library, summaries, state
    lexical.N/           published lexical snapshot (derived; safe to delete)
    vectors.json         tells readers the vectors changed (vectors.py); SQLite holds them
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, fields
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from paperdex.index.lexical import date_int
from paperdex.index.snapshots import hold_writer
from paperdex.paper import Paper, doi_of, dois, index_text, is_stale_copy

SCHEMA_VERSION = 10  # the one schema a reader reads; a writer migrates an older store first


FTS_COLUMNS = ("title", "abstract", "authors", "categories")  # of both full-text indexes
_FTS_COLS = ", ".join(FTS_COLUMNS)
# Each migration takes a schema from version i to i+1. Never edit a released one: add another.
MIGRATIONS: list[str] = [
    # 0 -> 1: papers, categories, stemmed FTS, vectors, key/value state
    f"""
    CREATE TABLE papers (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        authors TEXT NOT NULL,          -- JSON list, paper order
        abstract TEXT NOT NULL,
        categories TEXT NOT NULL,       -- JSON list, primary first
        venue TEXT, venue_area TEXT,
        published TEXT, listed TEXT, updated TEXT,
        date TEXT,                      -- listed, else published: sort and date: filter
        abs_url TEXT, pdf_url TEXT, code_url TEXT, comment TEXT,
        authors_truncated INTEGER NOT NULL DEFAULT 0,
        sources TEXT NOT NULL,          -- JSON list
        extra TEXT NOT NULL,            -- JSON object, source-specific fields
        content_hash TEXT NOT NULL,
        text_hash TEXT NOT NULL
    );
    CREATE INDEX papers_date ON papers(date);
    CREATE INDEX papers_venue ON papers(venue);
    CREATE INDEX papers_area ON papers(venue_area);
    CREATE TABLE paper_categories (
        paper INTEGER NOT NULL REFERENCES papers(rowid) ON DELETE CASCADE,
        category TEXT NOT NULL,
        PRIMARY KEY (category, paper)
    ) WITHOUT ROWID;
    CREATE INDEX paper_categories_paper ON paper_categories(paper);
    CREATE VIRTUAL TABLE fts USING fts5({_FTS_COLS}, content='',
        tokenize='porter unicode61 remove_diacritics 2');
    CREATE TABLE vectors (
        paper INTEGER PRIMARY KEY REFERENCES papers(rowid) ON DELETE CASCADE,
        text_hash TEXT NOT NULL,
        vec BLOB NOT NULL               -- float16, L2-normalised (int8 from version 5)
    );
    CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # 1 -> 2: an unstemmed index so that "quoted phrases" match exactly
    f"""
    CREATE VIRTUAL TABLE fts_exact USING fts5({_FTS_COLS}, content='',
        tokenize='unicode61 remove_diacritics 2');
    INSERT INTO fts_exact(rowid, {_FTS_COLS}) SELECT rowid, {_FTS_COLS} FROM fts_source;
    """,
    # 2 -> 3: the store's identity and a change counter (bumped by every write): which snapshot is current
    """
    INSERT OR IGNORE INTO state VALUES ('store_id', lower(hex(randomblob(16))));
    INSERT OR IGNORE INTO state VALUES ('generation', '0');
    """,
    # 3 -> 4: the library (library.py): tags, "not interested" marks, saved searches, web tokens
    """
    CREATE TABLE tags (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        created TEXT NOT NULL
    );
    CREATE TABLE tag_papers (
        tag INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
        paper TEXT NOT NULL,            -- paper id (kept across re-ingests and exports)
        added TEXT NOT NULL,
        PRIMARY KEY (tag, paper)
    ) WITHOUT ROWID;
    CREATE INDEX tag_papers_paper ON tag_papers(paper);
    CREATE TABLE dismissed (paper TEXT PRIMARY KEY, added TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE saved_searches (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        query TEXT NOT NULL,
        params TEXT NOT NULL,           -- JSON: mode, filters, language
        created TEXT NOT NULL,
        seen_rowid INTEGER NOT NULL,    -- the newest paper (rowid) at the last visit
        seen_at TEXT
    );
    CREATE TABLE tokens (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,      -- sha256 of the token; the token itself is never stored
        created TEXT NOT NULL
    );
    """,
    # 4 -> 5: vectors as int8 (see `quantize`): half the bytes (what it costs: docs/performance.md)
    """
    UPDATE vectors SET vec = int8_from_f16(vec);
    """,
    # 5 -> 6: summaries (summaries.py) by paper id (kept by a re-ingest) and language, shown while text_hash matches
    """
    CREATE TABLE IF NOT EXISTS summaries (
        paper TEXT NOT NULL,            -- paper id
        lang TEXT NOT NULL,             -- 'en' or 'zh'
        model TEXT NOT NULL,            -- the model that wrote it (shown beside it)
        text_hash TEXT NOT NULL,        -- Paper.text_hash() of the text it was made from
        body TEXT NOT NULL,             -- JSON: tldr, motivation, method, result, conclusion
        tokens INTEGER NOT NULL DEFAULT 0,
        created TEXT NOT NULL,          -- UTC ISO time; the daily budget counts these
        PRIMARY KEY (paper, lang)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS summaries_created ON summaries(created);
    """,
    # 6 -> 7: the stemmed index of version 1 goes: searches read lexical.py's snapshot and fts_exact
    """
    DROP TABLE IF EXISTS fts;
    """,
    # 7 -> 8: the exact-phrase index again, a lone Greek letter held as its name (text.greek_names:
    # "β-VAE" finds $\beta$-VAE and the reverse)
    f"""
    DROP TABLE IF EXISTS fts_exact;
    CREATE VIRTUAL TABLE fts_exact USING fts5({_FTS_COLS}, content='',
        tokenize='unicode61 remove_diacritics 2');
    INSERT INTO fts_exact(rowid, {_FTS_COLS}) SELECT rowid, {_FTS_COLS} FROM fts_source;
    """,
    # 8 -> 9: the ids papers had before a merge moved them to another (Store.resolve). Stores
    # that merged before it have lost those ids: nothing recorded them
    """
    CREATE TABLE IF NOT EXISTS paper_aliases (
        old TEXT PRIMARY KEY,           -- an id a paper had; never the id of a stored paper
        paper TEXT NOT NULL             -- the id it has now
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS paper_aliases_paper ON paper_aliases(paper);
    """,
    # 9 -> 10: every DOI a paper carries (paper.dois: its id, extra.doi, each source's), kept at
    # write time: a pasted DOI found through an index, where reading extra.doi of every paper
    # took 127 ms on 63k papers and missed the DOIs of BibTeX entries and of `doi:` ids
    """
    CREATE TABLE IF NOT EXISTS paper_dois (
        doi TEXT NOT NULL,              -- lower case
        paper INTEGER NOT NULL REFERENCES papers(rowid) ON DELETE CASCADE,
        PRIMARY KEY (doi, paper)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS paper_dois_paper ON paper_dois(paper);
    INSERT OR IGNORE INTO paper_dois SELECT j.value, p.rowid FROM papers p, json_each(dois_json(p.id, p.extra)) j;
    """,
]


# Migrations that free much of the file, which SQLite does not give back: rewritten after them
VACUUM_AFTER = {5, 7}


def quantize(v: np.ndarray) -> np.ndarray:
    """int8 rows, each scaled to a largest component of ±127 (cosine ignores the scale)."""
    v = np.asarray(v, dtype=np.float32)
    peak = np.abs(v).max(axis=-1, keepdims=True)
    return np.round(v * (127 / np.where(peak > 0, peak, 1))).astype(np.int8)


def _int8_from_f16(blob: bytes) -> bytes:
    return quantize(np.frombuffer(blob, dtype=np.float16)).tobytes()


def _dois_json(pid: str, extra: str) -> str:
    """A stored row's DOIs (paper.dois) as a JSON list, for the migration that indexes them."""
    return json.dumps(dois(pid, json.loads(extra or "{}")))


VECTORS_NEXT = "vectors_next"  # a switch's new vectors, filled while the old ones keep serving


def _missing_sql(switch: bool) -> str:
    """The papers without a current vector (of a switch's if `switch`)."""
    table = VECTORS_NEXT if switch else "vectors"
    return f"FROM papers p LEFT JOIN {table} v ON v.paper = p.rowid WHERE v.paper IS NULL OR v.text_hash != p.text_hash"


# A paper's community signals, kept in its `extra` JSON by the sources that bring them.
_UPVOTES = "CAST(json_extract(p.extra, '$.hf.upvotes') AS INTEGER)"
_STARS = "CAST(coalesce(json_extract(p.extra, '$.code_stars'), json_extract(p.extra, '$.hf.github_stars')) AS INTEGER)"
_BY_SIGNAL = f"{_UPVOTES} DESC NULLS LAST, {_STARS} DESC NULLS LAST"  # most upvoted, then most starred
# The orders the feed lists a period in (the last two then newest first)
PERIOD_ORDERS = {
    "listing": "p.rowid",
    "newest": "p.date DESC, p.rowid",
    "upvotes": f"{_UPVOTES} DESC NULLS LAST, p.date DESC, p.rowid",
    "stars": f"{_STARS} DESC NULLS LAST, p.date DESC, p.rowid",
}


@dataclass(frozen=True)
class Period:
    """The papers dated `first` to `last`, with upvotes if `upvoted`, of `rowids` if given."""

    first: str
    last: str
    upvoted: bool = False
    rowids: tuple[int, ...] | None = None

    def where(self) -> tuple[str, list]:
        one_day = self.first == self.last
        sql, params = ("p.date = ?", [self.first]) if one_day else ("p.date BETWEEN ? AND ?", [self.first, self.last])
        if self.upvoted:
            sql += f" AND {_UPVOTES} > 0"
        if self.rowids is not None:
            sql += " AND p.rowid IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(self.rowids)))
        return sql, params


class PrefixCounts:
    """A word-count table in a SQLite file of its own (jieba's prefix dictionary), as a dict."""

    def __init__(self, db: Path) -> None:
        self._c = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()

    def total(self) -> int:
        """The total written with the counts (raises sqlite3.Error or TypeError on a bad file)."""
        with self._lock:
            return self._c.execute("SELECT v FROM meta WHERE k = 'total'").fetchone()[0]

    def get(self, key: str, default=None):
        with self._lock:
            row = self._c.execute("SELECT f FROM freq WHERE w = ?", (key,)).fetchone()
        return default if row is None else row[0]

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key: str) -> int:
        if (v := self.get(key)) is None:
            raise KeyError(key)
        return v

    @staticmethod
    def write(db: Path, counts: dict[str, int], total: int) -> None:
        """Write `counts` and `total` to a new file `db` (which must not exist yet)."""
        with closing(sqlite3.connect(db)) as c:
            c.execute("CREATE TABLE freq (w TEXT PRIMARY KEY, f INTEGER NOT NULL) WITHOUT ROWID")
            c.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
            c.executemany("INSERT INTO freq VALUES (?, ?)", counts.items())
            c.execute("INSERT INTO meta VALUES ('total', ?)", (total,))
            c.commit()


class StoreError(RuntimeError):
    """A data directory problem a user can act on."""


class OverTime(Exception):
    """A statement still running at the deadline of `Store.time_limit`: SQLite stopped it."""


_STEPS = 1000  # SQLite VM steps between calls of the time limit's handler (datasette's figure)


# a paper's current vector: one made from its present text
_CURRENT_VECTOR = "LEFT JOIN vectors v ON v.paper = p.rowid AND v.text_hash = p.text_hash"
_WITH_VECTOR = f"SELECT p.*, v.vec AS vec FROM papers p {_CURRENT_VECTOR}"
# the id :id names: an alias's paper, else itself (an alias is never a stored paper's id)
_RESOLVED = "coalesce((SELECT a.paper FROM paper_aliases a WHERE a.old = :id), :id)"


@dataclass
class IngestSummary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    errors: list[str] = field(default_factory=list)
    merged: int = 0  # incoming records that joined an existing paper (sources.merge)

    def __add__(self, other: IngestSummary) -> IngestSummary:
        return IngestSummary(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("added", "updated", "unchanged", "rejected", "merged")}

    def last_of_each(self, batch: list[Paper]) -> dict[str, Paper]:
        """The batch's papers by id, the last winning, those before it counted (every backend's rule)."""
        latest: dict[str, Paper] = {}
        for p in batch:
            if (prev := latest.get(p.id)) is not None:
                same = prev.content_hash() == p.content_hash()
                self.unchanged += same
                self.updated += not same
            latest[p.id] = p
        return latest


def fts_texts(p: Paper) -> dict[str, str]:
    """A paper's texts as the exact-phrase index holds them, by column."""
    texts = (index_text(p.title), index_text(p.abstract), " ; ".join(p.authors), " ".join(p.categories))
    return dict(zip(FTS_COLUMNS, texts, strict=True))


_JSON_COLS = ("authors", "categories", "sources", "extra")


def _row(p: Paper) -> dict:
    return {f.name: getattr(p, f.name) for f in fields(Paper)} | dict(
        authors=json.dumps(p.authors, ensure_ascii=False),
        categories=json.dumps(p.categories),
        sources=json.dumps(p.sources),
        extra=json.dumps(p.extra, ensure_ascii=False, sort_keys=True),
        authors_truncated=int(p.authors_truncated),
        date=p.date,
        content_hash=p.content_hash(),
        text_hash=p.text_hash(),
    )


_COLS = list(_row(Paper(id="x", title="x")).keys())
_SETS, _PARAMS = ", ".join(f"{k} = :{k}" for k in _COLS), ", ".join(f":{k}" for k in _COLS)


_PAPER_FIELDS = tuple(f.name for f in fields(Paper))
_decode = json.JSONDecoder().decode  # json.loads's own decoder, without its per-call checks


def paper_from_row(row: sqlite3.Row) -> Paper:
    d = {k: row[k] for k in _PAPER_FIELDS}
    d.update({k: _decode(d[k]) for k in _JSON_COLS}, authors_truncated=bool(d["authors_truncated"]))
    return Paper(**d)


class Store:
    """A paperdex data directory. Cheap to open; one per thread (as its connection)."""

    def __init__(self, data_dir: str | Path, *, readonly: bool = False) -> None:
        if not data_dir:
            raise StoreError("no data directory given")
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / "paperdex.db"
        self.readonly = readonly
        self._writer: int | None = None
        self._deadline: float | None = None  # of the time limit the statements run within
        if readonly and not self.path.is_file():
            raise StoreError(f"no paperdex data in {self.data_dir} (run `paperdex ingest` first)")
        if not readonly:
            try:
                self.data_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot use {self.data_dir} as a data directory: {e.strerror or e}") from None
            # held until close: a server leaves a live writer's unpublished papers to it
            self._writer = hold_writer(self.data_dir)
        try:
            self.conn = self._connect()
        except sqlite3.DatabaseError as e:
            self._let_go_of_writer()
            raise StoreError(f"cannot open {self.path}: {e}") from None
        except BaseException:
            self._let_go_of_writer()
            raise

    def _connect(self) -> sqlite3.Connection:
        """A reader opens `mode=ro` and never writes (a read-only or full disk will do)."""
        target = f"{self.path.absolute().as_uri()}?mode=ro" if self.readonly else self.path
        conn = self.conn = sqlite3.connect(target, uri=self.readonly, timeout=30, check_same_thread=False)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            if self.readonly:
                self._check_readable()
            else:
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                self.migrate()
        except BaseException:
            conn.close()
            raise
        return conn

    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def _too_new(self, version: int) -> StoreError:
        return StoreError(
            f"{self.path} has schema version {version}; this paperdex knows up to {SCHEMA_VERSION}. Upgrade paperdex."
        )

    def _check_readable(self) -> None:
        """A reader takes the current schema only (no read has a branch per version)."""
        if (version := self.schema_version()) > SCHEMA_VERSION:
            raise self._too_new(version)
        if version == 0:
            raise StoreError(f"{self.path} is empty or not a paperdex store (run `paperdex ingest` first)")
        if version < SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, older than this paperdex reads; "
                "run `paperdex migrate` (or any write command, such as `paperdex ingest`) first"
            )

    def migrate(self) -> None:
        """Run the migrations, each in a transaction that reads the version after BEGIN IMMEDIATE."""
        if self.readonly:
            raise StoreError("a read-only store does not migrate; open it for writing")
        while True:
            with self.write_transaction():
                if (version := self.schema_version()) > SCHEMA_VERSION:
                    raise self._too_new(version)
                if version == SCHEMA_VERSION:
                    return
                if "fts_source" in (script := MIGRATIONS[version]):
                    self._create_fts_source()
                self.conn.create_function("int8_from_f16", 1, _int8_from_f16, deterministic=True)
                self.conn.create_function("dois_json", 2, _dois_json, deterministic=True)
                for stmt in _split_sql(script):
                    self.conn.execute(stmt)
                self.conn.execute(f"PRAGMA user_version = {version + 1}")
            if version + 1 in VACUUM_AFTER:
                self.conn.execute("VACUUM")

    def _create_fts_source(self) -> None:
        """A temp view of index text per paper, for migrations that build a new FTS index."""
        self.conn.create_function("index_text", 1, index_text, deterministic=True)
        self.conn.execute(
            "CREATE TEMP VIEW IF NOT EXISTS fts_source AS SELECT rowid, index_text(title) AS title, "
            "index_text(abstract) AS abstract, "
            "(SELECT group_concat(value, ' ; ') FROM json_each(papers.authors)) AS authors, "
            "(SELECT group_concat(value, ' ') FROM json_each(papers.categories)) AS categories "
            "FROM papers"
        )

    def upsert(
        self, papers: Iterable[Paper], batch_size: int = 2000, moved: dict[str, str] | None = None
    ) -> IngestSummary:
        """Insert new papers, replace changed ones, skip identical ones, a transaction a batch.
        `moved`: old id -> new id of papers a merge moved (written in the last batch's
        transaction, with the paper under its new id when that batch holds it: `_move`)."""
        total, it = IngestSummary(), iter(papers)
        batch = list(islice(it, batch_size))
        while batch:
            following = list(islice(it, batch_size))
            total = total + self._upsert_batch(batch, moved if not following else None)
            batch = following
        return total

    def _upsert_batch(self, batch: list[Paper], moved: dict[str, str] | None = None) -> IngestSummary:
        s = IngestSummary()
        latest = s.last_of_each(batch)
        c = self.conn
        with self.write_transaction():
            gone = {new for old, new in (moved or {}).items() if self._move(old, new)}
            old = {r["id"]: r for r in self._rows_in("SELECT * FROM papers WHERE id IN ({})", list(latest))}
            inserts, written = [], []  # written: (rowid, paper) of every row updated or added
            for pid, p in latest.items():
                row = _row(p)
                if (prev := old.get(pid)) is None:
                    inserts.append(row)
                    s.added += 1
                    continue
                if prev["content_hash"] == row["content_hash"] or is_stale_copy(p, prev["updated"]):
                    s.unchanged += 1
                    continue
                rowid = prev["rowid"]
                self._fts_delete(rowid, paper_from_row(prev))
                c.execute(f"UPDATE papers SET {_SETS} WHERE rowid = {rowid}", row)
                c.execute("DELETE FROM paper_categories WHERE paper = ?", (rowid,))
                if prev["text_hash"] != row["text_hash"]:
                    if c.execute("DELETE FROM vectors WHERE paper = ?", (rowid,)).rowcount:
                        self._bump("vectors_epoch")
                written.append((rowid, p))
                s.updated += 1
            if inserts:
                c.executemany(f"INSERT INTO papers ({', '.join(_COLS)}) VALUES ({_PARAMS})", inserts)
                c.executemany("DELETE FROM paper_aliases WHERE old = ?", [(r["id"],) for r in inserts])
                moved_here = sum(r["id"] in gone for r in inserts)  # a stored paper under a new id: updated
                s.added, s.updated = s.added - moved_here, s.updated + moved_here
                q = "SELECT id, rowid FROM papers WHERE id IN ({})"
                new = {r[0]: r[1] for r in self._rows_in(q, [r["id"] for r in inserts])}
                written += [(new[r["id"]], latest[r["id"]]) for r in inserts]
            cats = [(rowid, cat) for rowid, p in written for cat in p.categories]
            c.executemany("INSERT OR IGNORE INTO paper_categories VALUES (?, ?)", cats)
            fts_rows = [(rowid, *fts_texts(p).values()) for rowid, p in written]
            c.executemany(f"INSERT INTO fts_exact(rowid, {_FTS_COLS}) VALUES (?, ?, ?, ?, ?)", fts_rows)
            self._keep_dois(written)
            if written:
                self._bump("generation")
        return s

    def _keep_dois(self, written: list[tuple[int, Paper]]) -> None:
        """The DOIs of the rows just written (paper.dois), for `paper_id_by_doi`: a changed
        record's old ones go (a deleted paper's go with it, ON DELETE CASCADE)."""
        c = self.conn
        c.executemany("DELETE FROM paper_dois WHERE paper = ?", [(rowid,) for rowid, _ in written])
        rows = [(doi, rowid) for rowid, p in written for doi in dois(p.id, p.extra)]
        c.executemany("INSERT OR IGNORE INTO paper_dois VALUES (?, ?)", rows)

    def _fts_delete(self, rowid: int, p: Paper) -> None:
        self.conn.execute(
            f"INSERT INTO fts_exact(fts_exact, rowid, {_FTS_COLS}) VALUES ('delete', ?, ?, ?, ?, ?)",
            (rowid, *fts_texts(p).values()),
        )

    def delete(self, pid: str) -> bool:
        with self.conn:
            if not self._delete_row(pid):
                return False
            self._bump("generation")
        return True

    def _delete_row(self, pid: str) -> bool:
        """Delete the paper stored under exactly `pid` (its vector and categories go with it)."""
        if (row := self.conn.execute("SELECT * FROM papers WHERE id = ?", (pid,)).fetchone()) is None:
            return False
        self._fts_delete(row["rowid"], paper_from_row(row))
        self.conn.execute("DELETE FROM papers WHERE rowid = ?", (row["rowid"],))
        self._bump("vectors_epoch")
        return True

    # what is keyed by paper id besides the papers: the library (library.py) and summaries
    _KEYED_BY_ID = ("tag_papers", "dismissed", "summaries")

    def _move(self, old: str, new: str) -> bool:
        """A merge moved the paper `old` to the id `new` (an OpenReview, bib: or doi: record joined
        by its arXiv record): in the merge's own transaction, the row under `old` goes, `old`
        (and every id that named it) becomes an alias of `new`, and the tags, "not interested"
        marks and summaries holding `old` hold `new`. One write, so no reader ever sees a tag of
        a paper that is gone, and readers need no rule of their own: the library always holds
        the ids papers have now, and an id from outside (a link, a `show`, an export, an API
        call) is found through the alias by `resolve`, the one look-up of an id. True when a
        paper was stored under `old`."""
        if old == new:
            return False
        if stored := self._delete_row(old):
            self._bump("generation")
        c = self.conn
        c.execute("UPDATE paper_aliases SET paper = ? WHERE paper = ?", (new, old))
        c.execute("INSERT OR REPLACE INTO paper_aliases VALUES (?, ?)", (old, new))
        c.execute("DELETE FROM paper_aliases WHERE old = ?", (new,))
        for table in self._KEYED_BY_ID:
            c.execute(f"UPDATE OR IGNORE {table} SET paper = ? WHERE paper = ?", (new, old))
            c.execute(f"DELETE FROM {table} WHERE paper = ?", (old,))  # `new` had it already
        return stored

    def _rows_in(self, sql: str, values: Sequence) -> Iterator[sqlite3.Row]:
        """The rows of `sql` for every value, its `{}` filled with placeholders, 500 a statement."""
        values = list(values)
        for i in range(0, len(values), 500):
            chunk = values[i : i + 500]
            yield from self.conn.execute(sql.format(",".join("?" * len(chunk))), chunk)

    def _value(self, sql: str, params: Sequence | dict[str, Any] = ()) -> Any:
        return row[0] if (row := self.conn.execute(sql, params).fetchone()) else None

    def _firsts(self, sql: str, params: Sequence = ()) -> list:
        """The first column of every row of `sql`."""
        return [r[0] for r in self.conn.execute(sql, params)]

    def get(self, pid: str) -> Paper | None:
        """The paper `pid` names (an id it had before a merge moved it, or `doi:` and one of its
        DOIs, names it too: `resolve`)."""
        row = self.conn.execute(f"SELECT * FROM papers WHERE id = {_RESOLVED}", {"id": pid}).fetchone()
        if row is None and (doi := doi_id(pid)):
            row = self.conn.execute("SELECT * FROM papers WHERE id = ?", (self.paper_id_by_doi(doi),)).fetchone()
        return paper_from_row(row) if row else None

    def resolve(self, pid: str) -> str | None:
        """The id of the stored paper `pid` names: `pid` itself, or the id a merge moved it to
        (`_move`), or for `doi:DOI` (paper.typed_id's form of a typed DOI) the paper with that
        DOI (`paper_id_by_doi`); None when it names none. Every look-up of an id goes through
        this rule, so `show`, /paper/, the API and MCP find a paper by its DOI as search does."""
        found = self._value(f"SELECT id FROM papers WHERE id = {_RESOLVED}", {"id": pid})
        return found or ((doi := doi_id(pid)) and self.paper_id_by_doi(doi)) or None

    def aliases(self) -> dict[str, str]:
        """Every id a merge moved (old id -> the id it names now, `_move`): what `migrate --to`
        gives a backend's copy, so an old id names the paper there too."""
        return dict(self.conn.execute("SELECT old, paper FROM paper_aliases").fetchall())

    def sources_of(self, ids: Sequence[str]) -> dict[str, list[str]]:
        return {r[0]: json.loads(r[1]) for r in self._rows_in("SELECT id, sources FROM papers WHERE id IN ({})", ids)}

    def get_many(self, rowids: list[int]) -> dict[int, Paper]:
        q = "SELECT * FROM papers WHERE rowid IN ({})"
        return {r["rowid"]: paper_from_row(r) for r in self._rows_in(q, rowids)}

    def rowid(self, pid: str) -> int | None:
        """The rowid of the paper `pid` names (`resolve`)."""
        return self._value("SELECT rowid FROM papers WHERE id = ?", (found,)) if (found := self.resolve(pid)) else None

    def iter_papers(self) -> Iterator[Paper]:
        return map(paper_from_row, self.conn.execute("SELECT * FROM papers ORDER BY rowid"))

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM papers").fetchone()[0]

    def get_state(self, key: str) -> str | None:
        return self._value("SELECT value FROM state WHERE key = ?", (key,))

    def set_state(self, key: str, value: str) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (key, value))

    def put_summary(self, pid: str, lang: str, model: str, text_hash: str, body: dict, tokens: int = 0) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                (pid, lang, model, text_hash, json.dumps(body, ensure_ascii=False), int(tokens)),
            )

    def summaries(self, ids: Iterable[str]) -> dict[str, dict[str, dict]]:
        """{paper id: {lang: {model, text_hash, created, tokens, **body}}} of current texts."""
        out: dict[str, dict[str, dict]] = {}
        q = (
            "SELECT s.* FROM summaries s JOIN papers p ON p.id = s.paper AND p.text_hash = s.text_hash "
            "WHERE s.paper IN ({})"
        )
        for r in self._rows_in(q, list(dict.fromkeys(ids))):
            meta = {k: r[k] for k in ("model", "text_hash", "tokens", "created")}
            out.setdefault(r["paper"], {})[r["lang"]] = {**json.loads(r["body"]), **meta}
        return out

    def summarized_since(self, since: str) -> int:
        """How many papers got a summary written at or after `since` (UTC ISO): the daily budget."""
        return self._value("SELECT count(DISTINCT paper) FROM summaries WHERE created >= ?", (since,))

    @property
    def model(self) -> str | None:
        """The model every stored vector came from; queries must be embedded with it."""
        return self.get_state("model")

    def _claim_model(self, model: str) -> None:
        if (current := self.model) and current != model and self.vector_count():
            raise StoreError(
                f"this store holds vectors from {current}; refusing to mix in {model}. "
                f"Run `paperdex embed --reset --model {model}` to re-embed everything."
            )
        self.conn.execute("INSERT OR REPLACE INTO state VALUES ('model', ?)", (model,))

    def add_vectors(self, model: str, items: list[tuple[int, str, np.ndarray]], *, switch: bool = False) -> None:
        """items: (paper rowid, text_hash, vector); with `switch`, into a switch's table."""
        rows = [(r, h, quantize(v).tobytes()) for r, h, v in items]
        with self.write_transaction():
            if switch:
                self.conn.executemany(f"INSERT OR REPLACE INTO {VECTORS_NEXT} VALUES (?, ?, ?)", rows)
                return
            self._claim_model(model)
            self.conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            self._bump("vectors_epoch")

    def reset_vectors(self) -> None:
        with self.conn:
            self.conn.execute("DELETE FROM vectors")
            self.conn.execute("DELETE FROM state WHERE key = 'model'")
            self._bump("vectors_epoch")

    def vector_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM vectors").fetchone()[0]

    def vector_dim(self) -> int | None:
        row = self.conn.execute("SELECT vec FROM vectors LIMIT 1").fetchone()
        return None if row is None else self.vectors_from_blobs([row[0]]).shape[1]

    def missing_vectors(self, limit: int, *, switch: bool = False) -> list[tuple[int, str, str, str]]:
        """(rowid, text_hash, title, abstract) of papers without a current vector, oldest first."""
        return self.conn.execute(
            f"SELECT p.rowid, p.text_hash, p.title, p.abstract {_missing_sql(switch)} ORDER BY p.rowid LIMIT ?",
            (limit,),
        ).fetchall()

    def load_vectors(self, chunk: int = 50_000) -> tuple[np.ndarray, np.ndarray]:
        """All (rowids int64, vectors int8) in rowid order, a chunk at a time into one array."""
        with self.read_snapshot():
            n = self.vector_count()
            keys, vecs = np.zeros(n, dtype=np.int64), np.zeros((n, self.vector_dim() or 0), dtype=np.int8)
            cur = self.conn.execute("SELECT paper, vec FROM vectors ORDER BY paper")
            at = 0
            while rows := cur.fetchmany(chunk):
                keys[at : at + len(rows)] = [r[0] for r in rows]
                vecs[at : at + len(rows)] = self.vectors_from_blobs([r[1] for r in rows])
                at += len(rows)
        return keys[:at], vecs[:at]

    @staticmethod
    def vectors_from_blobs(blobs: list[bytes]) -> np.ndarray:
        return np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1)

    def vectors_epoch(self) -> int:
        """Bumped in the transaction of every change to the vectors (index.publish)."""
        return int(self.get_state("vectors_epoch") or 0)

    def index_rows(self, chunk: int = 65_536) -> Iterator[list[tuple[int, str, list[str], int]]]:
        """Every paper's (rowid, text hash, categories, date int), `chunk` at a time (lexical.Source)."""
        cur = self.conn.execute("SELECT rowid, text_hash, categories, date FROM papers ORDER BY rowid")
        while rows := cur.fetchmany(chunk):
            yield [(r[0], r[1], json.loads(r[2]), date_int(r[3])) for r in rows]

    def index_texts(self, rowids: list[int]) -> dict[int, tuple[str, str, list[str]]]:
        q = "SELECT rowid, title, abstract, authors FROM papers WHERE rowid IN ({})"
        return {r[0]: (r[1], r[2], json.loads(r[3])) for r in self._rows_in(q, rowids)}

    def rowids_and_hashes_of(self, ids: list[str] | None = None) -> dict[str, tuple[int, str]]:
        """id -> (rowid, text hash) of the papers with these ids (None: every paper)."""
        q = "SELECT id, rowid, text_hash FROM papers"
        rows = self.conn.execute(q) if ids is None else self._rows_in(q + " WHERE id IN ({})", ids)
        return {r[0]: (r[1], r[2]) for r in rows}

    def papers_after(self, rowid: int, n: int) -> list[tuple[int, Paper, bytes | None]]:
        """The next `n` papers after `rowid`, each with its current vector's bytes (or None)."""
        rows = self.conn.execute(f"{_WITH_VECTOR} WHERE p.rowid > ? ORDER BY p.rowid LIMIT ?", (rowid, n))
        return [(int(r["rowid"]), paper_from_row(r), r["vec"]) for r in rows]

    def papers_with_vectors(self, rowids: list[int]) -> list[tuple[int, Paper, bytes | None]]:
        """These papers, as `papers_after` gives them."""
        rows = self._rows_in(f"{_WITH_VECTOR} WHERE p.rowid IN ({{}})", rowids)
        return [(int(r["rowid"]), paper_from_row(r), r["vec"]) for r in rows]

    def copy_states(self) -> dict[int, tuple[str, bool, frozenset[str]]]:
        """rowid -> (content hash, whether it has a current vector, its DOIs), for
        backends/migrate.py: a copy made before a rule of what a paper's DOIs are (4a0baca) is
        brought up to it by the next copy, though the paper did not change."""
        dois = "(SELECT group_concat(d.doi, ' ') FROM paper_dois d WHERE d.paper = p.rowid)"
        q = f"SELECT p.rowid, p.content_hash, v.paper IS NOT NULL, {dois} FROM papers p {_CURRENT_VECTOR}"
        return {r[0]: (r[1], bool(r[2]), frozenset((r[3] or "").split())) for r in self.conn.execute(q)}

    def store_id(self) -> str:
        """Made with the store: an index of another (recreated) store is never adopted."""
        return self.get_state("store_id") or ""

    def generation(self) -> int:
        """Bumped in the transaction of every change to the papers."""
        return int(self.get_state("generation") or 0)

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Several SELECTs that must see one committed state."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    @contextmanager
    def time_limit(self, seconds: float) -> Iterator[float]:
        """Run statements within `seconds` (OverTime past it); a read left open is rolled back."""
        outer = self._deadline
        deadline = time.monotonic() + seconds
        self._deadline = deadline if outer is None else min(outer, deadline)
        self.conn.set_progress_handler(self._past_deadline, _STEPS)
        try:
            yield deadline
        except sqlite3.OperationalError as e:
            if "interrupt" not in str(e):
                raise
            raise OverTime(str(e)) from None
        finally:
            self._deadline = outer
            if outer is None:
                self.conn.set_progress_handler(None, _STEPS)
                if self.conn.in_transaction:
                    self.conn.rollback()

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _bump(self, counter: str) -> None:
        self.conn.execute(
            "INSERT INTO state VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (counter,),
        )

    def stats(self) -> dict:
        first, last = self.conn.execute("SELECT min(date), max(date) FROM papers").fetchone()
        return {
            "papers": self.count(),
            "with_vectors": self.vector_count(),
            "model": self.model,
            "first_date": first,
            "last_date": last,
            "schema_version": self.schema_version(),
            "data_dir": str(self.data_dir),
            "db_bytes": sum(f.stat().st_size for f in self.data_dir.glob("paperdex.db*")),
            "lexical_bytes": self._published_bytes("lexical.json"),
            "vectors_bytes": self._table_bytes("vectors"),
        }

    def _table_bytes(self, table: str) -> int:
        """Bytes of a table's pages, 0 where SQLite has no dbstat table."""
        try:
            return int(self.conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name = ?", (table,)).fetchone()[0] or 0)
        except sqlite3.Error:
            return 0

    def _published_bytes(self, pointer: str) -> int:
        """Bytes of the snapshot folder a pointer names (0 if none is published)."""
        try:
            folder = self.data_dir / json.loads((self.data_dir / pointer).read_text())["dir"]
            return sum(f.stat().st_size for f in folder.iterdir())
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    @contextmanager
    def write_transaction(self) -> Iterator[Store]:
        """One write transaction (BEGIN IMMEDIATE: the write lock from its first read)."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            yield self

    def max_rowid(self) -> int:
        """The newest paper's rowid (0 for an empty store)."""
        return self.conn.execute("SELECT coalesce(max(rowid), 0) FROM papers").fetchone()[0]

    def count_after_rowid(self, rowid: int) -> int:
        return self.conn.execute("SELECT count(*) FROM papers WHERE rowid > ?", (rowid,)).fetchone()[0]

    def ids_and_dates_after_rowid(self, rowid: int) -> list[tuple[str, str | None]]:
        return [(r[0], r[1]) for r in self.conn.execute("SELECT id, date FROM papers WHERE rowid > ?", (rowid,))]

    def paper_id(self, rowid: int) -> str | None:
        return self._value("SELECT id FROM papers WHERE rowid = ?", [rowid])

    def newest_paper_id(self) -> str | None:
        """The id of the paper with the latest date (the last stored of that day)."""
        return self._value("SELECT id FROM papers ORDER BY date DESC, rowid DESC LIMIT 1")

    def rowids_since(self, day: str) -> list[int]:
        return self._firsts("SELECT rowid FROM papers WHERE date >= ?", (day,))

    def papers_by_venue_area_category(
        self, venue: str | None = None, area: str | None = None, category: str | None = None
    ) -> list[Paper]:
        """Papers whose venue and area hold the texts (any case), in `category` (or its archive)."""
        sql, args = "SELECT * FROM papers WHERE 1", []
        for column, text in (("venue", venue), ("venue_area", area)):
            if text:
                sql += f" AND {column} LIKE ?"
                args.append(f"%{text}%")
        if category:
            sql += (
                " AND EXISTS (SELECT 1 FROM paper_categories c WHERE c.paper = papers.rowid AND "
                "(c.category = ? OR c.category LIKE ?))"
            )
            args += [category, f"{category}.%"]
        sql += " ORDER BY rowid"
        return [paper_from_row(r) for r in self.conn.execute(sql, args)]

    def title_match_rows(self) -> Iterator[tuple[str, str, str | None, str | None, str | None]]:
        """Per paper, lazily: (id, title, first author, extra JSON when it names an arXiv id or
        a title from the abstract, and for those the abstract's first 600 characters)."""
        return self.conn.execute(
            "SELECT id, title, json_extract(authors, '$[0]'), "
            "CASE WHEN instr(extra, 'arxiv_id') OR instr(extra, 'title_from_abstract') THEN extra END, "
            "CASE WHEN instr(extra, 'title_from_abstract') THEN substr(abstract, 1, 600) END "
            "FROM papers"
        )

    def abstract_match_rows(self) -> Iterator[tuple[str, str, str | None]]:
        """Per paper, read lazily: (id, the abstract's first 600 characters, first author)."""
        return self.conn.execute("SELECT id, substr(abstract, 1, 600), json_extract(authors, '$[0]') FROM papers")

    def author_lists_matching(self, match: str, limit: int) -> list[str]:
        """The authors (JSON lists) of up to `limit` papers matching an FTS5 expression."""
        sql = (
            "SELECT p.authors FROM fts_exact JOIN papers p ON p.rowid = fts_exact.rowid WHERE fts_exact MATCH ? LIMIT ?"
        )
        return self._firsts(sql, [match, limit])

    def paper_counts_by_category(self) -> list[tuple[str, int]]:
        rows = self.conn.execute("SELECT category, count(*) n FROM paper_categories GROUP BY category ORDER BY n DESC")
        return [(r[0], r[1]) for r in rows]

    def paper_counts_by_venue(self, prefix: str, limit: int) -> list[tuple[str | None, int]]:
        """Venues with a word starting with `prefix` (or all), most papers first, with counts."""
        if not prefix:
            sql, args = "SELECT venue, count(*) n FROM papers WHERE venue IS NOT NULL", []
        else:
            sql = "SELECT venue, count(*) n FROM papers WHERE (venue LIKE ? OR venue LIKE ?)"
            args = [f"{prefix}%", f"% {prefix}%"]
        rows = self.conn.execute(sql + " GROUP BY venue ORDER BY n DESC, venue LIMIT ?", [*args, limit])
        return [(r[0], r[1]) for r in rows]

    # --- what the search engine reads besides its snapshots (corpus.StoreCorpus)
    def paper_id_by_doi(self, doi: str) -> str | None:
        """The id of the paper with the DOI `doi` (lower case): the one whose id is `doi:DOI`
        or was before a merge moved it (an alias: the paper it joined may not carry the DOI
        elsewhere), else the first stored with it in `paper_dois`. Indexed look-ups only."""
        sql = (
            f"SELECT id FROM papers WHERE id = {_RESOLVED} UNION ALL "
            "SELECT * FROM (SELECT p.id FROM paper_dois d JOIN papers p ON p.rowid = d.paper "
            "WHERE d.doi = :doi ORDER BY d.paper LIMIT 1) UNION ALL "
            "SELECT paper FROM paper_aliases WHERE old >= 'doi:' AND old < 'doi;' AND lower(old) = :id"
        )
        return self._value(sql, {"id": f"doi:{doi}", "doi": doi})

    def column_texts(self, rowids: list[int], column: str) -> dict[int, str]:
        if column not in _COLS:
            raise ValueError(f"not a column of papers: {column!r}")
        return {r[0]: r[1] for r in self._rows_in(f"SELECT rowid, {column} FROM papers WHERE rowid IN ({{}})", rowids)}

    def exact_phrase_rowids(self, match: str) -> list[int]:
        return self._firsts("SELECT rowid FROM fts_exact WHERE fts_exact MATCH ?", (match,))

    def rowids_where(self, kind: str, value: str) -> list[int]:
        """Rowids of the papers whose venue (`kind` "venue") or venue_area ("area") holds `value`
        (any case, literally), or whose OpenReview decision ("decision") is `value`."""
        if kind == "decision":
            q = "SELECT rowid FROM papers WHERE json_extract(extra, '$.openreview.decision') = ?"
            return self._firsts(q, (value,))
        pat = "%" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        column = {"venue": "venue", "area": "venue_area"}[kind]
        return self._firsts(f"SELECT rowid FROM papers WHERE {column} LIKE ? ESCAPE '\\'", (pat,))

    def dates_with_counts(self, limit: int | None = None) -> list[tuple[str, int]]:
        sql = "SELECT date, count(*) FROM papers WHERE date IS NOT NULL GROUP BY date ORDER BY date DESC LIMIT ?"
        limit = -1 if limit is None else int(limit)  # SQLite reads a negative LIMIT as none
        return [(r[0], r[1]) for r in self.conn.execute(sql, [limit])]

    def latest_date(self) -> str | None:
        return self.conn.execute("SELECT max(date) FROM papers").fetchone()[0]

    def date_before(self, day: str) -> str | None:
        return self.conn.execute("SELECT max(date) FROM papers WHERE date < ?", [day]).fetchone()[0]

    def date_after(self, day: str) -> str | None:
        return self.conn.execute("SELECT min(date) FROM papers WHERE date > ?", [day]).fetchone()[0]

    def count_in(self, period: Period) -> int:
        where, params = period.where()
        return self.conn.execute(f"SELECT count(*) FROM papers p WHERE {where}", params).fetchone()[0]

    def category_counts_in(self, period: Period, limit: int | None = None) -> list[tuple[str, int]]:
        """Categories of the period's papers, biggest first, with their counts."""
        where, params = period.where()
        sql = (
            "SELECT pc.category, count(*) n FROM paper_categories pc JOIN papers p ON p.rowid = pc.paper "
            f"WHERE {where} GROUP BY pc.category ORDER BY n DESC, pc.category LIMIT ?"
        )
        return [(r[0], r[1]) for r in self.conn.execute(sql, [*params, -1 if limit is None else limit])]

    def papers_in(self, period: Period, order: str, limit: int, offset: int = 0) -> list[Paper]:
        """One page of the period's papers in `order` (a key of PERIOD_ORDERS)."""
        where, params = period.where()
        sql = f"SELECT * FROM papers p WHERE {where} ORDER BY {PERIOD_ORDERS[order]} LIMIT ? OFFSET ?"
        return [paper_from_row(r) for r in self.conn.execute(sql, [*params, limit, offset])]

    def rowids_in(self, period: Period, order: str) -> list[int]:
        where, params = period.where()
        return self._firsts(f"SELECT p.rowid FROM papers p WHERE {where} ORDER BY {PERIOD_ORDERS[order]}", params)

    def rowids_by_signal_in(self, period: Period, order: str) -> list[tuple[int, int | None, int | None]]:
        """(rowid, upvotes, stars) of the period's papers, most upvoted, then starred, first."""
        where, params = period.where()
        order_by = f"{_BY_SIGNAL}, {PERIOD_ORDERS[order]}"
        sql = f"SELECT p.rowid, {_UPVOTES}, {_STARS} FROM papers p WHERE {where} ORDER BY {order_by}"
        return [(r[0], r[1], r[2]) for r in self.conn.execute(sql, params)]

    def most_signalled_in(self, period: Period, limit: int) -> list[Paper]:
        """The period's papers with upvotes or stars, most upvoted first, then most starred."""
        where, params = period.where()
        sql = (
            f"SELECT * FROM papers p WHERE {where} AND (coalesce({_UPVOTES}, 0) > 0 OR coalesce({_STARS}, 0) > 0) "
            f"ORDER BY {_BY_SIGNAL}, p.rowid LIMIT ?"
        )
        return [paper_from_row(r) for r in self.conn.execute(sql, [*params, limit])]

    def state_keys_starting(self, prefix: str) -> list[str]:
        """Keys of the state table that start with `prefix` (a LIKE pattern)."""
        return self._firsts("SELECT key FROM state WHERE key LIKE ?", [prefix + "%"])

    # --- the library (library.py); writes run inside write_transaction()
    def tags_with_counts(self) -> list[sqlite3.Row]:
        """Every tag by name: (name, created, n papers, upd: last added)."""
        return self.conn.execute(
            "SELECT t.name, t.created, count(tp.paper) n, max(tp.added) upd FROM tags t "
            "LEFT JOIN tag_papers tp ON tp.tag = t.id GROUP BY t.id ORDER BY t.name COLLATE NOCASE"
        ).fetchall()

    def tag_paper_ids(self, name: str) -> list[str]:
        """Ids of the papers in the tag named `name`, most recently added first."""
        q = (
            "SELECT tp.paper FROM tag_papers tp JOIN tags t ON t.id = tp.tag WHERE t.name = ? "
            "ORDER BY tp.added DESC, tp.paper"
        )
        return self._firsts(q, [name])

    def tag_names_of(self, pid: str) -> list[str]:
        q = "SELECT t.name FROM tags t JOIN tag_papers tp ON tp.tag = t.id WHERE tp.paper = ? ORDER BY t.name"
        return self._firsts(q, [pid])

    def tagged_paper_ids(self) -> list[str]:
        return self._firsts("SELECT DISTINCT paper FROM tag_papers")

    def tag_id(self, name: str) -> int | None:
        return self._value("SELECT id FROM tags WHERE name = ?", (name,))

    def tag_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM tags").fetchone()[0]

    def insert_tag(self, name: str, created: str) -> int:
        return int(self.conn.execute("INSERT INTO tags (name, created) VALUES (?, ?)", (name, created)).lastrowid or 0)

    def add_to_tag(self, tag_id: int, pids: list[str], added: str) -> None:
        self.conn.executemany("INSERT INTO tag_papers VALUES (?, ?, ?)", [(tag_id, pid, added) for pid in pids])

    def remove_from_tag(self, tag_id: int, pid: str) -> int:
        """1 if the paper was in the tag, else 0."""
        return self.conn.execute("DELETE FROM tag_papers WHERE tag = ? AND paper = ?", (tag_id, pid)).rowcount

    def delete_tag(self, name: str) -> bool:
        return self.conn.execute("DELETE FROM tags WHERE name = ?", (name,)).rowcount > 0

    def rename_tag(self, old: str, new: str) -> bool:
        """False if there is no tag named `old`."""
        return self.conn.execute("UPDATE tags SET name = ? WHERE name = ?", (new, old)).rowcount > 0

    def dismiss(self, pids: Iterable[str], added: str) -> int:
        """Mark papers "not interested"; returns how many were not marked yet."""
        q = "INSERT OR IGNORE INTO dismissed VALUES (?, ?)"
        return sum(self.conn.execute(q, (p, added)).rowcount for p in pids)

    def undismiss(self, pids: Iterable[str]) -> int:
        """Take back "not interested" marks; returns how many there were."""
        return sum(self.conn.execute("DELETE FROM dismissed WHERE paper = ?", (p,)).rowcount for p in pids)

    def dismissed_ids(self) -> list[str]:
        return self._firsts("SELECT paper FROM dismissed ORDER BY added DESC, paper")

    def saved_search_rows(self) -> list[sqlite3.Row]:
        return self.conn.execute("SELECT * FROM saved_searches ORDER BY name COLLATE NOCASE").fetchall()

    def saved_search_row(self, *, id: int | None = None, name: str | None = None) -> sqlite3.Row | None:
        """A saved search by id, or by name (any case)."""
        where, key = ("id = ?", id) if id is not None else ("name = ? COLLATE NOCASE", name)
        return self.conn.execute(f"SELECT * FROM saved_searches WHERE {where}", [key]).fetchone()

    def saved_search_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM saved_searches").fetchone()[0]

    def put_saved_search(self, name: str, query: str, params: str, created: str, seen_rowid: int, seen_at: str) -> None:
        """Add a saved search, or replace the one named `name` (its id and creation time stay)."""
        self.conn.execute(
            "INSERT INTO saved_searches (name, query, params, created, seen_rowid, seen_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET query = excluded.query, params = excluded.params, "
            "seen_rowid = excluded.seen_rowid, seen_at = excluded.seen_at",
            (name, query, params, created, seen_rowid, seen_at),
        )

    def delete_saved_search(self, id: int) -> bool:
        return self.conn.execute("DELETE FROM saved_searches WHERE id = ?", (id,)).rowcount > 0

    def set_saved_search_seen(self, id: int, seen_rowid: int, seen_at: str) -> None:
        self.conn.execute(
            "UPDATE saved_searches SET seen_rowid = ?, seen_at = ? WHERE id = ?", (seen_rowid, seen_at, id)
        )

    def insert_token(self, name: str, token_hash: str, created: str) -> None:
        self.conn.execute("INSERT INTO tokens (name, hash, created) VALUES (?, ?, ?)", (name, token_hash, created))

    def token_rows(self) -> list[sqlite3.Row]:
        """(id, name, created) of every token, oldest first; never the hashes."""
        return self.conn.execute("SELECT id, name, created FROM tokens ORDER BY id").fetchall()

    def token_by_hash(self, token_hash: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT id, name, hash FROM tokens WHERE hash = ?", [token_hash]).fetchone()

    def delete_token(self, *, id: int | None = None, name: str | None = None) -> int:
        """Revoke the token with this id, or every token with this name; returns how many."""
        column, key = ("id", id) if id is not None else ("name", name)
        return self.conn.execute(f"DELETE FROM tokens WHERE {column} = ?", (key,)).rowcount

    # --- a switch of embedding models (embed.py): VECTORS_NEXT fills while the old serve
    def has_vector_switch(self) -> bool:
        return self._value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (VECTORS_NEXT,)) is not None

    def missing_vector_count(self, *, switch: bool = False) -> int:
        return self.conn.execute(f"SELECT count(*) {_missing_sql(switch)}").fetchone()[0]

    def start_vector_switch(self, model: str) -> None:
        """Begin (or go on with) a switch to `model`; one to another model starts afresh."""
        with self.write_transaction():
            if self.get_state("model_next") != model:
                self.conn.execute(f"DROP TABLE IF EXISTS {VECTORS_NEXT}")
            self.conn.execute(
                f"CREATE TABLE IF NOT EXISTS {VECTORS_NEXT} (paper INTEGER PRIMARY KEY REFERENCES papers(rowid) "
                "ON DELETE CASCADE, text_hash TEXT NOT NULL, vec BLOB NOT NULL)"
            )
            self.conn.execute("INSERT OR REPLACE INTO state VALUES ('model_next', ?)", (model,))

    def finish_vector_switch(self, model: str) -> bool:
        """Put the switch's vectors in place in one transaction; False while some paper lacks one."""
        with self.write_transaction():
            if self.missing_vector_count(switch=True):
                return False
            self.conn.execute("DELETE FROM vectors")
            self.conn.execute(
                f"INSERT INTO vectors (paper, text_hash, vec) SELECT paper, text_hash, vec FROM {VECTORS_NEXT}"
            )
            self.conn.execute(f"DROP TABLE {VECTORS_NEXT}")
            self.conn.execute("DELETE FROM state WHERE key = 'model_next'")
            self.conn.execute("INSERT OR REPLACE INTO state VALUES ('model', ?)", (model,))
            self._bump("vectors_epoch")
        return True

    def drop_vector_switch(self) -> None:
        with self.conn:
            self.conn.execute(f"DROP TABLE IF EXISTS {VECTORS_NEXT}")
            self.conn.execute("DELETE FROM state WHERE key = 'model_next'")

    def close(self) -> None:
        self.conn.close()
        self._let_go_of_writer()

    def _let_go_of_writer(self) -> None:
        if self._writer is not None:
            os.close(self._writer)
            self._writer = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def doi_id(pid: str) -> str | None:
    """The DOI of an id `doi:DOI` (as paper.typed_id writes a typed DOI), else None."""
    return doi_of(pid) if pid[:4].lower() == "doi:" else None


def _split_sql(script: str) -> list[str]:
    """sqlite3.executescript would commit our transaction; split on ';' at line ends instead."""
    code = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
    return [f"{stmt.strip()};" for stmt in re.split(r";[ \t]*$", code, flags=re.M) if stmt.strip()]

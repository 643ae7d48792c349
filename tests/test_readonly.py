"""Readers never write; migrations run only in writers, once, under the write lock."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.paper import Paper
from paperdex.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError, _split_sql


def make_v1(path: Path, n: int = 50) -> None:
    """A store as the first schema wrote it: papers and the stemmed index, no exact index."""
    path.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path / "paperdex.db")
    for stmt in _split_sql(MIGRATIONS[0]):
        conn.execute(stmt)
    for i in range(n):
        conn.execute(
            "INSERT INTO papers (id, title, authors, abstract, categories, sources, extra, content_hash, text_hash) "
            "VALUES (?, ?, '[]', 'weight decay', '[]', '[\"file\"]', '{}', 'c', 't')",
            (f"2501.{i:05d}", f"Paper {i}"),
        )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reader_opens_read_only_and_changes_nothing(tmp_path):
    d = tmp_path / "s"
    with Store(d) as w:
        w.upsert([Paper(id="2501.00001", title="A title")])
        w.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        w.conn.execute("PRAGMA journal_mode = DELETE")  # so a reader setting WAL would show
    before = digest(d / "paperdex.db")
    files = sorted(p.name for p in d.rglob("*"))
    with Store(d, readonly=True) as r:
        assert r.get("2501.00001").title == "A title" and r.count() == 1
        assert r.conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            r.conn.execute("DELETE FROM papers")
        with pytest.raises(StoreError, match="does not migrate"):
            r.migrate()
    assert digest(d / "paperdex.db") == before
    assert sorted(p.name for p in d.rglob("*")) == files  # no journal, no index files


def test_reader_of_an_old_store_says_what_to_run_and_leaves_it_old(tmp_path):
    d = tmp_path / "old"
    make_v1(d)
    before = digest(d / "paperdex.db")
    with pytest.raises(StoreError, match="run `paperdex migrate`"):
        Store(d, readonly=True)
    assert digest(d / "paperdex.db") == before
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "stats"])
    assert r.exit_code == 1 and "paperdex migrate" in r.output
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "migrate"])
    assert r.exit_code == 0 and f"schema version {SCHEMA_VERSION}" in r.output
    with Store(d, readonly=True) as s:
        assert s.schema_version() == SCHEMA_VERSION and s.count() == 50


def test_reader_refuses_a_file_that_is_not_a_store(tmp_path):
    d = tmp_path / "junk"
    d.mkdir()
    (d / "paperdex.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open|not a paperdex store"):
        Store(d, readonly=True)


OPEN = """
import sys, time
from pathlib import Path
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.005)
from paperdex.store import Store
with Store(sys.argv[1]) as s:
    print(s.schema_version())
"""


def test_three_writers_opening_a_v1_store_at_once_all_succeed(tmp_path):
    """Each re-reads user_version after BEGIN IMMEDIATE, so each migration runs once (it used
    to fail with "table fts_exact already exists")."""
    for trial in range(2):
        d = tmp_path / f"v1-{trial}"
        make_v1(d, n=2000)
        go = tmp_path / f"go-{trial}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN, str(d), str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            for _ in range(3)
        ]
        time.sleep(1.0)  # let all three import and wait at the line
        go.touch()
        outs = [p.communicate(timeout=60) for p in procs]
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err.decode()[-1500:]
            assert out.decode().strip() == str(SCHEMA_VERSION)
        conn = sqlite3.connect(d / "paperdex.db")
        assert conn.execute("SELECT count(*) FROM fts_exact WHERE fts_exact MATCH 'weight'").fetchone()[0] == 2000
        assert conn.execute("SELECT count(*) FROM state WHERE key = 'store_id'").fetchone()[0] <= 1

"""paperdex.store: the one module that speaks SQL. Every other module asks the store a
question by name (``store.count_in(period)``, ``store.tag_paper_ids(name)``); a statement run,
or SQL written, anywhere else fails this test."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PKG = ROOT / "paperdex"
STORAGE = {"store.py"}

EXECUTE = {"execute", "executemany", "executescript"}
# SQL in a string literal (keywords in capitals, as the store writes them; an f-string is read
# with each {...} as one word). Prose that says "select" or "update" is not caught.
SQL = [
    re.compile(p)
    for p in (
        r"\bSELECT\b[\s\S]*\bFROM\b",
        r"\bSELECT\s+(?:count|max|min|sum|coalesce|DISTINCT|\*|1\b)",
        r"\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b",
        r"\bUPDATE\s+\S+\s+SET\b",
        r"\bDELETE\s+FROM\b",
        r"\b(?:CREATE|DROP)\s+(?:TEMP\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b",
        r"\bFROM\s+\S+(?:\s+\w+)?\s+(?:WHERE|(?:LEFT\s+)?JOIN|ORDER\s+BY|GROUP\s+BY|LIMIT)\b",
        r"\bWHERE\s+\S+\s+(?:=|<|>|!=|LIKE|IN|IS|BETWEEN|MATCH)\s",
        r"\bPRAGMA\s+\w+",
        r"\bBEGIN\s+(?:IMMEDIATE|EXCLUSIVE)\b",
        r"\bjson_(?:extract|each)\(",
    )
]


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else " x " for v in node.values)
    return None


def sql_in(source: str) -> list[str]:
    """Where `source` runs or writes SQL: "line N: ..." for each place."""
    tree = ast.parse(source)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
            found.append(f"line {node.lineno}: .{node.func.attr}(")
        elif id(node) not in inner and (text := _text(node)) and any(p.search(text) for p in SQL):
            found.append(f"line {node.lineno}: {text[:60]!r}")
    return found


def modules() -> list[str]:
    return sorted(str(p.relative_to(PKG).as_posix()) for p in PKG.rglob("*.py"))


def test_the_store_is_the_one_module_that_runs_or_writes_sql():
    """Computed from the package's code: the modules holding SQL are exactly the store."""
    speaking = {rel: found for rel in modules() if (found := sql_in((PKG / rel).read_text(encoding="utf-8")))}
    outside = {rel: found for rel, found in speaking.items() if rel not in STORAGE}
    assert set(speaking) == STORAGE, f"move it into a Store method named for what it answers: {outside}"


@pytest.mark.parametrize(
    "code",
    [
        'store.conn.execute("SELECT 1")',
        "conn.executemany(q, rows)",
        "c.executescript(script)",
        'q = f"SELECT id FROM papers WHERE id IN ({marks})"',
        'sql = "SELECT * FROM papers p WHERE " + where',
        'x = "SELECT count(*) " + rest',
        'q = "INSERT OR REPLACE INTO state VALUES (?, ?)"',
        'q = "INSERT INTO tags (name) VALUES (?)"',
        'q = "UPDATE saved_searches SET seen_rowid = ?"',
        'q = "DELETE FROM tokens WHERE id = ?"',
        'q = "CREATE TABLE t (a)"',
        'q = f"CREATE TABLE IF NOT EXISTS {name} (a)"',
        'q = "CREATE VIRTUAL TABLE fts USING fts5(a)"',
        'q = f"DROP TABLE IF EXISTS {t}"',
        'q = f"FROM papers p LEFT JOIN {t} v ON v.paper = p.rowid"',
        'q = "PRAGMA user_version"',
        "UPVOTES = \"CAST(json_extract(p.extra, '$.hf.upvotes') AS INTEGER)\"",
        'sql += " AND venue LIKE ?"' + "\n" + 'sql = "x WHERE venue LIKE ?"',
    ],
)
def test_it_finds_sql(code):
    assert sql_in(code), code


@pytest.mark.parametrize(
    "code",
    [
        '"""Select the papers from a day and update the feed: delete from the list."""',
        'msg = f"no papers listed on {day}"',
        'raise StoreError("run `paperdex ingest` first")',
        "store.count_in(period)",
        'log("Insert into the tag")',
    ],
)
def test_prose_is_not_sql(code):
    assert sql_in(code) == [], code

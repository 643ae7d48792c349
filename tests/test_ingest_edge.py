"""Records are validated at the edge: a bad record costs its own line and nothing else, and the
user is told which line and why. Real files, a real SQLite store, the real CLI."""

from __future__ import annotations

import gzip
import json
import sqlite3

import numpy as np
import pytest
from click.testing import CliRunner

from paperdex import ingest as ingest_mod
from paperdex.cli import cli
from paperdex.ingest import ingest_file
from paperdex.paper import MAX_ABSTRACT, RecordError, paper_from_dict
from paperdex.store import Store


def rec(i: int, **kw) -> dict:
    return {"id": f"2501.{i:05d}", "title": f"Paper number {i}", "abstract": f"About topic {i}.", **kw}


def line(i: int, **kw) -> bytes:
    return json.dumps(rec(i, **kw)).encode() + b"\n"


def run(*args, data_dir):
    return CliRunner().invoke(cli, ["--data-dir", str(data_dir), *map(str, args)], catch_exceptions=False)


def ids_in(data_dir) -> set[str]:
    with Store(data_dir, readonly=True) as s:
        return {r[0] for r in s.conn.execute("SELECT id FROM papers")}


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"code_stars": float("nan")}, "'extra.code_stars' is nan"),
        ({"extra": {"score": float("inf")}}, "'extra.score' is inf"),
        ({"code_stars": 10**30}, "out of range"),
        ({"code_stars": -3}, "'code_stars' must be a whole number"),
        ({"extra": "s"}, "'extra' must be a JSON object, got a string"),
        ({"extra": [1, 2]}, "'extra' must be a JSON object, got a list"),
        ({"extra": 5}, "'extra' must be a JSON object, got a number"),
        ({"extra": {"a": [[[[[[[[[[1]]]]]]]]]]}}, "nested more than"),
        ({"listed": "2025-13-45"}, "'listed' is not a real date: '2025-13-45'"),
        ({"published": "2025-02-30"}, "not a real date"),
        ({"updated": 20250101}, "'updated' must be a date YYYY-MM-DD"),
        ({"title": None}, "missing or empty 'title'"),
        ({"title": ["a"]}, "'title' must be a string, got a list"),
        ({"abstract": {"x": 1}}, "'abstract' must be a string, got an object"),
        ({"authors": [1, 2]}, "'authors[0]' must be a string, got a number"),
        ({"authors_truncated": "yes"}, "'authors_truncated' must be true or false"),
        ({"id": 2501.1}, "write ids as strings"),
        ({"id": "a b\x1b"}, "spaces or control characters"),
        ({"id": "x" * 500}, "longer than 200"),
        ({"venue": 3.5}, "'venue' must be a string, got a number"),
        ({"title": "ok \ud800 lone"}, "unpaired surrogate"),
    ],
)
def test_bad_fields_are_refused_with_the_field_named(bad, message):
    with pytest.raises(RecordError, match=None) as e:
        paper_from_dict(rec(1, **bad))
    assert message in str(e.value)


def test_odd_but_valid_records_are_kept():
    """Numbers where text is expected are text (an id 2501 is not "missing"); a time after a
    date is dropped; an over-long abstract is cut at a word, with a note."""
    notes: list[str] = []
    p = paper_from_dict(
        {"id": 12345, "title": 1984, "abstract": "word " * 10_000, "listed": "2025-02-28T10:00:00Z"}, notes=notes
    )
    assert (p.id, p.title, p.listed) == ("12345", "1984", "2025-02-28")
    assert len(p.abstract) <= MAX_ABSTRACT + 1 and p.abstract.endswith("word…")
    assert notes == ["'abstract' has 49,999 characters; kept the first 19,999"]


def test_invalid_utf8_costs_one_line_not_the_rest(empty_store, tmp_path):
    """The issue's case: one bad byte on line 3,000 of 5,000 used to drop the 2,000 lines after it."""
    f = tmp_path / "big.jsonl"
    body = b"".join(line(i) for i in range(1, 3001))
    bad = json.dumps(rec(3000, title="caf\u00e9"), ensure_ascii=False).encode().replace(b"\xc3\xa9", b"\xe9")
    lines = body.splitlines(keepends=True)
    lines[2999] = bad + b"\n"
    f.write_bytes(b"".join(lines))
    s = ingest_file(empty_store, f)
    assert (s.added, s.rejected) == (2999, 1)
    column = bad.index(b"\xe9") + 1
    assert s.errors == [f"{f}:3000: invalid UTF-8 (byte 0xe9 at column {column})"]


def test_bom_blank_lines_and_crlf(empty_store, tmp_path):
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + line(1).replace(b"\n", b"\r\n") + b"\n\n" + line(2) + b"{oops\n")
    s = ingest_file(empty_store, f)
    assert (s.added, s.rejected) == (2, 1)
    assert s.errors[0].startswith(f"{f}:5: invalid JSON")  # blank lines still count


def test_a_byte_order_mark_on_a_line_of_its_own_loses_nothing(empty_store, tmp_path):
    f = tmp_path / "bom-alone.jsonl"
    f.write_bytes(b"\xef\xbb\xbf\n" + line(1) + line(2))
    s = ingest_file(empty_store, f)
    assert (s.added, s.rejected) == (2, 0)


def test_corrupt_gzip_member_costs_only_that_member(empty_store, tmp_path):
    members = [gzip.compress(b"".join(line(i) for i in range(k * 100, k * 100 + 100))) for k in range(3)]
    broken = bytearray(members[1])
    broken[len(broken) // 2 : len(broken) // 2 + 40] = b"\x00" * 40
    f = tmp_path / "multi.jsonl.gz"
    f.write_bytes(members[0] + bytes(broken) + members[2])
    s = ingest_file(empty_store, f)
    got = {p.id for p in empty_store.iter_papers()}
    assert {f"2501.{i:05d}" for i in [*range(0, 100), *range(200, 300)]} <= got
    assert any("corrupt gzip data" in e and e.startswith(str(f)) for e in s.errors)
    assert s.rejected >= 1


def test_truncated_gzip_keeps_what_was_read(empty_store, tmp_path):
    data = gzip.compress(b"".join(line(i) for i in range(2000)))
    f = tmp_path / "cut.jsonl.gz"
    f.write_bytes(data[: int(len(data) * 0.7)])
    s = ingest_file(empty_store, f)
    assert 1000 < s.added < 2000
    assert any("ends early" in e for e in s.errors)


def test_json_array_reports_elements_by_line(empty_store, tmp_path):
    f = tmp_path / "a.json"
    f.write_text(
        "[\n" + json.dumps(rec(1)) + ",\n" + json.dumps(rec(2, extra="s")) + ",\n" + json.dumps(rec(3)) + "\n]"
    )
    s = ingest_file(empty_store, f)
    assert (s.added, s.rejected) == (2, 1)
    assert s.errors == [f"{f}:3: 'extra' must be a JSON object, got a string"]


def test_deep_nesting_and_huge_numbers_do_not_crash(empty_store, tmp_path):
    f = tmp_path / "deep.jsonl"
    f.write_bytes(
        line(1)
        + b'{"id": "2501.00002", "title": "t", "extra": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
        + b'{"id": "2501.00003", "title": "t", "n": ' + b"9" * 5000 + b"}\n"
        + b'{"id": "2501.00004", "title": "t", "code_stars": NaN}\n'
        + line(5)
    )  # fmt: skip
    s = ingest_file(empty_store, f)
    assert (s.added, s.rejected) == (2, 3)
    assert [e.split(": ")[0] for e in s.errors] == [f"{f}:2", f"{f}:3", f"{f}:4"]


def test_cli_reports_every_problem_and_exits_1(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_bytes(line(1) + line(2))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(line(3) + line(4, listed="2025-13-45") + line(5))
    folder = tmp_path / "folder"
    folder.mkdir()
    d = tmp_path / "d"
    r = run("ingest", "-q", good, folder, bad, data_dir=d)
    assert r.exit_code == 1
    assert f"{bad}:2: 'listed' is not a real date: '2025-13-45'" in r.output
    assert f"{folder}: is a directory" in r.output
    assert "added 4, updated 0, unchanged 0, rejected 2" in r.output
    assert "Traceback" not in r.output
    assert ids_in(d) == {"2501.00001", "2501.00002", "2501.00003", "2501.00005"}


def test_strict_stops_at_the_first_bad_record_and_writes_nothing(tmp_path):
    f = tmp_path / "f.jsonl"
    f.write_bytes(line(1) + line(2, code_stars=float("nan")) + line(3, extra=[]))
    d = tmp_path / "d"
    r = run("ingest", "-q", "--strict", f, data_dir=d)
    assert r.exit_code == 1
    assert f"{f}:2: 'extra.code_stars' is nan" in r.output and ":3:" not in r.output
    assert ids_in(d) == set()


def test_disk_full_is_one_line_and_leaves_whole_batches(tmp_path, monkeypatch):
    """SQLite's max_page_count makes the database 'full' like a full disk would."""
    import paperdex.cli.common as cli_mod  # the store the commands open (_store)

    class SmallStore(Store):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            if not self.readonly:
                self.conn.execute("PRAGMA max_page_count = 400")

    monkeypatch.setattr(cli_mod, "Store", SmallStore)
    f = tmp_path / "many.jsonl"
    f.write_bytes(b"".join(line(i, abstract="words about things " * 40) for i in range(5000)))
    d = tmp_path / "d"
    r = run("ingest", "-q", f, data_dir=d)
    assert r.exit_code == 1
    assert "the disk is full" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1
    conn = sqlite3.connect(d / "paperdex.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM papers").fetchone()[0] % 1000 == 0  # whole batches only


def test_progress_advances_while_papers_are_written(empty_store, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_mod, "_CHUNK", 16 << 10)
    f = tmp_path / "p.jsonl"
    f.write_bytes(b"".join(line(i) for i in range(4000)))
    seen: list[tuple[int, int]] = []
    reader = sqlite3.connect(empty_store.path)

    def progress(n: int) -> None:
        seen.append((n, reader.execute("SELECT count(*) FROM papers").fetchone()[0]))

    ingest_file(empty_store, f, progress=progress)
    assert sum(n for n, _ in seen) == f.stat().st_size
    stored_while_reading = {c for _, c in seen}
    assert len(seen) > 10 and len(stored_while_reading) >= 3, "the bar must move during the ingest, not at its end"


def test_bad_vectors_file_and_data_dir_are_one_line_errors(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_bytes(line(1))
    (tmp_path / "ids.txt").write_text("2501.00001\n")
    (tmp_path / "v.txt").write_text("not numpy")
    r = run(
        "ingest",
        f,
        "--vectors",
        tmp_path / "v.txt",
        "--ids",
        tmp_path / "ids.txt",
        "--model",
        "all-MiniLM-L6-v2",
        data_dir=tmp_path / "d",
    )
    assert r.exit_code == 1 and "is not a .npy array file" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "d" / "paperdex.db").exists()  # refused before anything was written
    np.save(tmp_path / "v1.npy", np.ones(3))
    r = run(
        "ingest",
        f,
        "--vectors",
        tmp_path / "v1.npy",
        "--ids",
        tmp_path / "ids.txt",
        "--model",
        "all-MiniLM-L6-v2",
        data_dir=tmp_path / "d",
    )
    assert r.exit_code == 1 and "2-D float array" in r.output
    r = run("ingest", f, data_dir=f / "sub")
    assert r.exit_code == 1 and "cannot use" in r.output and "Traceback" not in r.output
    r = run("stats", data_dir=f / "sub")
    assert r.exit_code == 1 and "no paperdex data" in r.output


def test_a_query_may_start_with_a_dash(tmp_path):
    d = tmp_path / "d"
    f = tmp_path / "p.jsonl"
    f.write_bytes(line(1, title="Video diffusion models") + line(2, title="Image diffusion models"))
    run("ingest", "-q", f, data_dir=d)
    r = run("search", "-video", "diffusion", "--json", "--mode", "lexical", data_dir=d)
    assert r.exit_code == 0, r.output
    assert [h["id"] for h in json.loads(r.output)["hits"]] == ["2501.00002"]
    r = run("search", "--mode", "lexical", "--json", "--", "-image", data_dir=d)
    assert r.exit_code == 0 and "2501.00001" in r.output


def test_a_paper_with_thousands_of_authors_is_kept_whole_and_shown_cut(tmp_path):
    """Gemini 2.5 (2507.06261) lists 3,303 authors and ATLAS/CMS papers over 5,000: the record
    is admitted with every name (any one is found with au:), and views show ten then "et al.";
    only a list past MAX_AUTHORS is cut, marked truncated, with a note, never refused."""
    from paperdex.paper import MAX_AUTHORS

    names = [f"Author{k:04d} Surname{k:04d}" for k in range(3303)]
    f = tmp_path / "big.jsonl"
    f.write_bytes(line(1, authors=names, title="Gemini 2.5: Pushing the Frontier") + line(2, title="Another paper"))
    data = tmp_path / "d"
    r = run("ingest", f, "--quiet", data_dir=data)
    assert r.exit_code == 0, r.output
    assert ids_in(data) == {"2501.00001", "2501.00002"}
    with Store(data, readonly=True) as s:
        assert s.get("2501.00001").authors == names
    r = run("search", "au:Surname3100", "--json", data_dir=data)
    assert r.exit_code == 0, r.output
    hits = json.loads(r.output)["hits"]
    assert [h["id"] for h in hits] == ["2501.00001"]
    r = run("search", "au:Surname3100", data_dir=data)
    # ten names, then the one searched for past them (not hidden behind "et al.")
    shown = " ".join(r.output.split())
    assert "Author0009 Surname0009, … Author3100 Surname3100 et al." in shown and "Surname0010" not in shown

    notes: list[str] = []
    p = paper_from_dict(rec(3, authors=["A B"] * (MAX_AUTHORS + 5)), notes=notes)
    assert len(p.authors) == MAX_AUTHORS and p.authors_truncated
    assert notes == [f"'authors' has {MAX_AUTHORS + 5:,} names; kept the first {MAX_AUTHORS:,}"]

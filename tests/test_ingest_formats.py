"""What `paperdex ingest` does with files as researchers have them: a BibTeX export that is not
UTF-8, `--strict` with a .bib, BibTeX entries held to the record checks JSON Lines records get.
Real files, a real SQLite store, the real CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.store import Store

GOOD_BIB = """@article{schoelkopf_kernel_1998,
  title = {Nonlinear Component Analysis as a Kernel Eigenvalue Problem},
  author = {Sch{\\"o}lkopf, Bernhard and Smola, Alexander and M{\\"u}ller, Klaus-Robert},
  journal = {Neural Computation},
  year = {1998},
}
"""


def run(*args, data_dir):
    return CliRunner().invoke(cli, ["--data-dir", str(data_dir), *map(str, args)], catch_exceptions=False)


def ids_in(data_dir) -> set[str]:
    with Store(data_dir, readonly=True) as s:
        return {r[0] for r in s.conn.execute("SELECT id FROM papers")}


def jsonl(path, *records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


# --- BibTeX that is not UTF-8 -----------------------------------------------------------------


def test_a_latin1_bib_is_one_error_line_and_the_other_files_are_still_ingested(tmp_path):
    """Before: a traceback (UnicodeDecodeError) and no summary of the JSON Lines file before it."""
    good = tmp_path / "good.jsonl"
    jsonl(good, {"id": "2501.00001", "title": "A good record"})
    latin1 = tmp_path / "latin1.bib"
    latin1.write_bytes(b"@article{k1, title={Caf\xe9 au lait methods}, author={M\xfcller, J.}, year={2020}}\n")
    binary = tmp_path / "binary.bib"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4)
    after = tmp_path / "after.bib"
    after.write_text(GOOD_BIB, encoding="utf-8")
    d = tmp_path / "d"
    r = run("ingest", "-q", good, latin1, binary, after, data_dir=d)
    assert "Traceback" not in r.output and r.exit_code == 1
    assert "latin1.bib:1: not UTF-8 (byte 0xe9 at column 24); nothing was read from this file" in r.output
    assert "binary.bib: binary data (a NUL byte on line 1), not a BibTeX file; nothing was read from it" in r.output
    assert "added 2, updated 0, unchanged 0, rejected 2" in r.output
    assert ids_in(d) == {"2501.00001", "bib:schoelkopf_kernel_1998"}


def test_a_bib_that_declares_latin1_as_jabref_and_bibdesk_write_it_is_read_as_latin1(tmp_path):
    jabref = tmp_path / "jabref.bib"
    jabref.write_bytes(
        b"% This file was created with JabRef 2.10.\n% Encoding: ISO8859_1\n\n"
        b"@article{k1, title={Caf\xe9 au lait methods}, author={M\xfcller, J\xfcrgen}, year={2020}}\n"
    )
    bibdesk = tmp_path / "bibdesk.bib"
    bibdesk.write_bytes(
        b"%% This BibTeX bibliography file was created using BibDesk.\n"
        b"%% Saved with string encoding Western (Mac OS Roman)\n\n"
        b"@article{k2, title={Na\x95ve Bayes revisited}, author={Ang\x8elique Dupont}, year={2019}}\n"
    )
    d = tmp_path / "d"
    r = run("ingest", "-q", jabref, bibdesk, data_dir=d)
    assert r.exit_code == 0, r.output
    with Store(d, readonly=True) as s:
        k1, k2 = s.get("bib:k1"), s.get("bib:k2")
    assert (k1.title, k1.authors) == ("Café au lait methods", ["Jürgen Müller"])
    assert (k2.title, k2.authors) == ("Naïve Bayes revisited", ["Angélique Dupont"])


# --- --strict with BibTeX -----------------------------------------------------------------------


def test_strict_reads_a_bib_with_the_bibtex_reader(tmp_path):
    """Before: every .bib was refused as "invalid JSON: Expecting value (column 1)"."""
    good = tmp_path / "good.bib"
    good.write_text(GOOD_BIB, encoding="utf-8")
    d = tmp_path / "d"
    r = run("ingest", "-q", "--strict", good, data_dir=d)
    assert r.exit_code == 0, r.output
    assert ids_in(d) == {"bib:schoelkopf_kernel_1998"}

    broken = tmp_path / "broken.bib"
    broken.write_text(
        GOOD_BIB.replace("schoelkopf_kernel_1998", "other") + "\n@misc{broken,\n  title = {Unbalanced {brace,\n}\n"
    )
    first = tmp_path / "first.jsonl"
    jsonl(first, {"id": "2501.00002", "title": "Would be written first"})
    d2 = tmp_path / "d2"
    r = run("ingest", "-q", "--strict", first, broken, data_dir=d2)
    assert r.exit_code == 1
    assert "broken.bib:8: entry does not parse ('@misc{broken,') (--strict: nothing was written)" in r.output
    assert "invalid JSON" not in r.output
    assert ids_in(d2) == set()


# --- BibTeX entries are held to the record checks -----------------------------------------------


def test_a_bibtex_entry_gets_the_checks_a_json_record_gets(tmp_path):
    """Before: 2024-02-30 was stored as the paper's date, and the ids `bib:key with spaces`,
    `bib:dots/../key` and `ns:../../x` were stored; JSON Lines refuses each of them."""
    messy = tmp_path / "messy.bib"
    messy.write_text(
        "@online{url_only, title = {A blog post}, url = {https://example.com/post}, author = {Blogger, B.},"
        " date = {2024-02-30}}\n"
        "@misc{key with spaces, title = {Spaces in key}, author = {S, S}}\n"
        "@misc{dots/../key, title = {Dots in key}, author = {D, D}}\n"
        "@misc{ns:../../x, title = {Colon dots key}, author = {C, C}}\n"
        "@misc{fine, title = {A fine entry}, author = {Fine, F}, year = {2024}}\n"
        "@misc{long, title = {" + "word " * 300 + "}, author = {Long, L}}\n",
        encoding="utf-8",
    )
    d = tmp_path / "d"
    r = run("ingest", "-q", messy, data_dir=d)
    assert r.exit_code == 1
    assert "messy.bib:1: @online{url_only: 'published' is not a real date: '2024-02-30'; skipped" in r.output
    assert "messy.bib:2: @misc{key with spaces: 'id' contains spaces or control characters" in r.output
    assert "messy.bib:3: @misc{dots/../key: 'id' is not usable in a link" in r.output
    assert "messy.bib:4: @misc{ns:../../x: 'id' is not usable in a link" in r.output
    assert "messy.bib:6: note: 'title' has 1,499 characters; kept the first 999" in r.output
    assert "added 2, updated 0, unchanged 0, rejected 4" in r.output
    assert ids_in(d) == {"bib:fine", "bib:long"}


# --- one string where a list is expected --------------------------------------------------------


def test_categories_and_authors_given_as_one_string(tmp_path):
    """Before: "cs.LG cs.AI" was stored as one category (cat:cs.LG missed the paper) and
    "Alice Smith; Bob Jones" as one author."""
    f = tmp_path / "strings.jsonl"
    jsonl(
        f,
        {"id": "2506.00007", "title": "Categories as a string", "categories": "cs.LG cs.AI,stat.ML"},
        {"id": "2506.00008", "title": "Authors split on semicolons", "authors": "Alice Smith; Bob Jones;"},
        {"id": "2506.00009", "title": "Chinese list", "authors": "张三、李四", "categories": "cs.CL"},
        {"id": "2506.00010", "title": "One author", "authors": "Carol King"},
        {"id": "2506.00011", "title": "Not categories", "categories": "Machine Learning"},
        {"id": "2506.00012", "title": "Ambiguous", "authors": "Alice Smith, Bob Jones and Carol King"},
    )
    d = tmp_path / "d"
    r = run("ingest", "-q", f, data_dir=d)
    assert r.exit_code == 1
    assert f"{f}:5: 'categories' is one string, and 'Machine' in it is not an arXiv category" in r.output
    assert f"{f}:6: 'authors' is one string with ',' or ' and ' in it" in r.output
    with Store(d, readonly=True) as s:
        assert s.get("2506.00007").categories == ["cs.LG", "cs.AI", "stat.ML"]
        assert s.get("2506.00008").authors == ["Alice Smith", "Bob Jones"]
        assert (s.get("2506.00009").authors, s.get("2506.00009").categories) == (["张三", "李四"], ["cs.CL"])
        assert s.get("2506.00010").authors == ["Carol King"]
    found = run("search", "--json", "--mode", "lexical", "cat:cs.AI", data_dir=d)
    assert [h["id"] for h in json.loads(found.output)["hits"]] == ["2506.00007"]  # (search --json: the API object)


# --- a month or a year as the published date ----------------------------------------------------


def published_of(data_dir, pid: str) -> str | None:
    with Store(data_dir, readonly=True) as s:
        return s.get(pid).published


def test_a_month_or_a_year_as_published_is_kept_with_its_precision(tmp_path):
    """Before: "published": "2025-07" was refused ("'published' must be a date YYYY-MM-DD"),
    where a BibTeX entry's month is kept. Now a month or a year is dated its first day with its
    precision, as the BibTeX and Zotero readers date theirs: the export writes no day it was not
    told, and a record that knows the day keeps it, whichever file came first."""
    f = tmp_path / "mine.jsonl"
    jsonl(
        f,
        {"id": "bib:july", "title": "A paper of July", "authors": ["Alice Smith"], "published": "2025-07"},
        {"id": "bib:year", "title": "A paper of a year", "authors": ["Alice Smith"], "published": "2025"},
        {"id": "bib:bad", "title": "A paper of no month", "authors": ["Alice Smith"], "published": "2025-13"},
        {"id": "bib:worse", "title": "A paper of no date", "authors": ["Alice Smith"], "published": "July 2025"},
    )
    d = tmp_path / "d"
    r = run("ingest", "-q", f, data_dir=d)
    assert "added 2, updated 0, unchanged 0, rejected 2" in r.output, r.output
    assert f"{f}:3: 'published' is not a real date: '2025-13'" in r.output
    assert f"{f}:4: 'published' must be a date YYYY-MM-DD, YYYY-MM or YYYY, got 'July 2025'" in r.output
    assert (published_of(d, "bib:july"), published_of(d, "bib:year")) == ("2025-07-01", "2025-01-01")
    bib = run("export", "bib:july", "bib:year", data_dir=d).output
    assert "  year         = {2025},\n  month        = jul\n}" in bib
    assert "  author       = {Alice Smith},\n  year         = {2025}\n}" in bib
    assert "date " not in bib and "  month" not in bib.split("@misc{bib:year")[1]  # no day, no month made up
    day = tmp_path / "day.jsonl"
    jsonl(day, {"id": "bib:july", "title": "A paper of July", "authors": ["Alice Smith"], "published": "2025-07-15"})
    run("ingest", "-q", day, data_dir=d)
    assert published_of(d, "bib:july") == "2025-07-15"  # the day, over the month it agrees with
    run("ingest", "-q", f, data_dir=d)
    assert published_of(d, "bib:july") == "2025-07-15"  # the month again: the day stays
    d2 = tmp_path / "d2"
    run("ingest", "-q", day, data_dir=d2)
    run("ingest", "-q", f, data_dir=d2)
    assert published_of(d2, "bib:july") == "2025-07-15"  # the month after the day: the day stays


def test_a_records_date_is_its_published_date_when_it_gives_no_other(tmp_path):
    """Before: `"date": "2025-05-20"` (the field `show --json` prints) was dropped with no note:
    published, listed and date all null. Now a record with no published/listed/updated has its
    `date` as the published date, checked as `published` is; beside a date of its own, a `date`
    naming another day is ignored with a note, never silently."""
    f = tmp_path / "unk.jsonl"
    jsonl(
        f,
        {"id": "x-1", "title": "Widget paper", "authors": ["A B"], "date": "2025-05-20", "year": 2025, "foo": "bar"},
        {"id": "x-2", "title": "A paper of July", "authors": ["A B"], "date": "2025-07"},
        {"id": "x-3", "title": "A paper listed", "authors": ["A B"], "date": "2024-01-01", "listed": "2025-02-03"},
        {"id": "x-4", "title": "A paper of no date", "authors": ["A B"], "date": "May 2025"},
    )
    d = tmp_path / "d"
    r = run("ingest", f, data_dir=d)
    assert "added 3, updated 0, unchanged 0, rejected 1" in r.output, r.output
    assert f"{f}:4: 'date' must be a date YYYY-MM-DD, YYYY-MM or YYYY, got 'May 2025'" in r.output
    assert f"{f}:3: note: 'date' '2024-01-01' ignored" in r.output
    shown = json.loads(run("show", "x-1", "--json", data_dir=d).output)
    assert (shown["published"], shown["date"]) == ("2025-05-20", "2025-05-20")
    assert shown["extra"] == {"foo": "bar", "year": 2025}
    assert (published_of(d, "x-2"), published_of(d, "x-3")) == ("2025-07-01", None)
    # show --json's own output read back: the same dates, no note
    again = tmp_path / "again.jsonl"
    again.write_text(run("show", "x-3", "--json", data_dir=d).output.replace("\n", " ") + "\n")
    r = run("ingest", again, data_dir=tmp_path / "d2")
    assert "note" not in r.output and published_of(tmp_path / "d2", "x-3") is None, r.output


# --- files of other shapes ----------------------------------------------------------------------


def test_a_zotero_csl_json_export_is_read_as_csl_json(tmp_path):
    """Before: the item was stored with no authors and no date (they went to `extra` as unknown
    fields), and the one whose id is a zotero.org URL was refused as "not usable in a link"."""
    csl = tmp_path / "csl.json"
    csl.write_text(
        json.dumps(
            [
                {
                    "id": "http://zotero.org/users/123/items/ABCD1234",
                    "type": "article-journal",
                    "title": "A CSL paper",
                    "author": [{"family": "Doe", "given": "Jane"}],
                    "issued": {"date-parts": [["2024", 3]]},
                    "DOI": "10.1000/csl1",
                },
                {
                    "id": "ABCD",
                    "type": "paper-conference",
                    "title": "Another CSL paper",
                    "author": [{"family": "Roe", "given": "Rick"}],
                    "URL": "https://arxiv.org/abs/2401.00001",
                },
            ],
            indent=1,
        ),
        encoding="utf-8",
    )
    d = tmp_path / "d"
    r = run("ingest", "-q", csl, data_dir=d)
    assert r.exit_code == 0, r.output
    assert "added 2, updated 0, unchanged 0, rejected 0" in r.output
    with Store(d, readonly=True) as s:
        doe, roe = s.get("doi:10.1000/csl1"), s.get("2401.00001")
    assert (doe.authors, doe.published, roe.authors) == (["Jane Doe"], "2024-03-01", ["Rick Roe"])


def test_an_empty_file_and_a_wrapped_list_say_what_they_hold(tmp_path):
    """Before: an empty file said only "added 0 ... rejected 0", and {"papers": [...]} was
    refused as "missing or empty 'id'"."""
    names = ("empty.jsonl", "blank.jsonl", "empty.bib", "obj.json", "array.json")
    empty, blank, nothing, wrapped, array = (tmp_path / n for n in names)
    empty.write_bytes(b"")
    array.write_text("[\n]\n")
    blank.write_bytes(b"\n  \n\r\n")
    nothing.write_text("% only a comment\n", encoding="utf-8")
    wrapped.write_text(json.dumps({"papers": [{"id": "2510.00001", "title": "Wrapped in an object"}]}))
    d = tmp_path / "d"
    r = run("ingest", "-q", empty, blank, nothing, wrapped, array, data_dir=d)
    assert r.exit_code == 1
    for f in (empty, blank, array):
        assert f"{f}: holds no records; nothing to ingest" in r.output
    assert "empty.bib: holds no records; nothing to ingest" in r.output
    assert (
        f"{wrapped}:1: expected a record or a list of records, got an object with a list under 'papers'"
    ) in r.output
    assert "added 0, updated 0, unchanged 0, rejected 1" in r.output


def test_a_latin1_bib_imported_into_a_tag_is_one_error_line(tmp_path):
    """`tag import --tag x latin1.bib` died with a UnicodeDecodeError traceback; it reads the file
    as `ingest` does."""
    latin1 = tmp_path / "latin1.bib"
    latin1.write_bytes(b"@article{k1, title={Caf\xe9 au lait methods}, author={M\xfcller, J.}, year={2020}}\n")
    d = tmp_path / "d"
    run("init", data_dir=d)
    r = run("tag", "import", "--tag", "x", latin1, data_dir=d)
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "latin1.bib:1: not UTF-8 (byte 0xe9 at column 24)" in r.output

"""What an ingest says it did: a file whose records join papers already in the store reports
its merges (one summary type for every write; a subclass with its own `+` lost them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def paperdex(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "paperdex", *args], capture_output=True, text=True, timeout=300)


def test_a_bibtex_file_ingested_after_jsonl_reports_its_merge(tmp_path):
    jsonl = tmp_path / "papers.jsonl"
    paper = {
        "id": "2606.27731",
        "title": "Enhancing Numerical Prediction in LLMs via Smooth MMD Alignment",
        "authors": ["Zhuo Zuo", "Li Yue"],
        "abstract": "Numbers in text.",
        "categories": ["cs.CL"],
        "listed": "2026-06-30",
    }
    jsonl.write_text(json.dumps(paper) + "\n")
    bib = tmp_path / "mine.bib"
    bib.write_text(
        "@misc{zuo2026enhancing,\n  title = {Enhancing Numerical Prediction in {LLMs} via Smooth {MMD} Alignment},\n"
        "  author = {Zuo, Zhuo and Yue, Li},\n  year = {2026},\n}\n"
    )
    d = str(tmp_path / "store")
    assert paperdex("--data-dir", d, "ingest", str(jsonl)).returncode == 0
    got = paperdex("--data-dir", d, "ingest", str(bib))
    assert got.returncode == 0, got.stderr
    assert "merged 1" in got.stdout and "added 0" in got.stdout


def test_show_cuts_a_collaborations_author_list_and_says_how_many(tmp_path):
    """A 3,303-author paper (Gemini 2.5's size) is shown with its first ten names, "et al." and
    the count, as every other view cuts a list, not a 48 KB line; --json keeps them all."""
    authors = [f"Author Number{i}" for i in range(3303)]
    paper = {
        "id": "2507.06261",
        "title": "A collaboration",
        "authors": authors,
        "abstract": "Text.",
        "listed": "2025-07-10",
    }
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(paper) + "\n")
    d = str(tmp_path / "store")
    assert paperdex("--data-dir", d, "ingest", str(f)).returncode == 0
    out = paperdex("--data-dir", d, "show", "2507.06261").stdout
    line = out.splitlines()[1]
    assert "Author Number10" not in line and "Author Number9 et al. (3,303 authors; --json lists them all)" in line
    assert len(json.loads(paperdex("--data-dir", d, "show", "2507.06261", "--json").stdout)["authors"]) == 3303


def test_show_cuts_authors_where_every_other_view_does(tmp_path):
    """A real 63-author paper (2503.20314, from the shared corpus): `show` prints the author line
    of the cards, `search` and the API (ten names, then "et al."), not fifty and "… and N more"."""
    from paperdex.paper import paper_from_dict
    from paperdex.web.render import authors_line

    f = Path(__file__).parent / "fixtures" / "arxiv" / "corpus_2503.20314.jsonl"
    p = paper_from_dict(json.loads(f.read_text()))
    d = str(tmp_path / "store")
    assert paperdex("--data-dir", d, "ingest", str(f)).returncode == 0
    line = paperdex("--data-dir", d, "show", "2503.20314").stdout.splitlines()[1]
    assert line == authors_line(p, "et al.") + " (63 authors; --json lists them all)"
    assert line.startswith("WanTeam, :, Ang Wang, Baole Ai,") and "Haiming Zhao et al. (63" in line


def test_every_record_of_a_file_is_counted_once_and_a_repeated_id_is_noted(tmp_path):
    """Three records, two of one paper (its arXiv record and the journal's): "added 2" counted the
    folded one nowhere. Now the counts add up to the records read, a re-run says all unchanged,
    and an id given twice in one file is said, not merged silently."""
    f = tmp_path / "mine.jsonl"
    recs = [
        {"id": "2601.00001", "title": "Scaling laws for sparse mixture of experts", "authors": ["Carol King"]},
        {"id": "doi:10.1145/3600000.3600001", "title": "Scaling Laws for Sparse Mixture-of-Experts",
         "authors": ["King, C."], "venue": "KDD 2026"},
        {"id": "doi:10.1000/only", "title": "A journal-only paper", "authors": ["Erin Gray"]},
        {"id": "doi:10.1000/only", "title": "A journal-only paper, revised", "authors": ["Erin Gray"]},
    ]  # fmt: skip
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    d = str(tmp_path / "store")
    first = paperdex("--data-dir", d, "ingest", str(f))
    assert "added 2, updated 2, unchanged 0, rejected 0, merged 1" in first.stdout, first.stdout
    assert "mine.jsonl:4: note: doi:10.1000/only again (first on line 3)" in first.stderr
    again = paperdex("--data-dir", d, "ingest", str(f))
    assert "added 0, updated 0, unchanged 4, rejected 0" in again.stdout, again.stdout


def test_an_id_given_twice_in_one_file_loses_no_author(tmp_path):
    """Line 1 names "Alice Smith; Bob Jones", line 3 the same id with ["Alice Smith"], another
    title and abstract. The note said one paper, but line 3 replaced the authors: `show` gave
    Alice Smith alone, `search au:Bob` nothing, and Bob was nowhere in the store. Now the two
    records merge as two sources' records do (docs/sources.md, "Merging"): the fuller list of
    the same people stands, the later title and abstract, and what is not shown is kept under
    extra.file; the note says so, and a re-run changes nothing."""
    f = tmp_path / "dup.jsonl"
    recs = [
        {"id": "bib:dup", "title": "Dup paper", "authors": "Alice Smith; Bob Jones", "abstract": "first abstract",
         "categories": "cs.LG"},
        {"id": "bib:other", "title": "Other paper", "authors": "Carol King"},
        {"id": "bib:dup", "title": "Dup paper again", "authors": ["Alice Smith"], "abstract": "dup",
         "categories": "cs.AI"},
        {"id": "bib:rev", "title": "Reversed", "authors": ["Dana Scott"]},
        {"id": "bib:rev", "title": "Reversed", "authors": ["Dana Scott", "Erin Gray"]},
    ]  # fmt: skip
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    d = str(tmp_path / "store")
    first = paperdex("--data-dir", d, "ingest", str(f))
    assert "added 3, updated 2, unchanged 0, rejected 0" in first.stdout, first.stdout
    shown = json.loads(paperdex("--data-dir", d, "show", "bib:dup", "--json").stdout)
    assert shown["authors"] == ["Alice Smith", "Bob Jones"]
    found = json.loads(paperdex("--data-dir", d, "search", "au:Bob", "--json").stdout)
    assert [h["id"] for h in found["hits"]] == ["bib:dup"]
    assert (shown["title"], shown["abstract"], shown["categories"]) == ("Dup paper again", "dup", ["cs.LG", "cs.AI"])
    assert shown["extra"]["file"] == {"authors": ["Alice Smith"], "title": "Dup paper", "abstract": "first abstract"}
    assert (
        "dup.jsonl:3: note: bib:dup again (first on line 1): merged into one paper as records of two sources are: "
        "the fuller list of the same authors stands"
    ) in first.stderr
    assert "is kept under extra.file" in first.stderr
    rev = json.loads(paperdex("--data-dir", d, "show", "bib:rev", "--json").stdout)
    assert (rev["authors"], rev["extra"]["file"]) == (["Dana Scott", "Erin Gray"], {"authors": ["Dana Scott"]})
    again = paperdex("--data-dir", d, "ingest", str(f))
    assert "added 0, updated 0, unchanged 5, rejected 0" in again.stdout, again.stdout
    assert json.loads(paperdex("--data-dir", d, "show", "bib:dup", "--json").stdout) == shown

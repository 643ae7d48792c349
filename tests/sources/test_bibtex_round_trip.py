"""Moving a library between machines through BibTeX: `paperdex tag export --format bibtex` on one,
`paperdex ingest FILE.bib` (or `tag import`) on the other gives the same papers back, field by
field, and re-importing one's own export into the store it came from changes nothing."""

from __future__ import annotations

from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.discover import library as L
from paperdex.paper import Paper, dois, paper_from_dict
from paperdex.sources import bibtex
from paperdex.sources.merge import ingest_with_merge
from paperdex.store import Store

ARXIV = [
    Paper(  # listed the day after it was submitted, revised later; a journal DOI; TeX in the title
        id="2505.13738",
        title=r"$\beta$-VAE at $O(n^2)$ cost: 50% fewer bits_per_dim for R&D",
        authors=["José Fernández-Hernández", "Thomas Müller", "Ada Lovelace"],
        abstract="We study x_1 and $\\mathbb{R}^n$; 95% of it.",
        categories=["cs.LG", "stat.ML", "cs.AI"],
        published="2025-05-19",
        updated="2025-05-21",
        comment="12 pages, 3 figures",
        sources=["arxiv"],
        extra={"arxiv": {"version": "v2", "doi": "10.1000/ABC.123"}},
    ),
    Paper(  # only the listing knows it (as the bundled sample's papers): no published date
        id="2505.14001",
        title="Listed, Never Dated",
        authors=["Wei Zhang"],
        categories=["cs.CL", "quant-ph", "I.2.7; I.2.10", "68T50"],  # arXiv's ACM and MSC classes too
        listed="2025-05-20",
        sources=["arxiv-rss"],
    ),
    Paper(  # an OpenReview paper with its venue, area and code
        id="openreview:Ab12_x",
        title="Clipping Without Heavy Tails",
        authors=["Aleksandr Shestakov", "Zoë Ångström"],
        abstract="Gradient clipping & friends.",
        venue="ICML 2026 poster",
        venue_area="Optimization · Stochastic",
        published="2026-05-01",
        abs_url="https://openreview.net/forum?id=Ab12_x",
        pdf_url="https://openreview.net/pdf?id=Ab12_x",
        code_url="https://github.com/a/b",
        sources=["openreview"],
        extra={"openreview": {"forum": "Ab12_x"}},
    ),
    Paper(  # one OpenReview did not accept: its venue string is no venue of publication
        id="openreview:Rej_1",
        title="A Rejected Submission",
        authors=["Jan Novák"],
        venue="Submitted to ICLR 2025",
        published="2024-09-27",
        sources=["openreview"],
        extra={"openreview": {"decision": "rejected"}},
    ),
]
FILE = [  # records of a JSON Lines file (`paperdex ingest papers.jsonl`)
    {"id": "doi:10.1145/3580305.3599999", "title": "A Year-Only Paper", "authors": ["Li Wei"], "published": "2021"},
    {"id": "mypaper", "title": "Known to the Month", "authors": ["Ann Other"], "published": "2020-07",
     "venue": "NeurIPS 2020 oral", "pdf_url": "https://example.org/mine.pdf", "abs_url": "https://example.org/mine"},
    {"id": "bib:undated", "title": "A Paper Without a Date", "authors": ["Bob Jones"]},
    {"id": "2401.00001", "title": "An arXiv Paper Without a Date", "authors": ["Carol King"], "categories": ["cs.CV"]},
]  # fmt: skip
NORMALISED = [  # stored as a JSON Lines file wrote them; BibTeX reads them as it reads any .bib
    {"id": "2402.00002", "title": r"Learning M\"obius Maps", "authors": ["Smith, Alice", "Bob Jones"]},
]
SHOWN = (
    "id", "title", "authors", "authors_truncated", "abstract", "categories", "venue", "venue_area",
    "published", "listed", "updated", "comment", "code_url",
)  # fmt: skip


def _store(path) -> Store:
    s = Store(path)
    ingest_with_merge(s, ARXIV)
    ingest_with_merge(s, [paper_from_dict(r) for r in FILE + NORMALISED])
    L.add_to_tag(s, "moved", [r[0] for r in s.conn.execute("SELECT id FROM papers")])
    return s


def _precision(p: Paper) -> str | None:
    """The precision the record knows its published date to, wherever its source keeps it."""
    return next((v for s in p.extra.values() if isinstance(s, dict) and (v := s.get("date_precision"))), None)


def view(p: Paper) -> dict:
    """What a user sees of a paper: its fields, links, DOIs and the precision of its date."""
    return {k: getattr(p, k) for k in SHOWN} | {"links": p.links(), "dois": dois(p.id, p.extra), "of": _precision(p)}


def _ingest(data_dir, path) -> str:
    r = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "ingest", str(path)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


def test_an_exported_library_comes_back_field_by_field(tmp_path):
    with _store(tmp_path / "a") as a:
        ids = sorted(L.tag_papers(a, "moved"))
        bib = L.export_bibtex(a, "moved")
        before = {pid: view(a.get(pid)) for pid in ids}
    (tmp_path / "moved.bib").write_text(bib, "utf-8")
    assert len(ids) == len(ARXIV) + len(FILE) + len(NORMALISED) == 9

    _ingest(tmp_path / "b", tmp_path / "moved.bib")  # the other machine: `paperdex ingest moved.bib`
    with Store(tmp_path / "b") as b:
        after = {pid: view(p) if (p := b.get(pid)) else None for pid in ids}
    same = [pid for pid in ids if after[pid] == before[pid]]
    assert sorted(set(ids) - set(same)) == ["2402.00002"], {i: (before[i], after[i]) for i in ids if i not in same}
    # the one paper whose fields change is the JSON Lines record that stored TeX and "Last, First"
    got, was = after["2402.00002"], before["2402.00002"]
    assert (got["title"], got["authors"]) == ("Learning Möbius Maps", ["Alice Smith", "Bob Jones"])
    assert {k: v for k, v in got.items() if k not in ("title", "authors")} == {
        k: v for k, v in was.items() if k not in ("title", "authors")
    }

    with Store(tmp_path / "c") as c:  # or `paperdex tag import moved.bib --tag moved`
        res = L.import_bibtex(c, bib, "moved")
        assert res["ingested"] == 9 and res["errors"] == 0
        assert sorted(L.tag_papers(c, "moved")) == ids  # the tag holds the same ids
        assert {pid: view(c.get(pid)) for pid in same} == {pid: before[pid] for pid in same}
        # and the copy's export reads back as the original's: a second move changes nothing more
        again = bibtex.parse_bibtex(L.export_bibtex(c, "moved")).papers
        assert again == bibtex.parse_bibtex(bib).papers


def test_reimporting_ones_own_export_changes_nothing(tmp_path):
    with _store(tmp_path / "a") as a:
        bib = L.export_bibtex(a, "moved")
        stored = {p.id: p.content_hash() for p in map(a.get, L.tag_papers(a, "moved"))}
    (tmp_path / "moved.bib").write_text(bib, "utf-8")
    out = _ingest(tmp_path / "a", tmp_path / "moved.bib")
    assert "added 0, updated 0, unchanged 9, rejected 0" in out, out  # was "updated 9"
    with Store(tmp_path / "a") as a:
        assert {pid: a.get(pid).content_hash() for pid in stored} == stored
    # an entry edited in a reference manager is an update, as from any .bib
    edited = bib.replace("{{Listed, Never Dated}}", "{{Listed, Dated at Last}}")
    (tmp_path / "edited.bib").write_text(edited, "utf-8")
    assert "added 0, updated 1, unchanged 8, rejected 0" in _ingest(tmp_path / "a", tmp_path / "edited.bib")


def test_another_tools_fields_of_the_same_names_are_kept_not_read():
    """paperdex's own fields are read only in their form: another tool's `updated`, `categories`
    or `published` skips no entry and changes no field; it is kept with the entry's fields."""
    text = """@article{smith2020x,
  title = {A Paper}, author = {Smith, Alice}, year = {2020}, month = jul,
  updated = {last week}, listed = {2020-13-45}, published = {2020},
  categories = {Machine Learning}, paperdex-id = {}, openreview = {https://example.org/forum?id=x}
}"""
    res = bibtex.parse_bibtex(text)
    assert res.errors == []
    (p,) = res.papers
    assert (p.id, p.published, p.listed, p.updated, p.categories) == ("bib:smith2020x", "2020-07-01", None, None, [])
    assert "openreview" not in p.links()
    kept = p.slot("bibtex")
    assert (kept["updated"], kept["listed"], kept["published"], kept["categories"]) == (
        "last week",
        "2020-13-45",
        "2020",
        "Machine Learning",
    )

"""arXiv metadata read as it is meant: the metadata snapshot's JSON Lines, titles with TeX
accents, "et al." and "Collaboration:" in author strings, abstract paragraphs, category
aliases. Real-format samples (tests/fixtures/arxiv/README.md, tests/fixtures/real)."""

from __future__ import annotations

from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.ingest import read_records
from paperdex.sources import arxiv
from paperdex.store import Store

from .conftest import Router, fixture, param, real, xml


def test_the_metadata_snapshot_is_read_field_by_field(tmp_path):
    errors: list[str] = []
    papers = {p.id: p for p in read_records(fixture("arxiv", "metadata_snapshot.jsonl"), errors)}
    assert len(errors) == 1 and errors[0].endswith(":5: 'versions' must be a list of {version, created}, got str")
    first = papers["0704.0001"]
    assert first.authors == ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C.-P. Yuan"]
    assert first.title == "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    assert (first.published, first.updated, first.categories) == ("2007-04-02", "2007-07-24", ["hep-ph"])
    assert first.extra["arxiv"]["journal_ref"] == "Phys.Rev.D76:013009,2007"
    assert first.extra["arxiv"]["version"] == "v2" and first.comment == "37 pages, 15 figures; published version"
    ner = papers["2503.14755"]
    assert ner.authors == ["Omar E. Rakha", "Hazem M. Abbas"] and ner.categories == ["cs.CL", "cs.AI"]
    assert ner.abstract.count("\n\n") == 1 and ner.abstract.startswith("Word embeddings have been a key")
    assert ner.abstract.split("\n\n")[1].startswith("Evaluation of the model shows")
    atlas = papers["1207.7214"]
    assert atlas.authors == ["G. Aad", "T. Abajyan", "B. Abbott", "J. Abdallah"] and atlas.authors_truncated
    assert atlas.extra["arxiv"]["collaboration"] == "ATLAS Collaboration"
    tex = papers["2401.00002"]
    assert tex.title == r"On Möbius maps of $\hat{x}$" and tex.authors == ["Jörg Müller"]
    # the CLI takes the dump as it is
    r = CliRunner().invoke(
        cli, ["--data-dir", str(tmp_path / "d"), "ingest", str(fixture("arxiv", "metadata_snapshot.jsonl"))]
    )
    assert "added 4, updated 0, unchanged 0, rejected 1" in r.output
    with Store(tmp_path / "d", readonly=True) as s:
        assert s.get("0704.0001").published == "2007-04-02"


def test_author_strings_with_et_al_and_a_collaboration():
    names, _ = arxiv.split_authors("ATLAS Collaboration: G. Aad, B. Abbott, J. Abdallah, et al")
    assert names == ["G. Aad", "B. Abbott", "J. Abdallah"]
    assert arxiv.split_authors("A. Smith and B. Jones et al.")[0] == ["A. Smith", "B. Jones"]
    assert arxiv.split_authors("Al Etal, Bo Alet")[0] == ["Al Etal", "Bo Alet"]  # names, not "et al."
    assert arxiv.cut_author_list("A. Smith, et al.") and not arxiv.cut_author_list("Al Etal")


def test_titles_decode_tex_accents_outside_math_and_keep_the_rest():
    assert arxiv.title_text('M\\"obius\n  maps of $\\ddot{x}$ and \\emph{Erd\\H{o}s}') == (
        "Möbius maps of $\\ddot{x}$ and \\emph{Erdős}"
    )


def test_abstract_paragraph_breaks_are_kept():
    raw = "  First paragraph, wrapped\nover two lines.\n  Second paragraph.\n"
    assert arxiv.abstract_text(raw) == "First paragraph, wrapped over two lines.\n\nSecond paragraph."
    assert arxiv.abstract_text("One line only.") == "One line only."


def test_a_category_harvest_keeps_papers_listed_under_the_alias(store, make_http):
    """A math.NA paper (cs.NA is an alias of math.NA) in a harvest of the set cs: --category
    cs.NA and --category cs keep it."""
    page = real("arxiv_oai", "listrecords_arXivRaw_math.xml")
    na = [p.id for p in arxiv.parse_oai_page(page.read_bytes()).papers if p.categories[0] == "math.NA"]
    assert len(na) == 1
    for wanted in (["cs.NA"], ["cs"]):
        router = Router().add(lambda q: param(q, "verb") == "ListRecords", xml(page))
        arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2008-01-01", "2008-12-31", categories=wanted))
        assert store.get(na[0]) is not None
        store.delete(na[0])

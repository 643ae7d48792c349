"""File imports: BibTeX (import, export, round trip), and the seed records stores still hold."""

from __future__ import annotations

import click
from click.testing import CliRunner

from paperdex.cli.sources import export
from paperdex.paper import Paper
from paperdex.settings import Settings
from paperdex.sources import bibtex
from paperdex.sources.merge import ingest_with_merge
from paperdex.sources.sync import import_file
from paperdex.store import Store

from .conftest import fixture

NEPTUNE_ABSTRACT = (
    "Modern Vision-Language Models (VLMs) have achieved impressive performance in various tasks, yet they "
    "often struggle with compositional reasoning, the ability to decompose and recombine concepts to "
    "solve novel problems. While neuro-symbolic approaches offer a promising direction, they are "
    "typically constrained by crisp logical execution or predefined predicates, which limit flexibility. "
    "In this work, we introduce NePTune, a neuro-symbolic framework that overcomes these limitations "
    "through a hybrid execution model that integrates the perception capabilities of foundation vision "
    "models with the compositional expressiveness of symbolic reasoning. NePTune dynamically translates "
    "natural language queries into executable Python programs that blend imperative control flow with "
    "soft logic operators capable of reasoning over VLM-generated uncertainty. Operating in a "
    "training-free manner, NePTune, with a modular design, decouples perception from reasoning, yet its "
    "differentiable composition operations support fine-tuning. We evaluate NePTune on multiple visual "
    "reasoning benchmarks and various domains, utilizing adversarial tests, and demonstrate a significant "
    "improvement over base models, as well as its effective compositional generalization and adaptation "
    "capabilities in novel environments."
)


def stored_seed_record() -> Paper:
    """A record as the seed-page import (gone since issue 33) stored it: untitled, its title the
    abstract's start; stores still hold such records, and a merge finds them by abstract."""
    return Paper(
        id="seed:737b875dc8cf",
        title=NEPTUNE_ABSTRACT[:160].rsplit(" ", 1)[0] + "…",
        authors=["Danial Kamali", "Parisa Kordjamshidi"],
        abstract=NEPTUNE_ABSTRACT,
        venue_area="Computer Vision · Vision Models & Multimodal",
        sources=["seed"],
        extra={"seed": {"title_from_abstract": True, "page": "000_ec0922857c972679.txt", "line": 5}},
    )


# --- stored seed records ----------------------------------------------------------------------


def test_text_files_are_left_to_other_importers(store, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("论文检索\n\nAda Lovelace\n\nWe prove a bound on engines.\n")  # a seed page: no longer read
    assert import_file(store, f) is None
    assert import_file(store, tmp_path / "papers.jsonl") is None


def test_seed_records_merge_into_the_preprint_by_abstract(store):
    seed = stored_seed_record()
    preprint = Paper(
        id="2509.25757",
        title="NePTune: A Neuro-Pythonic Framework for Tunable Compositional Reasoning on Vision-Language",
        authors=["Danial Kamali", "Parisa Kordjamshidi"],
        abstract=seed.abstract,
        categories=["cs.AI", "cs.CL"],
        sources=["arxiv"],
    )
    ingest_with_merge(store, [preprint])
    s = ingest_with_merge(store, [seed])
    assert s.merged == 1 and store.count() == 1
    p = store.get("2509.25757")
    assert p.title.startswith("NePTune")  # the real title wins over the synthetic one
    assert p.venue_area == "Computer Vision · Vision Models & Multimodal"
    assert p.sources == ["arxiv", "seed"]


# --- BibTeX -------------------------------------------------------------------------------


def test_bibtex_import_maps_fields_and_reports_broken_entries(store):
    s = import_file(store, fixture("bibtex", "library.bib"))
    assert (s.added, s.rejected) == (3, 2)
    assert s.errors == [
        "library.bib:31: entry does not parse ('@misc{broken2025,'); skipped",
        "library.bib:35: entry duplicate key ('@misc{kingma2014adam,'); skipped",
    ]
    zuo = store.get("2606.27731")
    assert zuo.title == "Enhancing Numerical Prediction in LLMs via Smooth MMD Alignment"
    assert zuo.authors == ["Zhuo Zuo", "Li Yue", "Wenhao Zheng"] and zuo.authors_truncated
    assert zuo.categories == ["cs.CL"]
    adam = store.get("1412.6980")  # arXiv id recovered from the arXiv DOI
    assert adam.venue == "International Conference on Learning Representations"
    assert adam.extra["bibtex"]["doi"] == "10.48550/arXiv.1412.6980"
    beta = store.get("bib:higgins2017beta")
    assert beta.title.startswith("$\\beta$-VAE: Learning")
    assert beta.authors[1] == "Loïc Matthey"


def test_bibtex_round_trip(tmp_path):
    papers = [
        Paper(
            id="2606.14795",
            title="Position: The Systemic Lack of Agency in Visual Reasoning",
            authors=["Yizhao Huang", "Haoyang Chen"],
            abstract="This paper argues that a systemic lack of Agency constrains reasoning (50% of it).",
            categories=["cs.CV", "cs.AI"],
            venue="ICML 2026 oral",
            venue_area="Deep Learning · Large Language Models",
            published="2026-06-16",
            authors_truncated=True,
            sources=["arxiv", "openreview"],
        ),
        Paper(
            id="openreview:Op7Qw3eRt5",
            title="Clipping Without Heavy Tails: the $\\ell_2$ case",
            authors=["Aleksandr Shestakov", "Eduard Gorbunov"],
            abstract="Gradient clipping is widely used.",
            venue="ICML 2026 poster",
            venue_area="Optimization · Stochastic",
            sources=["openreview"],
        ),
    ]
    a = Store(tmp_path / "a")
    ingest_with_merge(a, papers)
    out = tmp_path / "export.bib"
    group = _group(tmp_path / "a")
    res = CliRunner().invoke(group, ["export", "--all", "-o", str(out)])
    assert res.exit_code == 0, res.output
    b = Store(tmp_path / "b")
    s = import_file(b, out)
    assert (s.added, s.rejected) == (2, 0)
    fields = (
        "id",
        "title",
        "authors",
        "abstract",
        "categories",
        "venue",
        "venue_area",
        "published",
        "authors_truncated",
    )
    for p in papers:
        q = b.get(p.id)
        assert {f: getattr(q, f) for f in fields} == {f: getattr(p, f) for f in fields}


def test_export_by_ids_query_and_filters(tmp_path):
    data = tmp_path / "data"
    s = Store(data)
    ingest_with_merge(s, bibtex.read_bibtex(fixture("bibtex", "library.bib")).papers)
    s.close()
    run = CliRunner().invoke
    g = _group(data)
    r = run(g, ["export", "1412.6980"])
    assert r.exit_code == 0 and "@article{kingma2014adam," in r.output and "eprint       = {1412.6980}" in r.output
    assert "journal      = {International Conference on Learning Representations}" in r.output
    assert "year         = {2015}" in r.output and "doi          = {10.48550/arXiv.1412.6980}" in r.output
    r = run(g, ["export", "numerical", "prediction"])
    assert r.exit_code == 0 and "2606.27731" in r.output and "1412.6980" not in r.output
    r = run(g, ["export", "au:Kingma"])  # query syntax is not mistaken for an id
    assert r.exit_code == 0 and "kingma2014adam" in r.output
    r = run(g, ["export", "bib:higgins2017beta", "2606.27731"])
    assert r.output.count("@") == 2
    r = run(g, ["export", "--category", "cs.CL"])
    assert r.output.count("@") == 1
    r = run(g, ["export", "9999.99999"])
    assert r.exit_code == 1 and "not in this store: 9999.99999" in r.output
    r = run(g, ["export"])
    assert r.exit_code == 2


def _group(data_dir):
    @click.group()
    @click.pass_context
    def g(ctx):
        ctx.obj = {"settings": Settings.from_env(data_dir=data_dir)}

    g.add_command(export)
    return g


def test_preprint_arriving_after_the_seed_record_takes_it_over(store):
    seed = stored_seed_record()
    ingest_with_merge(store, [seed])
    preprint = Paper(
        id="2509.25757",
        title="NePTune: A Neuro-Pythonic Framework for Tunable Compositional Reasoning on Vision-Language",
        authors=["Danial Kamali", "Parisa Kordjamshidi"],
        abstract=seed.abstract,
        sources=["arxiv"],
    )
    ingest_with_merge(store, [preprint])
    assert store.count() == 1
    p = store.get("2509.25757")
    assert p.title.startswith("NePTune") and p.venue_area == "Computer Vision · Vision Models & Multimodal"


def test_bibtex_from_scholar_dblp_and_zotero(store):
    """What researchers export from Google Scholar, DBLP and Zotero: arXiv ids found wherever
    the tool puts them, year-only dates kept, CoRR and "arXiv preprint" are no venue, an
    archive is no category, TeX accents in titles and venues decoded (math kept)."""
    res = bibtex.read_bibtex(fixture("bibtex", "exports.bib"))
    assert res.errors == []
    by = {p.extra["bibtex"]["key"]: p for p in res.papers}
    scholar = by["vaswani2017attention"]
    assert (scholar.id, scholar.venue, scholar.published) == ("1706.03762", None, "2017-06-01")  # the id's month
    assert by["he2016deep"].published == "2016-01-01" and by["he2016deep"].id == "bib:he2016deep"
    dblp = by["DBLP:journals/corr/abs-2501-12948"]
    assert (dblp.id, dblp.venue) == ("2501.12948", None)
    adam = by["DBLP:journals/corr/KingmaB14"]
    assert (adam.id, adam.venue, adam.published) == ("1412.6980", None, "2014-12-01")
    zotero = by["liu_visual_2023"]
    assert (zotero.id, zotero.categories, zotero.published) == ("2304.08485", [], "2023-12-01")
    assert zotero.extra["bibtex"]["primaryclass"] == "cs"
    accents = by["mobius2024"]
    assert accents.title == r"Learning Möbius Transformations of Erdős--Rényi Graphs with $\hat{f}$"
    assert accents.venue == "Actes de la Conférence Française d'Apprentissage"
    assert accents.authors == ["Jörg Müller", "René François"]
    # a year-only entry exports its year alone, not an invented day
    text = bibtex.entry(by["he2016deep"])
    assert "year         = {2016}" in text and "month" not in text and "date " not in text


def test_an_arxiv_entry_with_only_a_year_is_dated_by_its_id_and_links_to_arxiv():
    """DBLP and Google Scholar give an arXiv paper only a year; its id says the month it was
    submitted (2505.13738: May 2025), so it is dated 2025-05-01, not 2025-01-01, and exports
    that month (known) but no day (not known). DBLP sets ``url`` to the paper's DOI: an arXiv
    paper's abstract link is its arXiv page all the same (the DOI stays in ``doi``)."""
    res = bibtex.read_bibtex(fixture("bibtex", "exports.bib"))
    by = {p.extra["bibtex"]["key"]: p for p in res.papers}
    may = by["DBLP:journals/corr/abs-2505-13738"]
    assert (may.id, may.published) == ("2505.13738", "2025-05-01")
    assert may.links()["abs"] == "https://arxiv.org/abs/2505.13738"
    assert may.extra["bibtex"]["doi"] == "10.48550/ARXIV.2505.13738"
    assert by["vaswani2017attention"].published == "2017-06-01"  # Google Scholar: year 2017, id 1706
    deepseek = by["DBLP:journals/corr/abs-2501-12948"]
    assert deepseek.links()["abs"] == "https://arxiv.org/abs/2501.12948"
    text = bibtex.entry(may)
    assert "year         = {2025}" in text and "month        = may" in text and "date " not in text
    assert "url          = {https://arxiv.org/abs/2505.13738}" in text


def test_bibtex_export_of_openreview_decisions():
    """A rejected paper has no booktitle "Submitted to ICLR 2025"; an accepted one is published
    in "NeurIPS 2024", not in a journal "NeurIPS 2024 oral"."""
    rejected = Paper(
        id="openreview:Rj1",
        title="A rejected idea",
        authors=["Ann Lee"],
        venue="Submitted to ICLR 2025",
        sources=["openreview"],
        extra={"openreview": {"decision": "rejected", "presentation": None}},
    )
    text = bibtex.entry(rejected)
    assert "booktitle" not in text and "journal" not in text
    assert "note         = {Submitted to ICLR 2025}" in text and text.startswith("@misc{")
    oral = Paper(
        id="2410.00001",
        title="An oral paper",
        authors=["Bo Li"],
        venue="NeurIPS 2024 oral",
        published="2024-10-01",
        sources=["arxiv", "openreview"],
        extra={
            "openreview": {"decision": "accepted", "presentation": "oral"},
            "bibtex": {"type": "article"},  # imported from Google Scholar as an arXiv @article
            "merge": {"fields": {"venue": "openreview"}},
        },
    )
    text = bibtex.entry(oral)
    assert text.startswith("@inproceedings{") and "booktitle    = {NeurIPS 2024}," in text
    assert "journal" not in text
    (back,) = bibtex.parse_bibtex(text).papers
    assert back.venue == "NeurIPS 2024 oral"  # the round trip keeps the presentation

"""Merge rules: which source wins which field, and what must never happen."""

from __future__ import annotations

from paperdex.paper import Paper
from paperdex.sources.merge import ingest_with_merge, merge_papers, norm_title, surname


def arxiv_rec(**kw) -> Paper:
    d = dict(
        id="2501.00001",
        title="Scaling Laws for $\\beta$-Sparse Attention",
        authors=["Ada Lovelace", "Alan Turing"],
        abstract="We study sparse attention. " * 8,
        categories=["cs.LG", "cs.CL"],
        published="2025-01-02",
        comment="12 pages",
        sources=["arxiv"],
        extra={"arxiv": {"license": "CC BY 4.0"}},
    )
    d.update(kw)
    return Paper(**d)


def venue_rec(**kw) -> Paper:
    d = dict(
        id="openreview:Xy12",
        title="Scaling laws for β-sparse attention",
        authors=["Lovelace, Ada", "Alan Turing"],
        abstract="We study sparse attention (camera-ready).",
        venue="NeurIPS 2025 spotlight",
        venue_area="Deep Learning · Attention Mechanisms",
        published="2025-09-18",
        sources=["openreview"],
        extra={"openreview": {"forum": "Xy12", "decision": "spotlight"}},
    )
    d.update(kw)
    return Paper(**d)


def test_normalisation_ignores_case_latex_accents_and_name_order():
    assert norm_title("Scaling Laws for $\\beta$-Sparse Attention") == norm_title(
        "scaling laws for beta sparse attention"
    )
    assert surname("Lovelace, Ada") == surname("Ada Lovelace") == "lovelace"
    assert surname("Loïc Matthey") == surname("Loic Matthey")
    assert surname("Martin Luther King Jr.") == "king"


def test_each_field_comes_from_the_source_trusted_for_it():
    m = merge_papers(arxiv_rec(), venue_rec(), "title + first author")
    assert m.id == "2501.00001"
    assert m.title == "Scaling Laws for $\\beta$-Sparse Attention"  # arXiv's text
    assert m.abstract.startswith("We study sparse attention. We study")
    assert m.venue == "NeurIPS 2025 spotlight"  # the venue's venue
    assert m.published == "2025-01-02"
    assert m.categories == ["cs.LG", "cs.CL"]
    assert m.sources == ["arxiv", "openreview"]
    assert m.extra["arxiv"] == {"license": "CC BY 4.0"}
    # what lost to arXiv is kept under the venue's own key, not thrown away
    assert m.extra["openreview"] == {
        "forum": "Xy12",
        "decision": "spotlight",
        "title": "Scaling laws for β-sparse attention",
        "abstract": "We study sparse attention (camera-ready).",
        "authors": ["Lovelace, Ada", "Alan Turing"],
        "published": "2025-09-18",
    }
    assert m.extra["merge"]["fields"]["venue"] == "openreview"
    assert m.extra["merge"]["matched"] == ["openreview openreview:Xy12: title + first author"]


def test_order_of_arrival_does_not_change_the_result():
    a = merge_papers(arxiv_rec(), venue_rec(), "x")
    b = merge_papers(venue_rec(), arxiv_rec(), "x")
    for f in (
        "id",
        "title",
        "abstract",
        "authors",
        "venue",
        "venue_area",
        "published",
        "categories",
        "comment",
    ):
        assert getattr(a, f) == getattr(b, f), f


def test_merging_twice_changes_nothing():
    once = merge_papers(arxiv_rec(), venue_rec(), "x")
    assert merge_papers(once, venue_rec(), "x").content_hash() == once.content_hash()
    assert merge_papers(once, arxiv_rec(), "x").content_hash() == once.content_hash()


def test_a_cut_author_list_never_replaces_a_full_one():
    seed = Paper(
        id="seed:abc",
        title="t",
        authors=["Ada Lovelace"],
        authors_truncated=True,
        sources=["seed"],
        venue_area="Theory · Learning Theory",
    )
    m = merge_papers(arxiv_rec(), seed, "x")
    assert m.authors == ["Ada Lovelace", "Alan Turing"] and not m.authors_truncated
    assert m.venue_area == "Theory · Learning Theory"  # but its area is kept


def test_a_newer_version_from_the_same_source_wins():
    v2 = arxiv_rec(title="Scaling Laws for Sparse Attention, Revisited", comment="14 pages", updated="2025-03-01")
    m = merge_papers(merge_papers(arxiv_rec(), venue_rec(), "x"), v2, "same id")
    assert (m.title, m.comment, m.updated) == (
        "Scaling Laws for Sparse Attention, Revisited",
        "14 pages",
        "2025-03-01",
    )
    assert m.venue == "NeurIPS 2025 spotlight"


def test_two_preprints_sharing_a_title_stay_apart(store):
    a = arxiv_rec()
    b = arxiv_rec(id="2502.00002", abstract="A different paper. " * 8)
    s = ingest_with_merge(store, [a, b])
    assert (s.added, s.merged) == (2, 0)


def test_records_of_one_paper_in_one_batch_become_one(store):
    s = ingest_with_merge(store, [venue_rec(), arxiv_rec()])
    assert store.count() == 1
    assert s.merged == 1
    assert store.get("2501.00001").sources == ["openreview", "arxiv"]


def test_replaced_record_is_counted_as_updated_not_added(store):
    ingest_with_merge(store, [venue_rec()])
    s = ingest_with_merge(store, [arxiv_rec()])
    assert (s.added, s.updated, s.merged) == (0, 1, 1)
    assert store.count() == 1 and store.resolve("openreview:Xy12") == "2501.00001"


def _file_rec(**kw) -> Paper:
    return Paper(**{"sources": ["file"], "abstract": "We derive scaling laws for sparse MoE models.", **kw})


PREPRINT = dict(
    id="2601.00001", title="Scaling laws for sparse mixture of experts", authors=["Carol King", "Dan Brown"]
)
JOURNAL = dict(
    id="doi:10.1145/3600000.3600001",
    title="Scaling Laws for Sparse Mixture-of-Experts",
    authors=["King, C."],
    venue="KDD 2026",
    extra={"doi": "10.1145/3600000.3600001"},
)


def test_a_shorter_or_abbreviated_author_list_never_replaces_a_fuller_one(store):
    """The user's own arXiv record and the journal record of the same paper (both source "file"):
    the journal's "King, C." lost Dan Brown and Carol King's given name. Either order of arrival
    keeps both authors in full, and the journal's list under extra["file"]."""
    for order in ((PREPRINT, JOURNAL), (JOURNAL, PREPRINT)):
        ingest_with_merge(store, [_file_rec(**order[0])])
        ingest_with_merge(store, [_file_rec(**order[1])])
        p = store.get("2601.00001")
        assert p is not None and store.count() == 1
        assert p.authors == ["Carol King", "Dan Brown"] and p.venue == "KDD 2026"
        assert p.extra["file"]["authors"] == ["King, C."]
        store.delete("2601.00001")


def test_a_doi_record_with_initials_keeps_the_arxiv_papers_authors(store):
    """An arXiv paper from a file, then a DOI record naming it "A. Lovelace": no one is lost."""
    ingest_with_merge(store, [arxiv_rec(sources=["file"], extra={})])
    doi = _file_rec(id="doi:10.1000/abc999", title=arxiv_rec().title, authors=["A. Lovelace"], venue="JMLR")
    ingest_with_merge(store, [doi])
    p = store.get("2501.00001")
    assert p is not None and p.authors == ["Ada Lovelace", "Alan Turing"] and p.venue == "JMLR"
    assert p.extra["file"]["authors"] == ["A. Lovelace"]


def test_a_list_of_other_people_still_goes_by_the_sources_trust():
    """Not the same people (a surname the other list lacks): the rank decides, as before."""
    m = merge_papers(arxiv_rec(authors=["Ada Lovelace"]), venue_rec(authors=["Ada Lovelace", "Grace Hopper"]), "x")
    assert m.authors == ["Ada Lovelace", "Grace Hopper"]  # the fuller list of the same people plus one
    m = merge_papers(arxiv_rec(authors=["Ada Lovelace"]), venue_rec(authors=["Grace Hopper"]), "x")
    assert m.authors == ["Ada Lovelace"] and m.extra["openreview"]["authors"] == ["Grace Hopper"]


CVPR_BIB = """@inproceedings{garosi2026lmm,
  title = {Large Multimodal Models as General In-Context Classifiers},
  author = {Garosi, Marco and Farina, Matteo},
  booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year = {2026},
}"""


def test_a_year_only_date_never_replaces_an_exact_one_it_agrees_with(store):
    """Hugging Face's 2026-02-26 and the CVPR entry's `year = {2026}`: the paper sat on 1 January
    (the newest and daily views, date: filters). Either order keeps the day, the venue comes from
    the entry, and the entry's own date is kept under extra.bibtex; its export keeps the day."""
    from paperdex.sources.bibtex import parse_bibtex, to_bibtex

    hf = Paper(
        id="2602.23229",
        title="Large Multimodal Models as General In-Context Classifiers",
        authors=["Marco Garosi", "Matteo Farina"],
        published="2026-02-26",
        sources=["hf"],
    )
    bib = parse_bibtex(CVPR_BIB).papers[0]
    assert (bib.published, bib.extra["bibtex"]["date_precision"]) == ("2026-01-01", "year")
    for order in ((hf, bib), (bib, hf)):
        for record in order:
            ingest_with_merge(store, [record])
        p = store.get("2602.23229")
        assert p is not None and store.count() == 1
        assert (p.published, p.venue) == ("2026-02-26", bib.venue)
        assert p.extra["bibtex"]["published"] == "2026-01-01"
        assert "date         = {2026-02-26}" in to_bibtex([p])
        store.delete("2602.23229")


def test_a_date_of_another_year_still_goes_by_the_sources_trust():
    venue = venue_rec(published="2026-01-01", extra={"bibtex": {"date_precision": "year"}}, sources=["bibtex"])
    m = merge_papers(arxiv_rec(published="2025-01-02"), venue, "x")
    assert m.published == "2025-01-02" and m.extra["bibtex"]["published"] == "2026-01-01"  # as before


def test_a_month_of_one_source_never_replaces_that_sources_day_it_agrees_with(store):
    """A .bib with `month = jul`, then one with `date = {2025-07-15}`, then the first again: the
    second ingest showed the day, and the third put the paper back on 2025-07-01 (the day lost
    for good): the source's slot still said "month" of the day. Either order, any number of
    times, the day stays, and the export writes it."""
    from paperdex.sources.bibtex import parse_bibtex, to_bibtex

    head = "@article{k1, title = {A paper of July}, author = {Smith, Alice}, journal = {JMLR}, "
    month = parse_bibtex(head + "year = {2025}, month = {jul}}").papers[0]
    day = parse_bibtex(head + "date = {2025-07-15}}").papers[0]
    before = store.count()
    for order in ((month, day, month, day, month), (day, month, day, month)):
        for record in order:
            ingest_with_merge(store, [record])
            assert store.count() == before + 1
        p = store.get("bib:k1")
        assert p is not None and p.published == "2025-07-15"
        assert "date         = {2025-07-15}" in to_bibtex([p])
        store.delete("bib:k1")
    first = parse_bibtex(head + "date = {2025-07-01}}").papers[0]  # a day that is the month's first
    for order in ((first, month, month), (month, first, month)):
        for record in order:
            ingest_with_merge(store, [record])
        p = store.get("bib:k1")
        assert p is not None and "date         = {2025-07-01}" in to_bibtex([p])
        store.delete("bib:k1")


def test_an_id_twice_in_one_run_merges_and_a_later_run_updates(store):
    """One id twice in one run (a file that repeats it, here one record per chunk): two records
    of the paper, so the fuller list of the same people stands and the other is kept under
    extra["file"]; it used to replace Bob Jones silently. The same record in a later run is the
    source's update of its own record: the user who took Bob off the list gets that."""
    both = _file_rec(id="bib:dup", title="Dup paper", authors=["Alice Smith", "Bob Jones"])
    alone = _file_rec(id="bib:dup", title="Dup paper, revised", authors=["Alice Smith"])
    other = _file_rec(id="bib:other", title="Another paper", authors=["Carol King"])
    ingest_with_merge(store, [both, other, alone], batch_size=1)
    p = store.get("bib:dup")
    assert p is not None and p.authors == ["Alice Smith", "Bob Jones"] and p.title == "Dup paper, revised"
    assert p.extra["file"] == {"authors": ["Alice Smith"], "title": "Dup paper"}
    ingest_with_merge(store, [alone])
    assert store.get("bib:dup").authors == ["Alice Smith"]

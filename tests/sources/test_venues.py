"""The venue read from the arXiv comment and journal-ref: real comments of the shared corpus
(arXiv metadata, CC0), the table of venues in paperdex/data/venues.tsv, the real merge and
search. OpenReview's decision replaces a venue read from a comment."""

from __future__ import annotations

import json

import pytest

from paperdex.paper import Paper
from paperdex.search import Filters, Searcher
from paperdex.sources import openreview, venues
from paperdex.sources.merge import ingest_with_merge

from .conftest import real


@pytest.mark.parametrize(
    ("comment", "label"),
    [
        ("Accepted to NeurIPS 2025", "NeurIPS 2025"),
        ("CVPR 2026 (Highlight)", "CVPR 2026 highlight"),
        ("ICLR 2026 Oral", "ICLR 2026 oral"),
        ("The paper is accepted by ACM MM' 25", "ACM MM 2025"),
        ("Accepted to CVPR'26. Project page: https://xk-huang.github.io/VecGlypher/", "CVPR 2026"),
        ("AAAI2025", "AAAI 2025"),
        ("Accepted to Findings of ACL 2026", "ACL 2026 Findings"),
        ("Accepted to CVPR Findings 2026", "CVPR 2026 Findings"),
        ("Accepted to NeurIPS 2025 Datasets and Benchmarks Track", "NeurIPS 2025 Datasets and Benchmarks"),
        ("Accepted by ACL 2025 Demo", "ACL 2025 Demo"),
        ("Accepted to SCSL @ ICLR 2025", "ICLR 2025 Workshop"),
        ("Accepted to CVPR2025W", "CVPR 2025 Workshop"),
        (
            "Accepted at The IEEE/CVF Conference on Computer Vision and Pattern Recognition 2025 - CVPRW",
            "CVPR 2025 Workshop",
        ),
        ("Published at SAIAD 2026 Workshop at CVPR 2026", "CVPR 2026 Workshop"),
        ("SIGIR 2025 LiveRAG Workshop (Oral Presentation)", "SIGIR 2025 Workshop oral"),
        (
            "To appear in Proceedings of the 43rd International Conference on Machine Learning\n  (ICML 2026)",
            "ICML 2026",
        ),
        ("Accepted at the 2025 Conference on Empirical Methods in Natural Language Processing", "EMNLP 2025"),
        ("Accepted by SIGGRAPH Asia 2025 (TOG)", "SIGGRAPH Asia 2025"),
        ("This paper has been accepted as a poster presentation at AAAI-2026", "AAAI 2026 poster"),
        ("13 pages, 7 figures. Published in IEEE Transactions on Multimedia.", "TMM"),
        ("ICCV 2025 (Highlights)", "ICCV 2025 highlight"),
        ("CVPR26 Finding", "CVPR 2026 Findings"),
        (
            "NeurIPS 2025 DB Track. Project page: https://authoritywang.github.io/partnext",
            "NeurIPS 2025 Datasets and Benchmarks",
        ),
        ("Accepted to AAAI-2026 Bridge Program B10: Making Embodied AI Reliable", "AAAI 2026 Workshop"),
        ("2025 IEEE International Symposium on Biomedical Imaging (ISBI)", "ISBI 2025"),
        ("MICCAI 2025 Workshop on Oral and Dental Image Analysis (ODIN)", "MICCAI 2025 Workshop"),
        ("Accepted at ECML PKDD 2026 (ADS Track)", "ECML PKDD 2026 Applied Data Science"),
        # not a claim of acceptance, or not this paper's venue
        ("Submitted to ICLR 2026", None),
        ("Under review at NeurIPS 2025", None),
        ("10 pages, 5 figures, NeurIPS 2025 style", None),
        ("1st place solution to the CVPR 2025 challenge", None),
        ("Extended version of our ICML 2024 paper", None),
        ("Master's Thesis. Portions of this work were published at the ICLR 2025 Workshop on X", None),
        ("Accepted in CVPR", None),  # a conference is named with its year
        ("Published in MICCAI - ASMUS 2025", None),
        ("Accepted to ACL 2025 and to EMNLP 2025", None),  # two venues: which one is not said
        ("Our ACL-based access control lists scale", None),
    ],
)
def test_venues_read_from_real_comments(comment, label):
    v = venues.parse(comment)
    assert (v.label if v else None) == label


@pytest.mark.parametrize(
    ("comment", "label"),
    [
        # a paper formatted like a venue's papers was not accepted there
        ("12 pages. NeurIPS 2024 format", None),
        ("9 pages, 6 figures, NeurIPS 2024 format", None),
        # a track of its own: not a workshop, not the main conference
        (
            "5 pages, 1 figure, 1 table. NeurIPS 2025 Competition Track (MMU-RAGent). System developed October 2025",
            "NeurIPS 2025 Competition Track",
        ),
        ("NeurIPS 2025 Competition Track", "NeurIPS 2025 Competition Track"),
        ("AAAI 2025 Fall Symposium", "AAAI 2025 Fall Symposium"),
        (
            "Accepted at the AAAI 2025 Fall Symposium Series. November 6-8, 2025, Arlington, VA, USA",
            "AAAI 2025 Fall Symposium",
        ),
        ("Accepted to AAAI 2026 Spring Symposium Series", "AAAI 2026 Spring Symposium"),
        # spellings that were missed
        ("Findings of the Association for Computational Linguistics: ACL 2025", "ACL 2025 Findings"),
        ("In Findings of the Association for Computational Linguistics: NAACL 2025", "NAACL 2025 Findings"),
        ("Transactions on Machine Learning Research (TMLR), 2026", "TMLR 2026"),
        ("Accepted at Transactions on Machine Learning Research (TMLR), 2026", "TMLR 2026"),
        ("KDD '25", "KDD 2025"),
        (
            "Accepted in Proceedings of the 32nd ACM SIGKDD Conference on Knowledge Discovery and Data Mining V.1 "
            "(KDD '26)",
            "KDD 2026",
        ),
        (
            "Accepted at KDD workshop on Evaluation and Trustworthiness of Agentic and Generative AI Models "
            "(Agentic & GenAI Evaluation Workshop KDD '25)",
            "KDD 2025 Workshop",
        ),
        ("IJCAI'26", "IJCAI 2026"),
        ("Forthcoming at IJCAI'26", "IJCAI 2026"),
        ("ECML 2025", "ECML PKDD 2025"),
        ("Accepted at ECML 2025", "ECML PKDD 2025"),
    ],
)
def test_venues_found_wrong_or_missed_on_the_real_formats(comment, label):
    """Real comments of the shared corpus (issue #32) that were read wrong or not at all."""
    v = venues.parse(comment, latest_year=2026)
    assert (v.label if v else None) == label


def _arxiv(comment: str | None, **kw) -> Paper:
    return Paper(
        id="2410.00001",
        title="Dynamic routing of sparse experts at scale",
        authors=["Ann Lee", "Bo Li"],
        abstract="We route tokens.",
        categories=["cs.LG"],
        published="2024-10-01",
        comment=comment,
        sources=["arxiv"],
        **kw,
    )


def test_the_venue_filter_finds_papers_by_their_comment(store):
    ingest_with_merge(
        store,
        [
            _arxiv("Accepted at NeurIPS 2025 (Spotlight)"),
            Paper(
                id="2410.00002", title="Sparse routing, again", comment="Submitted to NeurIPS 2025", sources=["arxiv"]
            ),
        ],
    )
    p = store.get("2410.00001")
    assert p.venue == "NeurIPS 2025 spotlight"
    parsed = p.extra["venue_parsed"]
    assert (parsed["name"], parsed["year"], parsed["presentation"], parsed["source"]) == (
        "NeurIPS",
        2025,
        "spotlight",
        "comment",
    )
    res = Searcher(store).search("routing", mode="lexical", filters=Filters(venue="NeurIPS"))
    assert [h.paper.id for h in res.hits] == ["2410.00001"]
    # a new version's comment moves the venue with it, and a comment that no longer names one clears it
    ingest_with_merge(store, [_arxiv("Camera-ready for ICLR 2025 (oral)")])
    assert store.get("2410.00001").venue == "ICLR 2025 oral"
    ingest_with_merge(store, [_arxiv("12 pages")])
    assert store.get("2410.00001").venue is None and "venue_parsed" not in store.get("2410.00001").extra


def test_a_journal_ref_names_the_venue():
    p = venues.apply(_arxiv(None, extra={"arxiv": {"journal_ref": "Proceedings of CVPR 2024, pp. 1-10"}}))
    assert p.venue == "CVPR 2024" and p.extra["venue_parsed"]["source"] == "journal_ref"


def test_openreview_overrides_the_comment_in_either_order(store):
    import openreview as orlib

    note = json.loads(real("openreview", "note_neurips2024_shape.json").read_text())["note"]
    note["content"]["title"] = {"value": "Dynamic routing of sparse experts at scale"}
    note["content"]["authors"] = {"value": ["Ann Lee", "Bo Li"]}
    venue_paper = openreview.note_to_paper(orlib.api.Note.from_json(note))  # "NeurIPS 2024 oral"
    ingest_with_merge(store, [_arxiv("Accepted at NeurIPS 2024 as a poster")])
    assert store.get("2410.00001").venue == "NeurIPS 2024 poster"
    ingest_with_merge(store, [venue_paper])
    assert store.get("2410.00001").venue == "NeurIPS 2024 oral"
    ingest_with_merge(store, [_arxiv("Accepted at NeurIPS 2024 as a poster")])  # the arXiv record again
    p = store.get("2410.00001")
    assert p.venue == "NeurIPS 2024 oral" and p.extra["merge"]["fields"]["venue"] == "openreview"


def test_a_comment_venue_is_exported_as_what_it_is():
    from paperdex.sources import bibtex

    conf = bibtex.entry(venues.apply(_arxiv("Accepted at NeurIPS 2024 (Spotlight)")))
    assert conf.startswith("@inproceedings{") and "booktitle    = {NeurIPS 2024}," in conf
    journal = bibtex.entry(venues.apply(_arxiv("Accepted by IEEE TPAMI")))
    assert journal.startswith("@article{") and "journal      = {TPAMI}," in journal

"""OpenReview venues and Hugging Face Daily Papers, and how their records merge with arXiv's
into one paper that search finds once, by venue area and by category."""

from __future__ import annotations

import json

import httpx
import pytest
import responses

from paperdex.search import Filters, Searcher
from paperdex.sources import arxiv, hf, openreview
from paperdex.sources.http import SourceError
from paperdex.sources.sync import ingest_source

from .conftest import Router, fixture, oai_router, param

VENUE = "ICML.cc/2026/Conference"


def hf_router() -> Router:
    body = fixture("hf", "daily_papers_2026-06-02.json").read_bytes()
    return Router().add(lambda q: param(q, "date") == "2026-06-02", httpx.Response(200, content=body))


# --- OpenReview -----------------------------------------------------------------------------


def test_ingest_openreview_venue(store, openreview_api):
    s = ingest_source(store, "openreview", venue=VENUE, client=openreview.make_client())
    assert (s.added, s.rejected) == (3, 1)
    assert "Br0k3nNote" in s.errors[0] and "no title" in s.errors[0]
    linked = store.get("2605.31457")  # the note names its preprint: it takes the arXiv id
    assert linked.venue == "ICML 2026 poster"
    assert linked.venue_area == "Applications · Computer Vision"
    assert linked.extra["openreview"]["forum"] == "Vp4sX2kQ1a"
    assert linked.extra["openreview"]["decision"] == "accepted"
    assert linked.extra["openreview"]["presentation"] == "poster"
    only = store.get("openreview:Op7Qw3eRt5")
    assert only.venue_area == "Optimization · Stochastic"
    assert only.links()["abs"] == "https://openreview.net/forum?id=Op7Qw3eRt5"
    assert only.authors == ["Aleksandr Shestakov", "Martin Takac", "Eduard Gorbunov"]
    # the request asked for the venue's accepted papers
    assert "content.venueid=ICML.cc%2F2026%2FConference" in openreview_api.calls[0].request.url


def test_openreview_outage_is_a_clear_error(store):
    with responses.RequestsMock() as rs:
        rs.add("GET", "https://api2.openreview.net/notes", status=503, body="upstream unavailable")
        with pytest.raises(SourceError, match=f"OpenReview {VENUE}"):
            ingest_source(store, "openreview", venue=VENUE, client=openreview.make_client())
    assert store.count() == 0


def test_openreview_malformed_json_is_a_clear_error(store):
    with responses.RequestsMock() as rs:
        rs.add("GET", "https://api2.openreview.net/notes", body='{"notes": [{"id": "x", "con')
        with pytest.raises(SourceError, match="unexpected response"):
            openreview.fetch_venue(VENUE, openreview.make_client())


def test_bad_venue_id_is_refused_before_any_request():
    with pytest.raises(ValueError, match="NeurIPS.cc/2025/Conference"):
        openreview.fetch_venue("NeurIPS 2025", client=object())


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("Deep Learning->Large Language Models", "Deep Learning · Large Language Models"),
        ("General Machine Learning->Evaluation", "General Machine Learning · Evaluation"),
        ("machine_vision", "Applications · Computer Vision"),
        ("neuroscience_and_cognitive_science", "Applications · Neuroscience, Cognitive Science"),
        ("reinforcement_learning", "Reinforcement Learning"),
        ("Deep learning (e.g., architectures, generative models, LLMs)", "Deep Learning"),
        (None, None),
    ],
)
def test_primary_areas_become_readable_labels(raw, label):
    assert openreview.area_label(raw) == label


# --- Hugging Face -------------------------------------------------------------------------


def test_daily_papers_keep_upvotes_and_featured_day(store, make_http):
    s = ingest_source(store, "hf", http=make_http(hf_router()), date="2026-06-02")
    assert (s.added, s.rejected) == (2, 1)
    assert "not an arXiv id" in s.errors[0]
    p = store.get("2606.27731")
    assert p.extra["hf"]["upvotes"] == 42
    assert p.extra["hf"]["featured"] == "2026-06-02"
    assert p.extra["hf"]["comments"] == 3
    assert p.code_url == "https://github.com/example/smooth-mmd"
    assert p.authors[0] == "Zhuo Zuo"


@pytest.mark.parametrize(
    "body",
    [
        b'[{"paper": {"id": "2606.27731", "title": "Enh',
        b"<html>Bad gateway</html>",
        b'{"error": "Invalid date"}',
    ],
)
def test_malformed_daily_papers_responses(make_http, body):
    router = Router().add(lambda q: True, httpx.Response(200, content=body))
    with pytest.raises(SourceError, match="daily_papers"):
        hf.fetch_daily_papers(make_http(router), "2026-06-02")


def test_daily_papers_429_is_retried(store, make_http, clock):
    body = fixture("hf", "daily_papers_2026-06-02.json").read_bytes()
    router = Router().add(
        lambda q: True, [httpx.Response(429, headers={"Retry-After": "5"}), httpx.Response(200, content=body)]
    )
    papers, _ = hf.fetch_daily_papers(make_http(router, min_interval=0), "2026-06-02")
    assert len(papers) == 2
    assert clock.sleeps == [5.0]


def test_daily_papers_period_is_validated():
    assert hf.daily_papers_params(week="2026-W23") == {"week": "2026-W23"}
    with pytest.raises(ValueError, match="exactly one"):
        hf.daily_papers_params("2026-06-02", month="2026-06")
    with pytest.raises(ValueError, match="bad date"):
        hf.daily_papers_params("June 2")


# --- merging --------------------------------------------------------------------------------


def _all_sources(store, make_http):
    arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    ingest_source(store, "openreview", venue=VENUE, client=openreview.make_client())
    ingest_source(store, "hf", http=make_http(hf_router()), date="2026-06-02")


def test_venue_paper_and_preprint_become_one_record(store, make_http, openreview_api):
    _all_sources(store, make_http)
    assert store.count() == 7  # 6 arXiv papers + 1 OpenReview-only paper
    p = store.get("2605.31457")  # linked by arXiv id; also featured on HF
    assert p.sources == ["arxiv", "openreview", "hf"]
    assert p.categories == ["cs.CV"]
    assert (p.venue, p.venue_area) == ("ICML 2026 poster", "Applications · Computer Vision")
    assert p.published == "2026-06-01"  # arXiv's date, not OpenReview's
    assert p.extra["hf"]["upvotes"] == 7
    assert p.extra["openreview"]["forum"] == "Vp4sX2kQ1a"
    assert p.extra["merge"]["fields"]["venue_area"] == "openreview"
    assert p.extra["merge"]["fields"]["title"] == "arxiv"


def test_unlinked_venue_paper_merges_by_title_and_first_author(store, make_http, openreview_api):
    arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    s = ingest_source(store, "openreview", venue=VENUE, client=openreview.make_client())
    assert s.merged == 2
    assert store.count() == 7  # no second record of the paper; its OpenReview id names it
    assert store.get("openreview:Ps9LmN0bZc").id == "2606.14795"
    p = store.get("2606.14795")
    assert p.sources == ["arxiv", "openreview"]
    assert p.venue == "ICML 2026 oral"
    assert p.venue_area == "Deep Learning · Large Language Models"
    assert p.code_url == "https://github.com/example/agency-visual-reasoning"
    assert "openreview openreview:Ps9LmN0bZc: title + first author" in p.extra["merge"]["matched"]
    # the "arXiv" and "PDF" buttons still go to arXiv; the forum link is kept with OpenReview's fields
    assert p.links()["abs"] == "https://arxiv.org/abs/2606.14795"
    assert p.links()["pdf"] == "https://arxiv.org/pdf/2606.14795"
    assert p.extra["openreview"]["abs_url"] == "https://openreview.net/forum?id=Ps9LmN0bZc"


def test_preprint_arriving_after_the_venue_record_takes_it_over(store, make_http, openreview_api):
    ingest_source(store, "openreview", venue=VENUE, client=openreview.make_client())
    assert store.get("openreview:Ps9LmN0bZc") is not None
    s = arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    assert store.rowid("openreview:Ps9LmN0bZc") == store.rowid("2606.14795")  # its old id names it still
    p = store.get("2606.14795")
    assert p.sources == ["openreview", "arxiv"]
    assert (p.venue, p.categories) == ("ICML 2026 oral", ["cs.CV"])
    assert (p.links()["abs"], p.links()["pdf"]) == (
        "https://arxiv.org/abs/2606.14795",
        "https://arxiv.org/pdf/2606.14795",
    )
    assert store.count() == 7
    assert s.added + s.updated == 6


def test_merging_is_idempotent(store, make_http, openreview_api):
    _all_sources(store, make_http)
    before = {p.id: p.to_dict() for p in store.iter_papers()}
    s = ingest_source(store, "openreview", venue=VENUE, client=openreview.make_client())
    s2 = ingest_source(store, "hf", http=make_http(hf_router()), date="2026-06-02")
    assert (s.added, s.updated, s2.added, s2.updated) == (0, 0, 0, 0)
    assert {p.id: p.to_dict() for p in store.iter_papers()} == before


def test_merged_paper_is_found_once_by_area_and_by_category(store, make_http, openreview_api):
    _all_sources(store, make_http)
    searcher = Searcher(store)
    by_area = searcher.search("visual", mode="lexical", filters=Filters(area="Applications · Computer Vision"))
    assert [h.paper.id for h in by_area.hits] == ["2605.31457"]
    by_cat = searcher.search("VisionPulse", mode="lexical", filters=Filters(category="cs.CV"))
    assert [h.paper.id for h in by_cat.hits] == ["2605.31457"]
    both = searcher.search(
        "agency",
        mode="lexical",
        filters=Filters(category="cs.CV", area="Deep Learning · Large Language Models"),
    )
    assert [h.paper.id for h in both.hits] == ["2606.14795"]


def test_show_lists_every_source(store, make_http, openreview_api):
    _all_sources(store, make_http)
    d = json.loads(json.dumps(store.get("2605.31457").to_dict()))
    assert d["sources"] == ["arxiv", "openreview", "hf"]
    assert d["extra"]["merge"]["matched"] == [
        "openreview 2605.31457: linked arXiv id",
        "hf 2605.31457: same id",
    ]


def test_daily_papers_of_a_month_are_read_page_by_page(make_http):
    def item(i: int) -> dict:
        return {"paper": {"id": f"2606.{10000 + i}", "title": f"Paper {i}", "upvotes": i}, "publishedAt": "2026-06-02"}

    def page(req: httpx.Request) -> httpx.Response:
        p = int(param(req, "p") or 0)
        n = {0: hf.PAGE_SIZE, 1: 3}.get(p, 0)  # read until an empty page
        return httpx.Response(200, json=[item(p * hf.PAGE_SIZE + i) for i in range(n)])

    router = Router().add(lambda q: param(q, "month") == "2026-06", page)
    papers, errors = hf.fetch_daily_papers(make_http(router, min_interval=0), month="2026-06")
    assert len(papers) == hf.PAGE_SIZE + 3 and not errors
    assert [param(r, "p") for r in router.requests] == ["0", "1", "2"]

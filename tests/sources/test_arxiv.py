"""arXiv: OAI-PMH harvesting with resumption tokens and resumable state, the Atom API."""

from __future__ import annotations

import json
from datetime import date

import httpx
import pytest

from paperdex.sources import arxiv
from paperdex.sources.http import SourceError
from paperdex.sources.merge import ingest_with_merge
from paperdex.store import Store

from .conftest import CS_TOKEN, Router, fixture, oai_router, param, real, xml

ALL_IDS = {"2504.20938", "2509.25757", "2602.24290", "2605.31457", "2606.14795", "2606.27731"}


def snapshot(store: Store) -> dict[str, dict]:
    return {p.id: p.to_dict() for p in store.iter_papers()}


def test_harvest_follows_resumption_tokens_and_remembers_where_it_stopped(store, make_http, clock):
    router = oai_router()
    s = arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    assert {p.id for p in store.iter_papers()} == ALL_IDS
    assert (s.added, s.rejected) == (6, 1)
    assert "2606.99999" in s.errors[0] and "empty title" in s.errors[0]
    # the first request names the window, the second only the token
    assert param(router.requests[0], "from") == "2025-04-01"
    assert param(router.requests[0], "set") == "cs"
    assert param(router.requests[1], "resumptionToken") == CS_TOKEN  # sent back as received
    assert param(router.requests[1], "metadataPrefix") is None
    assert clock.sleeps == [3.0]  # arXiv's limit between the two pages
    state = json.loads(store.get_state("arxiv:oai:cs"))
    assert state == {"next_from": "2026-06-30"}
    p = store.get("2606.14795")
    assert p.title == "Position: The Systemic Lack of Agency in Visual Reasoning"
    assert p.authors[:2] == ["Yizhao Huang", "Haoyang Chen"]
    assert (p.published, p.updated, p.categories) == ("2026-06-16", "2026-06-25", ["cs.CV"])
    assert p.comment == "Accepted by ICML 2026"
    assert p.sources == ["arxiv"]


def test_next_harvest_starts_where_the_last_one_ended(store, make_http):
    arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    store.set_state("arxiv:oai:cs", json.dumps({"next_from": "2026-07-01"}))
    router = oai_router()
    s = arxiv.harvest(store, make_http(router), arxiv.Harvest("cs"), today=date(2026, 7, 1))
    assert param(router.requests[0], "from") == "2026-07-01"
    assert param(router.requests[0], "until") is None  # never the local date: up to the service's now
    # the next harvest starts on the day the service's responseDate named (UTC)
    assert json.loads(store.get_state("arxiv:oai:cs")) == {"next_from": "2026-11-30"}
    assert (s.added, s.updated) == (0, 0)  # noRecordsMatch is an empty result, not an error


def test_rerun_of_the_same_window_changes_nothing(store, make_http):
    arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    s = arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    assert (s.added, s.updated, s.unchanged) == (0, 0, 6)


def test_truncated_page_stops_the_harvest_and_a_rerun_resumes_at_that_page(tmp_path, make_http):
    clean = Store(tmp_path / "clean")
    arxiv.harvest(clean, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))

    store = Store(tmp_path / "interrupted")
    broken = oai_router(page2=fixture("arxiv", "oai_cs_page2_truncated.xml"))
    with pytest.raises(SourceError, match="truncated"):
        arxiv.harvest(store, make_http(broken), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    assert store.count() == 3
    assert json.loads(store.get_state("arxiv:oai:cs"))["token"] == CS_TOKEN

    router = oai_router()
    arxiv.harvest(store, make_http(router), arxiv.Harvest("cs"))  # no window given: resume the saved one
    assert [param(r, "resumptionToken") for r in router.requests] == [CS_TOKEN]
    assert snapshot(store) == snapshot(clean)
    assert store.get_state("arxiv:oai:cs") == clean.get_state("arxiv:oai:cs")


def test_a_page_truncated_once_is_asked_again_and_the_harvest_completes(tmp_path, make_http, clock):
    """A transfer cut off mid-page is retried like a 503, so the harvest finishes in the same
    run instead of waiting for the next sync."""
    clean = Store(tmp_path / "clean")
    arxiv.harvest(clean, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    store = Store(tmp_path / "flaky")
    router = Router().add(
        lambda q: param(q, "resumptionToken") == CS_TOKEN,
        [xml(fixture("arxiv", "oai_cs_page2_truncated.xml")), xml(fixture("arxiv", "oai_cs_page2.xml"))],
    )
    router.add(lambda q: True, oai_router())
    arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    assert [param(r, "resumptionToken") for r in router.requests] == [None, CS_TOKEN, CS_TOKEN]
    assert snapshot(store) == snapshot(clean)
    assert json.loads(store.get_state("arxiv:oai:cs")) == {"next_from": "2026-06-30"}


def test_killed_while_storing_a_page_resumes_to_the_same_store(tmp_path, make_http, monkeypatch):
    clean = Store(tmp_path / "clean")
    arxiv.harvest(clean, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))

    store = Store(tmp_path / "killed")
    calls = []

    def dies_on_page_two(st, papers, **kw):
        calls.append(1)
        papers = list(papers)
        if len(calls) == 2:
            ingest_with_merge(st, papers[:1], **kw)  # half the page is written...
            raise KeyboardInterrupt  # ...then the process is killed
        return ingest_with_merge(st, papers, **kw)

    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(arxiv.merge, "ingest_with_merge", dies_on_page_two)  # how harvest stores a page
        arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    assert store.count() == 4
    store.close()

    store = Store(tmp_path / "killed")  # a new process
    s = arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs"))
    assert (s.added, s.unchanged) == (2, 1)  # the page is stored again, without duplicates
    assert snapshot(store) == snapshot(clean)


def test_expired_resumption_token_restarts_the_window(store, make_http):
    store.set_state("arxiv:oai:cs", json.dumps({"from": "2025-04-01", "until": "2026-06-30", "token": "stale|1"}))
    router = oai_router()
    router.routes.insert(
        0,
        (
            lambda q: param(q, "resumptionToken") == "stale|1",
            lambda q: xml(real("arxiv_oai", "err_badResumptionToken.xml")),
        ),
    )
    arxiv.harvest(store, make_http(router), arxiv.Harvest("cs"))
    assert {p.id for p in store.iter_papers()} == ALL_IDS
    assert param(router.requests[1], "from") == "2025-04-01"


def test_oai_errors_other_than_no_records_are_reported(store, make_http):
    router = Router().add(lambda q: True, xml(real("arxiv_oai", "err_until_too_late.xml")))
    with pytest.raises(SourceError, match="badArgument.*until date too late.*UTC"):
        arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2025-01-01", "2025-01-02"))


def test_503_during_a_harvest_is_retried_after_retry_after(store, make_http, clock):
    router = oai_router()
    page1 = xml(fixture("arxiv", "oai_cs_page1.xml"))
    router.routes.insert(
        0,
        (
            lambda q: param(q, "metadataPrefix") == "arXivRaw",
            _in_turn([httpx.Response(503, headers={"Retry-After": "20"}), page1]),
        ),
    )
    arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    assert store.count() == 6
    assert clock.sleeps == [20.0, 3.0]


def _in_turn(responses):
    queue = list(responses)
    return lambda req: queue.pop(0) if len(queue) > 1 else queue[0]


def test_category_filter_keeps_only_wanted_records(store, make_http):
    arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30", categories=["cs.CL"]))
    assert {p.id for p in store.iter_papers()} == {"2504.20938", "2509.25757", "2606.27731"}


def test_not_oai_at_all_is_a_clear_error(store, make_http):
    router = Router().add(lambda q: True, httpx.Response(200, text="<html><body>maintenance</body></html>"))
    with pytest.raises(SourceError, match="not an OAI-PMH response"):
        arxiv.harvest(store, make_http(router), arxiv.Harvest("cs", "2025-01-01", "2025-01-02"))


# --- Atom API -----------------------------------------------------------------------------


def test_id_lookup_through_the_api(make_http, clock):
    router = Router().add(
        lambda q: param(q, "id_list") == "2606.14795,2605.31457v1", xml(fixture("arxiv", "api_id_list.atom"))
    )
    papers, errors = arxiv.fetch_ids(make_http(router), ["2606.14795", "2605.31457v1", "hello"])
    assert errors == ["not an arXiv id: 'hello'"]
    p = {x.id: x for x in papers}
    assert p["2606.14795"].extra["arxiv"]["version"] == "v2"
    assert p["2606.14795"].published == "2026-06-15"
    assert p["2606.14795"].updated == "2026-06-25"
    assert p["2605.31457"].categories == ["cs.CV"]
    assert p["2605.31457"].comment == "Accepted at ICML 2026"


def test_a_new_version_updates_the_stored_record(store, make_http):
    arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    router = Router().add(lambda q: True, xml(fixture("arxiv", "api_id_list.atom")))
    papers, _ = arxiv.fetch_ids(make_http(router), ["2606.14795", "2605.31457"])
    s = ingest_with_merge(store, papers)
    assert (s.added, s.updated + s.unchanged) == (0, 2)
    assert store.get("2606.14795").extra["arxiv"]["version"] == "v2"
    assert store.count() == 6


def test_api_error_entries_are_reported(make_http):
    rec = json.loads(real("arxiv_api", "id_abc_s0_m100_b79c8dcf6bc3.json").read_text())
    router = Router().add(lambda q: True, httpx.Response(rec["status_code"], text=rec["body"]))
    papers, errors = arxiv.fetch_ids(make_http(router), ["1234.5678"])
    assert papers == []
    # the service answered 400 naming another id: the chunk of one is reported, nothing raised
    assert errors == ["arXiv API refused 1234.5678 (HTTP 400: arXiv API error: incorrect id format for abc)"]


def test_truncated_atom_feed_is_refused(make_http):
    body = fixture("arxiv", "api_id_list.atom").read_bytes()[:3000]
    router = Router().add(lambda q: True, httpx.Response(200, content=body))
    with pytest.raises(SourceError, match="malformed arXiv API response"):
        arxiv.fetch_ids(make_http(router), ["2606.14795"])


# --- RSS daily listing ------------------------------------------------------------------------


def test_todays_listing_sets_the_listed_day(store, make_http):
    from paperdex.sources.sync import ingest_source

    arxiv.harvest(store, make_http(oai_router()), arxiv.Harvest("cs", "2025-04-01", "2026-06-30"))
    router = Router().add(lambda q: q.url.path == "/rss/cs.CL", xml(fixture("arxiv", "rss_cs.CL.xml")))
    s = ingest_source(store, "arxiv", http=make_http(router), listing="cs.CL")
    assert (s.added, s.updated) == (0, 2)
    new = store.get("2606.27731")
    assert new.listed == "2026-06-29"  # announced that day
    assert new.published == "2026-06-29"  # OAI's created date is kept
    assert new.extra["arxiv-rss"]["announce_type"] == "new"
    assert new.sources == ["arxiv", "arxiv-rss"]
    assert new.extra["merge"]["fields"]["authors"] == "arxiv"  # the listing never overwrites OAI
    replaced = store.get("2504.20938")
    assert replaced.listed is None  # a replacement is not a new listing
    assert replaced.extra["arxiv-rss"]["version"] == "v3"
    assert replaced.abstract.startswith("We propose Low-Rank Sparse Attention")


def test_first_harvest_needs_a_first_day(store, make_http):
    router = oai_router()
    with pytest.raises(ValueError, match="give a first day"):
        arxiv.harvest(store, make_http(router), arxiv.Harvest("cs"))
    assert router.requests == []

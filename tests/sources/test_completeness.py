"""Completeness of the daily feed: a listing's papers that the store lacks (a sync killed
between reading the listing and storing it) are reported by `sync --check` and on the daily
page, fetched by id on the next sync, and then reported complete. The arXiv RSS listing in the
feed service's shape (tests/fixtures/arxiv/rss_cs.CV_2026-06-01.xml) and the recorded API
answer (api_id_list.atom), through the real client and merge."""

from __future__ import annotations

import json
import re
from datetime import date

import httpx
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.discover import feed
from paperdex.sources import arxiv, completeness, merge
from paperdex.sources.sync import ingest_source
from paperdex.store import Store

from .conftest import Router, fixture, param, real, xml

MONDAY = fixture("arxiv", "rss_cs.CV_2026-06-01.xml").read_text()
# the next day's listing, empty (a day without announcements): the same channel, no item
TUESDAY = re.sub(r"<item>.*</item>", "", MONDAY, flags=re.S).replace("Mon, 01 Jun 2026", "Tue, 02 Jun 2026")


def _router(listing: str) -> Router:
    r = Router().add(lambda q: q.url.path == "/rss/cs.CV", httpx.Response(200, text=listing))
    r.add(lambda q: param(q, "id_list") == "2605.31457", xml(fixture("arxiv", "api_id_list.atom")))
    return r


def _check(data_dir):
    return CliRunner().invoke(cli, ["--data-dir", str(data_dir), "sync", "--check"])


def test_a_listing_paper_lost_by_a_killed_sync_is_back_filled_by_the_next(tmp_path, make_http, monkeypatch):
    d = tmp_path / "data"
    store = Store(d)
    real_ingest = merge.ingest_with_merge

    def killed(*a, **kw):
        raise KeyboardInterrupt  # killed after the listing was read, before it was stored

    monkeypatch.setattr(merge, "ingest_with_merge", killed)
    with pytest.raises(KeyboardInterrupt):
        arxiv.read_listing(store, make_http(_router(MONDAY)), "cs.CV")
    monkeypatch.setattr(merge, "ingest_with_merge", real_ingest)
    assert store.get("2605.31457") is None
    store.close()

    r = _check(d)
    assert r.exit_code == 1
    assert "cs.CV 2026-06-01: 1 papers missing (2605.31457); next retry at the next sync" in r.output
    with Store(d, readonly=True) as s:
        assert [st.missing for st in completeness.states(s)] == [["2605.31457"]]

    router = _router(TUESDAY)
    with Store(d) as s:
        got = ingest_source(s, "arxiv", listing="cs.CV", http=make_http(router), today=date(2026, 6, 2))
        assert got.added == 1  # fetched by id: the listing of that day no longer shows it
        p = s.get("2605.31457")
        assert (p.listed, p.title) == (
            "2026-06-01",
            "VisionPulse: Dynamic Visual Sparsity for Efficient Multimodal Reasoning",
        )
        assert s.get("2606.14795") is None  # in the API answer, not asked for: not given the day
        assert feed.daily(s, "2026-06-01").notices == ["complete: every paper of the cs.CV listing is here"]
    assert [param(q, "id_list") for q in router.requests] == [None, "2605.31457"]

    r = _check(d)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        "cs.CV 2026-06-02: no announcement (the listing was empty)",
        "cs.CV 2026-06-01: complete (1 of 1)",
        "check: 2 listing days, 0 papers missing, 0 days not read",
    ]


def test_the_schedule_is_the_feeds_own_and_a_day_no_sync_read_is_reported(tmp_path):
    assert completeness.schedule(MONDAY) == ("2026-06-01", ["Saturday", "Sunday"])
    with Store(tmp_path / "d") as s:
        completeness.record(s, "cs.CV", "2026-06-05", ["2605.31457"], ["Saturday", "Sunday"])  # a Friday
        completeness.record(s, "cs.CV", "2026-06-09", [], ["Saturday", "Sunday"])  # the Tuesday after
        assert completeness.unread_days(s) == ["cs.CV 2026-06-08: not read (no sync read this day's listing)"]


def test_check_of_a_directory_without_a_store_is_one_line(tmp_path):
    r = _check(tmp_path)
    assert r.exit_code == 1 and "no paperdex data in" in r.output and "Traceback" not in r.output


def test_a_paper_known_only_from_the_listing_is_fetched_by_id_and_is_not_complete_before(tmp_path, make_http):
    """A paper the OAI harvest has not returned yet is stored from the listing alone: no
    submission date, no comment (so no venue). It is looked up by id (the API's id_list) in the
    same run; while the API does not know it yet (the real answer for an id it lacks: an empty
    feed), `sync --check` reports it, not "complete", and the next sync asks again."""
    d = tmp_path / "data"
    none_yet = json.loads(real("arxiv_api", "id_0000.0000_s0_m100_8b51d9633a68.json").read_text())["body"]
    first = Router().add(lambda q: q.url.path == "/rss/cs.CV", httpx.Response(200, text=MONDAY))
    first.add(lambda q: param(q, "id_list") == "2605.31457", httpx.Response(200, text=none_yet))
    with Store(d) as s:
        arxiv.read_listing(s, make_http(first), "cs.CV")
        p = s.get("2605.31457")
        assert (p.sources, p.published, p.comment) == (["arxiv-rss"], None, None)  # the listing's record
    assert [param(q, "id_list") for q in first.requests] == [None, "2605.31457"]  # asked for by id
    r = _check(d)
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[0] == (
        "cs.CV 2026-06-01: 1 papers missing (2605.31457; 1 known only from the listing, without "
        "arXiv's metadata); next retry at the next sync"
    )

    with Store(d) as s:
        ingest_source(s, "arxiv", listing="cs.CV", http=make_http(_router(TUESDAY)), today=date(2026, 6, 2))
        p = s.get("2605.31457")
        assert (p.published, p.listed, p.comment, p.venue) == (
            "2026-05-29",
            "2026-06-01",
            "Accepted at ICML 2026",
            "ICML 2026",
        )
        assert p.sources == ["arxiv-rss", "arxiv"]
    r = _check(d)
    assert r.exit_code == 0, r.output
    assert "cs.CV 2026-06-01: complete (1 of 1)" in r.output

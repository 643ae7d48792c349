"""Save from where papers are read: in a real Chromium, a signed-in reader saves five papers to a
tag with the "Save to a tag" control of the search results, the daily page and a paper page;
opens the tag's recommendations; subscribes to its feed (valid per feedparser, entries linking
to paper pages); and receives the digest in a local SMTP server (aiosmtpd). A browser without a
token is read-only."""

from __future__ import annotations

import email
import json
import shutil
import sys
from pathlib import Path
from urllib.parse import quote

import feedparser
import numpy as np
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.discover import digest as D
from paperdex.discover import library as L
from paperdex.ingest import import_vectors, ingest_file
from paperdex.store import Store
from tests.conftest import DATA, PAPERS

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/live_server.py
from live_server import in_thread, smtp_inbox, wait_for  # noqa: E402


@pytest.fixture(scope="module")
def site(built_store_dir, tmp_path_factory):
    """A server of its own over a private copy of the fixture store (this test writes), a token,
    and a day with at least two robot papers (cs.RO)."""
    from paperdex.web.app import create_app

    d = tmp_path_factory.mktemp("discover-save") / "store"
    shutil.copytree(built_store_dir, d)
    with Store(d) as st:
        token = L.create_token(st, "reader")
        day = st.conn.execute(
            "SELECT p.date FROM papers p JOIN paper_categories c ON c.paper = p.rowid WHERE c.category = 'cs.RO' "
            "GROUP BY p.date HAVING count(*) >= 2 ORDER BY count(*) DESC, p.date LIMIT 1"
        ).fetchone()[0]
    with in_thread(create_app(d, pool_size=1)) as base:
        yield base, d, token, day


def _published_copy(d: Path, pid: str, day: str, tmp: Path) -> None:
    """Add to the store, listed on `day`, the published version of sample paper `pid`: its
    abstract and vector under another id and title (as tests/test_feed_chips.py does)."""
    line = next(json.loads(x) for x in PAPERS.read_text().splitlines() if json.loads(x)["id"] == pid)
    line.update(id="2599.09002", title=line["title"] + " (extended version)", listed=day, date=day)
    (tmp / "copy.jsonl").write_text(json.dumps(line) + "\n")
    (tmp / "ids.txt").write_text("2599.09002\n")
    ids = (DATA / "papers.ids.txt").read_text().split()
    with Store(d) as st:
        ingest_file(st, tmp / "copy.jsonl")
        vec = np.load(DATA / "papers.minilm.f16.npy")[[ids.index(pid)]]
        import_vectors(st, vec, tmp / "ids.txt", "all-MiniLM-L6-v2")


def _save(page, card, tag: str) -> str:
    """Click a card's "Save to a tag", type the tag, confirm; returns the paper id."""
    pid = card.get_attribute("data-id")
    card.get_by_test_id("save-link").click()
    card.get_by_test_id("save-tag").fill(tag)
    card.get_by_test_id("save-submit").click()
    done = card.get_by_test_id("saved-link")
    done.wait_for()
    assert done.inner_text().strip() == f"★ Saved to {tag}"
    assert done.get_attribute("href") == f"/tag/{quote(tag)}"
    return pid


def test_read_only_without_a_token(page, site):
    base, _, _, day = site
    page.goto(f"{base}/daily?day={day}")
    card = page.locator("article.card").first
    pid = card.get_attribute("data-id")
    card.get_by_test_id("save-link").click()
    page.wait_for_url(f"{base}/save/{pid}?next=*")
    assert "Read-only" in page.locator("p.notice").inner_text()
    assert page.get_by_test_id("save-form").count() == 0


def test_save_five_from_the_ui_then_recommendations_feed_and_digest(page, site, shots, tmp_path):
    base, d, token, day = site
    page.goto(f"{base}/library")
    page.get_by_test_id("token").fill(token)
    page.get_by_test_id("login-form").get_by_role("button").click()
    page.wait_for_url(f"{base}/library")

    saved: list[str] = []
    # two from the search results
    page.goto(f"{base}/?q=robot&category=cs.RO")
    cards = page.locator("section.results article.card")
    saved.append(_save(page, cards.nth(0), "robots"))
    saved.append(_save(page, cards.nth(1), "robots"))
    page.screenshot(path=str(shots / "save-to-tag-1280.png"), full_page=False)
    # two from the daily page (robot papers of one day)
    page.goto(f"{base}/daily?day={day}&category=cs.RO")
    cards = page.locator("section.daily-list article.card")
    fresh = [i for i in range(cards.count()) if cards.nth(i).get_attribute("data-id") not in saved]
    for i in fresh[:2]:
        saved.append(_save(page, cards.nth(i), "robots"))
    # one from a paper page: a robot paper among the first one's similar papers
    page.goto(f"{base}/paper/{saved[0]}")
    similar = page.locator("section.similar article.card")
    other = next(
        similar.nth(i).get_attribute("data-id")
        for i in range(similar.count())
        if similar.nth(i).get_attribute("data-id") not in saved
    )
    page.goto(f"{base}/paper/{other}")
    link = page.locator(".paper-links").get_by_test_id("save-link")
    link.click()
    page.get_by_test_id("save-tag").fill("robots")
    page.get_by_test_id("save-submit").click()
    page.locator(".paper-links").get_by_test_id("saved-link").wait_for()
    saved.append(other)
    assert len(set(saved)) == 5

    # the tag's recommendations: the five papers, twenty others with reasons
    page.goto(f"{base}/library")
    page.get_by_role("link", name="robots", exact=True).click()
    page.wait_for_url(f"{base}/tag/robots")
    kept = page.get_by_test_id("tag-papers").locator("article")
    assert sorted(kept.nth(i).get_attribute("data-id") for i in range(kept.count())) == sorted(saved)
    recs = page.get_by_test_id("recommendations").locator("article")
    assert recs.count() == 20
    assert not {recs.nth(i).get_attribute("data-id") for i in range(20)} & set(saved)
    why = recs.first.locator("details.why")
    assert why.get_attribute("open") is None  # closed until asked
    why.locator("summary").click()
    assert why.locator("dd").first.inner_text().strip()

    # subscribe: the feed validates and every entry links to a paper page that opens
    href = page.get_by_test_id("tag-feed").get_attribute("href")
    r = page.request.get(base + href)
    assert r.ok and r.headers["content-type"].startswith("application/rss+xml")
    f = feedparser.parse(r.body())
    assert f.bozo == 0 and f.version == "rss20" and f.entries
    assert all(e.link.startswith(f"{base}/paper/") for e in f.entries)
    assert page.request.get(f.entries[0].link).ok

    # the digest of that day arrives in a local SMTP server with the tag's papers: a paper of that
    # day on the tag's topic, the published version of a saved one, earns its calibrated place
    _published_copy(d, saved[0], day, tmp_path)
    with Store(d, readonly=True) as st:
        expected = D.build(st, day, base)  # the day whose robot papers were saved: it has more
    assert any(s.kind == "tag" and "robots" in s.title for s in expected.sections), [s.title for s in expected.sections]
    with smtp_inbox() as (port, got):
        r = CliRunner().invoke(
            cli,
            [
                "--data-dir",
                str(d),
                "digest",
                "--day",
                day,
                "--smtp",
                f"127.0.0.1:{port}",
                "--mail-to",
                "me@example.test",
                "--base-url",
                base,
            ],
        )
        assert r.exit_code == 0, r.output
        wait_for(got)
    assert len(got) == 1
    m = email.message_from_bytes(got[0].as_bytes())
    assert m["To"] == "me@example.test" and m["Subject"] == expected.subject
    text = next(p for p in m.walk() if p.get_content_type() == "text/plain").get_payload(decode=True).decode()
    html = next(p for p in m.walk() if p.get_content_type() == "text/html").get_payload(decode=True).decode()
    assert "robots" in text
    for s in expected.sections:
        for it in s.items:
            assert D.paper_url(base, it.paper) in text and D.paper_url(base, it.paper) in html

"""Discover in the browser: sign in with a token, save five papers to a tag, see explained
recommendations, subscribe to the tag's feed (it validates), receive the digest in a local
SMTP server."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.discover import library as L
from paperdex.store import Store

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/live_server.py
from live_server import in_thread, smtp_inbox, wait_for  # noqa: E402


@pytest.fixture(scope="module")
def discover_site(built_store_dir, tmp_path_factory):
    """A server of its own over a private copy of the fixture store (this test writes)."""
    from paperdex.web.app import create_app

    d = tmp_path_factory.mktemp("discover") / "store"
    shutil.copytree(built_store_dir, d)
    with Store(d) as st:
        token = L.create_token(st, "browser")
        ids = [
            r[0]
            for r in st.conn.execute(
                "SELECT p.id FROM papers p JOIN paper_categories c ON c.paper = p.rowid "
                "WHERE c.category = 'cs.RO' ORDER BY p.rowid LIMIT 5"
            )
        ]
    with in_thread(create_app(d, pool_size=1)) as base:
        yield base, d, token, ids


def test_save_five_papers_see_recommendations_feed_and_digest(page, discover_site, shots):
    base, d, token, ids = discover_site
    page.goto(f"{base}/library")
    page.get_by_test_id("token").fill(token)
    page.get_by_test_id("login-form").get_by_role("button").click()
    page.wait_for_url(f"{base}/library")
    assert "browser" in page.get_by_test_id("signed-in").inner_text()

    for i, pid in enumerate(ids):
        page.goto(f"{base}/save/{pid}")
        if i == 0:
            page.get_by_test_id("new-tag").fill("robots")
        else:
            page.get_by_test_id("tag-select").select_option("robots")
        page.get_by_test_id("save").click()
        page.wait_for_url(f"{base}/tag/robots")

    assert page.get_by_test_id("tag-papers").locator("article").count() == 5
    recs = page.get_by_test_id("recommendations").locator("article")
    assert recs.count() == 20
    first = recs.first
    assert first.get_attribute("data-id") not in ids
    why = first.locator("details.why")
    why.locator("summary").click()  # the reasons open on a click
    assert why.locator("dd").first.inner_text().strip()  # "like" one of the saved papers
    page.screenshot(path=str(shots / "tag-recommendations-1280.png"), full_page=False)

    # "not interested" takes a recommendation away
    gone = first.get_attribute("data-id")
    first.get_by_test_id("rec-dismiss").click()
    page.wait_for_url(f"{base}/tag/robots?dismissed=*")  # the page offers to undo it
    assert page.get_by_test_id("undo-bar").is_visible()
    assert page.locator(f'[data-testid="recommendations"] article[data-id="{gone}"]').count() == 0

    # subscribe: the feed link validates and links back to paper pages
    href = page.get_by_test_id("tag-feed").get_attribute("href")
    r = page.request.get(base + href)
    assert r.ok and r.headers["content-type"].startswith("application/rss+xml")
    f = feedparser.parse(r.body())
    assert not f.bozo and f.entries
    assert all(e.link.startswith(f"{base}/paper/") for e in f.entries)
    assert page.request.get(base + f.entries[0].link[len(base) :]).ok

    # the digest arrives in a local SMTP server
    with smtp_inbox() as (port, got):
        r = CliRunner().invoke(cli, ["--data-dir", str(d), "digest", "--smtp", f"127.0.0.1:{port}", "--base-url", base])
        assert r.exit_code == 0, r.output
        wait_for(got)
    assert len(got) == 1 and got[0]["Subject"].startswith("paperdex digest")
    html = next(p for p in got[0].walk() if p.get_content_type() == "text/html").get_payload(decode=True).decode()
    assert f"{base}/paper/" in html

"""Feeds over hostile records (issue 26): a feed reader shows paper text as text. RSS readers
read an item's title and description as HTML, so paper text must be escaped once more than
XML needs; the Atom feeds say type text. Read with feedparser, as a reader would: no element
written in a title, an abstract or an author name survives in any field of any feed."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import feedparser
import pytest

from paperdex.discover.digest import FORMATS, Item, render_feed
from paperdex.paper import paper_from_dict

HOSTILE = Path(__file__).parent / "hostile.jsonl"
OURS = {"br", "p"}  # what the feed itself writes between paragraphs


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.add(tag)

    def handle_startendtag(self, tag, attrs) -> None:
        self.tags.add(tag)


def _elements(detail) -> set[str]:
    """The HTML elements a reader would render from one feedparser text field."""
    if detail is None or "html" not in (detail.get("type") or ""):
        return set()  # text/plain: shown as it is
    p = Elements()
    p.feed(detail["value"])
    return p.tags - OURS


def _hostile_papers():
    papers = [paper_from_dict(json.loads(line)) for line in HOSTILE.read_text().splitlines() if line.strip()]
    extra = paper_from_dict(
        {
            "id": "2599.00003",
            "title": "<svg onload=alert(1)><circle r=9/></svg> Tracking <img src=https://t.example/p.gif>",
            "authors": ["<b>Bold</b> Author", "Eve <img src=x>"],
            "abstract": "An <svg><script>alert(2)</script></svg> abstract with "
            "<a href=https://evil.example>a link</a>, <iframe src=https://evil.example></iframe> "
            "and &lt;img src=y&gt; written escaped.",
            "categories": ["cs.CR"],
            "listed": "2025-03-21",
        }
    )
    return [*papers, extra]


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_element_from_a_record_survives_in_a_feed(fmt):
    papers = _hostile_papers()
    items = [Item(p, note="Like <i>your</i> tag") for p in papers]
    body = render_feed(
        fmt, "paperdex: <b>tag</b>", "http://localhost/feeds/x", "http://localhost/", items, "http://localhost"
    )
    f = feedparser.parse(body)
    assert not f.bozo, f.bozo_exception
    assert len(f.entries) == len(papers)
    for e in f.entries:
        for key in ("title_detail", "summary_detail", "subtitle_detail"):
            assert not _elements(e.get(key)), (fmt, key, e.get(key))
        for c in e.get("content", []):
            assert not _elements(c), (fmt, c)
    assert not _elements(f.feed.get("title_detail"))
    # the text is all there, shown as text
    first = next(e for e in f.entries if "Zebrafinch" in e.title)
    assert "script" in first.title and "img src=x" in first.summary  # shown, as text


def test_the_served_feeds_of_a_hostile_record(client):
    """The same through the server: category feeds that hold the hostile records."""
    for url in ("/feeds/category/q-bio.NC.rss", "/feeds/category/q-bio.NC.atom", "/feeds/category/cs.SD.rss"):
        r = client.get(url)
        assert r.status_code == 200, url
        f = feedparser.parse(r.content)
        assert f.entries, url
        for e in f.entries:
            assert not _elements(e.get("title_detail")) and not _elements(e.get("summary_detail")), (url, e.title)

"""The web tests' store: the shared 315-paper fixture store plus hand-written hostile papers
(markup and LaTeX in titles and abstracts, a `javascript:` code link, twelve authors) and papers
with every signal (signals.jsonl), whose
vectors are computed with the real int8 MiniLM model. Built once per test session and
shared by tests/web and tests/e2e."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from paperdex.index.embed import embed_store
from paperdex.ingest import ingest_file
from paperdex.store import Store

HOSTILE = Path(__file__).parent / "hostile.jsonl"
# Papers with every signal a source can give (Hugging Face upvotes/comments/page, stars, project
# page, venue + area + decision, an arXiv comment, math, MSC/ACM codes among the categories),
# dated in the week of 2025-03-24 and (one) in the store's last week, for trending.
SIGNALS = Path(__file__).parent / "signals.jsonl"
SIGNALS_ID = "2599.00101"
SIGNALS_WEEK = "2025-03-24"
HOSTILE_ID = "2599.00001"
DAY_WITH_PAGES = "2025-03-19"  # the first day, with over 30 papers: two pages on the daily view
# A later day of its own (comfort.jsonl, in a store of its own: the shared one keeps its counts):
# math written \(...\) and \[...\], a divertor paper with 8 GitHub stars and no upvotes, a
# preprint merged with its OpenReview record, and a listing that names one paper the store lacks.
COMFORT = Path(__file__).parent / "comfort.jsonl"
COMFORT_DAY = "2026-08-03"
COMFORT_MATH_ID, COMFORT_STARS_ID, COMFORT_MERGED_ID = "2599.00201", "2599.00202", "2599.00203"
COMFORT_MISSING_ID = "2608.99999"


def build(built_store_dir: Path, base: Path) -> Path:
    """Copy the fixture store to `base/webstore` once and add the hostile papers."""
    d = base / "webstore"
    ready = d / ".ready"
    if ready.exists():
        return d
    if d.exists():
        shutil.rmtree(d)
    shutil.copytree(built_store_dir, d)
    with Store(d) as s:
        summary = ingest_file(s, HOSTILE)
        assert summary.added == 2, summary.errors
        summary = ingest_file(s, SIGNALS)
        assert summary.added == 4, summary.errors
        embed_store(s, "all-MiniLM-L6-v2")  # publishes the indexes when done
    ready.touch()
    return d


def build_comfort(web_dir: Path, base: Path) -> Path:
    """The web store plus comfort.jsonl, embedded, and the arXiv listings a sync would have
    recorded: COMFORT_DAY's (one paper missing) and the day before's (complete)."""
    from paperdex.discover import feed
    from paperdex.sources import completeness

    d = base / "comfortstore"
    ready = d / ".ready"
    if ready.exists():
        return d
    if d.exists():
        shutil.rmtree(d)
    shutil.copytree(web_dir, d)
    (d / ".ready").unlink(missing_ok=True)
    with Store(d) as s:
        before = feed.latest_day(s)
        summary = ingest_file(s, COMFORT)
        assert summary.added == 4, summary.errors
        embed_store(s, "all-MiniLM-L6-v2")
        ids = [r["id"] for r in map(json.loads, COMFORT.read_text().splitlines())]
        completeness.record(s, "cs.LG", COMFORT_DAY, [*ids, COMFORT_MISSING_ID], [])
        prior = [p.id for p in feed.listing(s, "day", before, per_page=200).papers]
        completeness.record(s, "cs.LG", before, prior, [])
    ready.touch()
    return d

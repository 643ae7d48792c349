"""The web tests' store: the shared 315-paper fixture store plus hand-written hostile papers
(markup and LaTeX in titles and abstracts, a `javascript:` code link, twelve authors) and papers
with every signal (signals.jsonl), whose
vectors are computed with the real int8 MiniLM model. Built once per test session and
shared by tests/web and tests/e2e."""

from __future__ import annotations

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

"""Hugging Face Daily Papers: the public ``/api/daily_papers`` endpoint.

Each item is an arXiv paper a person featured on a given day; its upvotes and the day it
was featured are popularity signals kept under ``extra["hf"]`` for sorting, and its GitHub
repository becomes the paper's code link. Records carry the arXiv id, so they merge into the
arXiv record of the same paper.
"""

from __future__ import annotations

import json
import re
from datetime import date

from ..paper import ARXIV_ID, Paper
from .http import HttpClient, SourceError

SOURCE = "hf"
API_URL = "https://huggingface.co/api/daily_papers"


def daily_papers_params(day: str | None = None, week: str | None = None, month: str | None = None) -> dict:
    """Query for one day (``2025-06-01``), ISO week (``2025-W23``) or month (``2025-06``)."""
    given = [(k, v) for k, v in (("date", day), ("week", week), ("month", month)) if v]
    if len(given) != 1:
        raise ValueError("give exactly one of date, week or month")
    k, v = given[0]
    pattern = {"date": r"\d{4}-\d{2}-\d{2}", "week": r"\d{4}-W\d{2}", "month": r"\d{4}-\d{2}"}[k]
    if not re.fullmatch(pattern, v):
        raise ValueError(f"bad {k} {v!r}: expected a value like {pattern}")
    if k == "date":
        date.fromisoformat(v)
    return {k: v}


def parse_daily_papers(body: bytes | str, featured: str | None = None) -> tuple[list[Paper], list[str]]:
    """Papers of one response. ``featured`` is the requested day, used when an item does not
    say when it was featured. Raises SourceError when the body is not the expected JSON list."""
    try:
        items = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SourceError(f"malformed daily_papers response ({e}); truncated download?") from e
    if not isinstance(items, list):
        raise SourceError(f"daily_papers response is a {type(items).__name__}, expected a list")
    papers, errors = [], []
    for n, item in enumerate(items, 1):
        try:
            papers.append(_item(item, featured))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            errors.append(f"daily_papers item {n}: {e}; skipped")
    return papers, errors


def _item(item: dict, featured: str | None) -> Paper:
    paper = item.get("paper")
    if not isinstance(paper, dict):
        raise ValueError("no 'paper' object")
    aid = str(paper.get("id") or "")
    if not ARXIV_ID.match(aid):
        raise ValueError(f"'paper.id' {aid!r} is not an arXiv id")
    title = " ".join(str(paper.get("title") or item.get("title") or "").split())
    if not title:
        raise ValueError("empty title")
    authors = [" ".join(a["name"].split()) for a in paper.get("authors") or [] if a.get("name")]
    day = (paper.get("submittedOnDailyAt") or item.get("publishedAt") or "")[:10] or None
    if featured:
        day = featured
    upvotes = paper.get("upvotes", 0)
    if not isinstance(upvotes, int):
        raise ValueError(f"'upvotes' is {upvotes!r}, expected an integer")
    hf = {
        "upvotes": upvotes,
        "featured": day,
        "comments": item.get("numComments"),
        "github_stars": paper.get("githubStars"),
        "project_page": paper.get("projectPage"),
        "ai_keywords": paper.get("ai_keywords"),
        "url": f"https://huggingface.co/papers/{aid}",
    }
    published = (paper.get("publishedAt") or "")[:10] or None
    return Paper(
        id=aid,
        title=title,
        authors=authors,
        abstract=" ".join(str(paper.get("summary") or item.get("summary") or "").split()),
        published=published,
        code_url=paper.get("githubRepo") or None,
        sources=[SOURCE],
        extra={"hf": {k: v for k, v in hf.items() if v is not None}},
    )


PAGE_SIZE = 100
MAX_PAGES = 50


def fetch_daily_papers(
    http: HttpClient,
    day: str | None = None,
    week: str | None = None,
    month: str | None = None,
    *,
    base_url: str = API_URL,
) -> tuple[list[Paper], list[str]]:
    """One period's papers, page by page (`p`, `limit`): a busy week or month has more than
    one page. A short page is the last one."""
    params = daily_papers_params(day, week, month)
    papers: list[Paper] = []
    errors: list[str] = []
    seen: set[str] = set()
    for page in range(MAX_PAGES):
        resp = http.get(base_url, params={**params, "limit": PAGE_SIZE, "p": page})
        got, errs = parse_daily_papers(resp.content, featured=day)
        papers.extend(p for p in got if p.id not in seen)
        seen.update(p.id for p in got)
        errors.extend(f"page {page}: {e}" if page else e for e in errs)
        if len(got) + len(errs) < PAGE_SIZE:
            break
    else:
        errors.append(f"daily_papers: stopped after {MAX_PAGES} pages of {PAGE_SIZE}")
    return papers, errors

"""Hugging Face Daily Papers (``/api/daily_papers``): arXiv papers featured on a (UTC) day, with
their upvotes, comments and GitHub repository under ``extra["hf"]``, merged into the arXiv
record of the same paper. Which days ``sync`` reads, and reads again, is in docs/sources.md.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from typing import Any

import click

from paperdex.paper import ARXIV_ID, Paper
from paperdex.sources.http import HttpClient, SourceError, UnreadableResponse
from paperdex.sources.registry import Source, days, register, saved_state, trust, utc_today, words
from paperdex.text.latex import safe_url

SOURCE = "hf"
API_URL = "https://huggingface.co/api/daily_papers"
PAPER_URL = "https://huggingface.co/api/papers/"  # + arXiv id: one paper, as a daily item's `paper`


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
    """Papers of one response; ``featured``: the day asked for, for items that do not say."""
    return _papers(_json(body, "daily_papers", list), featured)


def _json(body: bytes | str, what: str, kind: type) -> Any:
    """``body`` as JSON of ``kind``; a body that does not parse (cut off) is asked for again."""
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UnreadableResponse(f"malformed {what} response ({e}); truncated download?") from e
    if not isinstance(value, kind):
        expected = "a list" if kind is list else "an object"
        raise SourceError(f"{what} response is a {type(value).__name__}, expected {expected}")
    return value


def _papers(items: list[Any], featured: str | None) -> tuple[list[Paper], list[str]]:
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
    # submittedOnDailyAt is the day the paper was featured; publishedAt is its arXiv time
    day = (paper.get("submittedOnDailyAt") or "")[:10] or featured or (item.get("publishedAt") or "")[:10] or None
    upvotes = paper.get("upvotes", 0)
    if not isinstance(upvotes, int):
        raise ValueError(f"'upvotes' is {upvotes!r}, expected an integer")
    org = paper.get("organization") or item.get("organization")
    repo = safe_url(paper.get("githubRepo"))  # links: http(s) only, as every output shows them
    stars = paper.get("githubStars")
    hf = {
        "upvotes": upvotes,
        "featured": day,
        "comments": item.get("numComments"),
        "url": f"https://huggingface.co/papers/{aid}",
        "project_page": safe_url(paper.get("projectPage")),
        "github_repo": repo,
        "github_stars": stars,
        "ai_summary": paper.get("ai_summary") or None,
        "ai_keywords": paper.get("ai_keywords") or None,
        "organization": (org.get("fullname") or org.get("name")) if isinstance(org, dict) else None,
        "thumbnail": safe_url(item.get("thumbnail")),
    }
    extra: dict = {"hf": {k: v for k, v in hf.items() if v is not None}}
    if repo and isinstance(stars, int):
        extra["code_stars"] = stars  # what the paper card shows next to code_url
    return Paper(
        id=aid,
        title=title,
        authors=authors,
        abstract=" ".join(str(paper.get("summary") or item.get("summary") or "").split()),
        published=(paper.get("publishedAt") or "")[:10] or None,
        code_url=repo,
        sources=[SOURCE],
        extra=extra,
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
    """One period's papers, page by page until an empty one (a server may cap ``limit``)."""
    params = daily_papers_params(day, week, month)
    papers: list[Paper] = []
    errors: list[str] = []
    seen: set[str] = set()
    previous = None
    for page in range(MAX_PAGES):
        content, (got, errs) = http.fetch(
            base_url,
            lambda r: (r.content, parse_daily_papers(r.content, featured=day)),
            {**params, "limit": PAGE_SIZE, "p": page},
        )
        if content == previous:
            break  # a server that ignores `p` sends the same page again: nothing more to read
        previous = content
        if not got and not errs:
            break
        papers.extend(p for p in got if p.id not in seen)
        seen.update(p.id for p in got)
        errors.extend(f"page {page}: {e}" if page else e for e in errs)
    else:
        errors.append(f"daily_papers: stopped after {MAX_PAGES} pages of {PAGE_SIZE}")
    return papers, errors


def fetch_paper(http: HttpClient, arxiv_id: str, *, base_url: str = PAPER_URL) -> tuple[list[Paper], list[str]]:
    """One paper's current upvotes, comments and stars (``/api/papers/<id>``: a daily item's ``paper``)."""
    aid = re.sub(r"v\d+$", "", arxiv_id.strip())
    if not ARXIV_ID.match(aid):
        return [], [f"not an arXiv id: {arxiv_id!r}"]

    def parse(r: Any) -> tuple[list[Paper], list[str]]:
        if r.status_code == 404:
            return [], [f"Hugging Face has no paper {aid}"]
        body = _json(r.content, f"papers/{aid}", dict)
        return _papers([{"paper": body, "numComments": body.get("numComments")}], None)

    return http.fetch(base_url.rstrip("/") + "/" + aid, parse, accept=(404,))


# --- the source, as paperdex ingest / sync / the merge see it --------------------------------

LOOK_BACK_LIMIT = 31  # days: a sync after a long pause reads at most a month of Daily Papers
REFRESH_DAYS = 7  # the last days read again on every sync: their upvotes still move


def _run(
    store: Any, http: HttpClient, opts: dict[str, Any], section: dict[str, Any], today: date | None
) -> tuple[list[Paper], list[str]]:
    """One day (default today, UTC), ISO week or month; or given papers (``--paper``)."""
    if papers := opts.get("papers"):
        got = [fetch_paper(http, aid, base_url=section.get("paper_url") or PAPER_URL) for aid in words(papers)]
        return [p for ps, _ in got for p in ps], [e for _, errs in got for e in errs]
    day = opts.get("date") or opts.get("day")
    week, month = opts.get("week"), opts.get("month")
    if not (day or week or month):
        day = (today or utc_today()).isoformat()
    return fetch_daily_papers(http, day, week, month, base_url=section.get("url") or API_URL)  # ingest's base_url too


def _read_days(store: Any) -> set[str]:
    days = saved_state(store, "hf:read")
    return {d for d in days if isinstance(d, str)} if isinstance(days, list) else set()


def _plan(section: dict[str, Any], store: Any, today: date) -> list[tuple[str, dict[str, Any]]]:
    """Every day since the first sync not read whole yet, and the last ``refresh_days`` again."""
    back = int(section.get("days", 3))
    refresh = int(section.get("refresh_days", REFRESH_DAYS))
    read = _read_days(store)
    first = store.get_state("hf:first_day") or store.get_state("hf:last_day")  # a store from before first_day
    start = date.fromisoformat(first) if first else today - timedelta(days=max(back, 1) - 1)
    since = (today - timedelta(days=max(refresh, 1) - 1)).isoformat()
    return [
        (f"hf {day}", {"date": day, "since": start.isoformat()})
        for day in map(date.isoformat, days(max(start, today - timedelta(days=LOOK_BACK_LIMIT)), today))
        if day not in read or day >= since
    ]


def _done(store: Any, opts: dict[str, Any]) -> None:
    """A day read whole: it is not asked for again once it leaves the refresh window."""
    day = opts["date"]
    read = _read_days(store)
    read.add(day)
    store.set_state("hf:read", json.dumps(sorted(read)[-(LOOK_BACK_LIMIT + REFRESH_DAYS + 30) :]))
    if not store.get_state("hf:first_day"):
        store.set_state("hf:first_day", opts.get("since") or day)
    if day > (store.get_state("hf:last_day") or ""):
        store.set_state("hf:last_day", day)


register(
    Source(
        name=SOURCE,
        order=30,
        sections=("huggingface", "hf"),
        config_keys=frozenset({"days", "refresh_days", "url", "paper_url"}),
        options=(
            click.Option(["--date", "date"], help="hf: Daily Papers of this day (default today, UTC)."),
            click.Option(
                ["--paper", "papers"], multiple=True, help="hf: refresh this paper's upvotes and stars (arXiv id)."
            ),
            click.Option(["--week"], help="hf: Daily Papers of an ISO week, YYYY-Www."),
            click.Option(["--month"], help="hf: Daily Papers of a month, YYYY-MM."),
        ),
        ranks={SOURCE: trust(title=30, abstract=30, authors=30, venue=5, dates=15, links=30, code=45, categories=10)},
        plan=_plan,
        run=_run,
        done=_done,
        example="""\
[huggingface]
days = 3                                       # the first sync looks back this many days
refresh_days = 7                               # upvotes and stars of these last days re-read each sync
""",
    )
)

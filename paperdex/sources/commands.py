"""CLI glue for the sources: ``paperdex sync`` and ``paperdex export``, plus the functions
``paperdex ingest <source>`` and ``paperdex ingest FILE`` call.

Network clients are made by factories that tests replace, so every command runs offline
against recorded responses.
"""

from __future__ import annotations

import logging
import sys
import tomllib
from collections.abc import Callable, Iterable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import click

from ..paper import ARXIV_ID, Paper
from ..store import IngestSummary, Store
from . import arxiv, bibtex, hf, openreview, seeds
from .http import HttpClient, SourceError
from .merge import MergeSummary, ingest_with_merge

log = logging.getLogger("paperdex.sources")

CONFIG_NAME = "sources.toml"
ID_PREFIXES = ("openreview:", "bib:", "seed:")  # ids of records that have no arXiv id
NETWORK_SOURCES = ("arxiv", "openreview", "hf")
EXAMPLE_CONFIG = """\
# paperdex sync reads this file; every section is optional.

[arxiv]
sets = ["cs"]                                  # OAI-PMH sets to harvest
categories = ["cs.CL", "cs.LG", "cs.CV", "cs.AI"]  # keep only these (empty: all)
start = "2025-06-01"                           # first day of the very first harvest
# listings = ["cs.CL"]                         # also read today's RSS announcements

[openreview]
venues = ["NeurIPS.cc/2025/Conference"]

[hf]
days = 3                                       # the first sync looks back this many days
"""

# Replaced by tests (and by anyone pointing paperdex at a mirror).
http_factory: Callable[[str], HttpClient] = lambda source: (  # noqa: E731
    arxiv.arxiv_client() if source == "arxiv" else HttpClient(min_interval=1.0)
)
openreview_factory: Callable[[str], Any] = openreview.make_client


def _summary(papers: Iterable[Paper], errors: list[str], store: Store) -> MergeSummary:
    s = ingest_with_merge(store, papers)
    s.rejected += len(errors)
    s.errors.extend(errors)
    return s


def _as_merge(s: IngestSummary) -> MergeSummary:
    return s if isinstance(s, MergeSummary) else MergeSummary() + s


# --- network sources ---------------------------------------------------------------------


def ingest_source(
    store: Store,
    name: str,
    *,
    http: HttpClient | None = None,
    client: Any = None,
    today: date | None = None,
    **options: Any,
) -> MergeSummary:
    """Fetch one network source into the store, merging with what is there.

    arxiv:      set="cs", from_/until="YYYY-MM-DD", categories=[...]  (OAI-PMH, resumable);
                ids=[...] (API look-up); query="..." (API search); listing="cs.CL" (today's RSS)
    openreview: venue="NeurIPS.cc/2025/Conference", submissions=False
    hf:         date="YYYY-MM-DD" | week="YYYY-Www" | month="YYYY-MM" (default: today)
    """
    if name not in NETWORK_SOURCES:
        raise ValueError(f"unknown source {name!r}; known: {', '.join(NETWORK_SOURCES)}")
    opts = {k: v for k, v in options.items() if v not in (None, (), [])}
    if name == "openreview":
        venue = opts.pop("venue", None)
        if not venue:
            raise ValueError("openreview needs a venue id, e.g. --venue NeurIPS.cc/2025/Conference")
        base = opts.pop("base_url", openreview.API_URL)
        papers, errors = openreview.fetch_venue(
            venue, client or openreview_factory(base), submissions=bool(opts.pop("submissions", False))
        )
        return _summary(papers, errors, store)
    own = http is None
    http = http or http_factory(name)
    try:
        if name == "hf":
            day = opts.get("date") or opts.get("day")
            week, month = opts.get("week"), opts.get("month")
            if not (day or week or month):
                day = (today or date.today()).isoformat()
            papers, errors = hf.fetch_daily_papers(http, day, week, month, base_url=opts.get("base_url", hf.API_URL))
            return _summary(papers, errors, store)
        # arxiv
        if opts.get("ids"):
            ids = opts["ids"]
            ids = ids.replace(",", " ").split() if isinstance(ids, str) else list(ids)
            papers, errors = arxiv.fetch_ids(http, ids, base_url=opts.get("api_url", arxiv.API_URL))
            return _summary(papers, errors, store)
        if opts.get("query"):
            papers, errors = arxiv.search(
                http,
                opts["query"],
                max_results=int(opts.get("max_results", 50)),
                base_url=opts.get("api_url", arxiv.API_URL),
            )
            return _summary(papers, errors, store)
        if opts.get("listing"):
            papers, errors = arxiv.fetch_new(http, opts["listing"], base_url=opts.get("rss_url", arxiv.RSS_URL))
            return _summary(papers, errors, store)
        cats = opts.get("categories")
        if isinstance(cats, str):
            cats = cats.replace(",", " ").split()
        return _as_merge(
            arxiv.harvest(
                store,
                http,
                opts.get("set", opts.get("set_spec", "cs")),
                opts.get("from_", opts.get("from")),
                opts.get("until"),
                cats,
                base_url=opts.get("oai_url", arxiv.OAI_URL),
                start=opts.get("start"),
                today=today,
            )
        )
    finally:
        if own:
            http.close()


# --- files -------------------------------------------------------------------------------


def import_file(store: Store, path: str | Path) -> MergeSummary | None:
    """Import a ``.bib`` file or a seed result page (``.txt``); None for other formats, so
    the caller can try its own readers (JSON Lines)."""
    path = Path(path)
    if path.suffix.lower() == ".bib":
        res = bibtex.read_bibtex(path)
        return _summary(res.papers, res.errors, store)
    if path.suffix.lower() == ".txt" and seeds.is_seed_page(path):
        page = seeds.read_seed_page(path)
        return _summary(page.papers, page.errors, store)
    return None


# --- sync --------------------------------------------------------------------------------


def load_config(data_dir: Path) -> dict[str, Any]:
    path = Path(data_dir) / CONFIG_NAME
    if not path.exists():
        raise FileNotFoundError(f"no {CONFIG_NAME} in {data_dir}; create one, for example:\n\n{EXAMPLE_CONFIG}")
    try:
        cfg = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from e
    unknown = set(cfg) - set(NETWORK_SOURCES)
    if unknown:
        raise ValueError(f"{path}: unknown section(s) {', '.join(sorted(unknown))}; known: arxiv, openreview, hf")
    for section, body in cfg.items():
        if not isinstance(body, dict):
            raise ValueError(f"{path}: [{section}] must be a table")
    return cfg


def _list(v: Any, what: str) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{what} must be a list of strings")
    return v


def plan(cfg: dict[str, Any], store: Store, today: date) -> list[tuple[str, str, dict[str, Any]]]:
    """(source, label, options) for every job the config asks for, in run order."""
    jobs: list[tuple[str, str, dict[str, Any]]] = []
    a = cfg.get("arxiv")
    if a is not None:
        urls = {k: a[k] for k in ("oai_url", "api_url", "rss_url") if k in a}
        for s in _list(a.get("sets", ["cs"]), "arxiv.sets"):
            jobs.append(
                (
                    "arxiv",
                    f"arxiv {s}",
                    {
                        "set": s,
                        "categories": _list(a.get("categories"), "arxiv.categories"),
                        "start": a.get("start"),
                        **urls,
                    },
                )
            )
        for listing in _list(a.get("listings"), "arxiv.listings"):
            jobs.append(("arxiv", f"arxiv new {listing}", {"listing": listing, **urls}))
    o = cfg.get("openreview")
    if o is not None:
        for v in _list(o.get("venues"), "openreview.venues"):
            opts = {"venue": v, "submissions": bool(o.get("submissions", False))}
            if "base_url" in o:
                opts["base_url"] = o["base_url"]
            jobs.append(("openreview", f"openreview {v}", opts))
    h = cfg.get("hf")
    if h is not None:
        last = store.get_state("hf:last_day")
        days = int(h.get("days", 3))
        first = date.fromisoformat(last) if last else today - timedelta(days=max(days, 1) - 1)
        first = max(first, today - timedelta(days=31))
        d = first
        while d <= today:
            opts = {"date": d.isoformat()}
            if "base_url" in h:
                opts["base_url"] = h["base_url"]
            jobs.append(("hf", f"hf {d.isoformat()}", opts))
            d += timedelta(days=1)
    return jobs


def sync_sources(
    store: Store,
    cfg: dict[str, Any] | None = None,
    *,
    only: Iterable[str] = (),
    today: date | None = None,
    echo: Callable[[str], None] = print,
    quiet: bool = False,
) -> tuple[MergeSummary, list[str]]:
    """Run every configured source incrementally; one failing source does not stop the
    others. Returns the total and the failures. ``quiet`` reports only sources that changed
    something or failed (for cron mail)."""
    cfg = load_config(store.data_dir) if cfg is None else cfg
    today = today or date.today()
    only = set(only)
    total, failures = MergeSummary(), []
    for source, label, opts in plan(cfg, store, today):
        if only and source not in only:
            continue
        try:
            s = ingest_source(store, source, today=today, **opts)
        except (SourceError, ValueError) as e:
            failures.append(f"{label}: {e}")
            echo(f"{label}: FAILED: {e}")
            continue
        if source == "hf":
            store.set_state("hf:last_day", opts["date"])
        total = total + s
        if quiet and not (s.added or s.updated):
            continue
        echo(f"{label}: {_fmt(s)}")
        for err in s.errors[:5]:
            echo(f"  skipped: {err}")
        if len(s.errors) > 5:
            echo(f"  … and {len(s.errors) - 5} more")
    return total, failures


def _fmt(s: IngestSummary) -> str:
    d = s.as_dict()
    return ", ".join(f"{v} {k}" for k, v in d.items())


def _store_from(ctx: click.Context) -> Store:
    from ..store import default_data_dir

    obj = ctx.obj if isinstance(ctx.obj, dict) else {}
    return Store(obj.get("data_dir") or default_data_dir())


@click.command()
@click.option("--only", multiple=True, type=click.Choice(NETWORK_SOURCES), help="Run just this source (repeatable).")
@click.option("--quiet", "-q", is_flag=True, help="Print only changes and failures (for cron).")
@click.pass_context
def sync(ctx: click.Context, only: tuple[str, ...], quiet: bool) -> None:
    """Bring every source in <data-dir>/sources.toml up to date.

    Incremental: arXiv continues from where the last harvest stopped (an interrupted one
    resumes), Hugging Face from the last day read, OpenReview venues are re-read. Exits 1 if
    any source failed, after running the others. New papers get vectors from `paperdex embed`.
    """
    store = _store_from(ctx)
    try:
        cfg = load_config(store.data_dir)
    except (FileNotFoundError, ValueError) as e:
        raise click.ClickException(str(e)) from None

    try:
        total, failures = sync_sources(store, cfg, only=only, echo=click.echo, quiet=quiet)
    except ValueError as e:  # the config names something impossible
        raise click.ClickException(f"{store.data_dir / CONFIG_NAME}: {e}") from None
    finally:
        store.close()
    if total.added or total.updated or not quiet:
        click.echo(f"sync: {_fmt(total)}")
    if total.added:
        click.echo(f"{total.added} new papers are searchable by words now; `paperdex embed` adds their vectors.")
    if failures:
        click.echo(f"{len(failures)} source(s) failed", err=True)
        ctx.exit(1)


@click.command()
@click.argument("terms", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["bibtex"]), default="bibtex", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here (default: stdout).")
@click.option("--all", "all_", is_flag=True, help="Every paper in the store.")
@click.option("--venue", help="Papers whose venue contains this text.")
@click.option("--area", help="Papers whose venue area contains this text.")
@click.option("--category", help="Papers in this category (cs.LG) or archive (cs).")
@click.option("-n", "--limit", default=100, show_default=True, help="At most this many papers for a query.")
@click.pass_context
def export(ctx, terms, fmt, output, all_, venue, area, category, limit) -> None:
    """Export papers as BibTeX: by ids (`export 2501.00001 openreview:AbC`), by a search
    query (`export "diffusion policy"`), or by filters (`--venue NeurIPS --area "Large Language"`)."""
    store = _store_from(ctx)
    try:
        papers = select_papers(store, terms, all_=all_, venue=venue, area=area, category=category, limit=limit)
        text = bibtex.to_bibtex(papers)
    finally:
        store.close()
    if not papers:
        raise click.ClickException("nothing to export: no paper matched")
    if output:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(papers)} entries to {output}", err=True)
    else:
        sys.stdout.write(text)


def select_papers(
    store: Store,
    terms: Iterable[str] = (),
    *,
    all_: bool = False,
    venue: str | None = None,
    area: str | None = None,
    category: str | None = None,
    limit: int = 100,
) -> list[Paper]:
    """Papers named by id, else found by a lexical search of the terms, else by filters."""
    from ..store import paper_from_row

    terms = list(terms)
    if terms and all(ARXIV_ID.match(t) or t.startswith(ID_PREFIXES) or store.get(t) for t in terms):
        found = [store.get(t) for t in terms]
        missing = [t for t, p in zip(terms, found, strict=True) if p is None]
        if missing:
            raise click.ClickException(f"not in the store: {', '.join(missing)}")
        return [p for p in found if p]
    if terms:
        from ..search import Filters, Searcher

        res = Searcher(store).search(
            " ".join(terms),
            mode="lexical",
            per_page=min(limit, 200),
            filters=Filters(category=category, venue=venue, area=area),
        )
        return [h.paper for h in res.hits]
    if not (all_ or venue or area or category):
        raise click.UsageError("name ids or a query, or use --all / --venue / --area / --category")
    sql, args = "SELECT * FROM papers WHERE 1", []
    if venue:
        sql += " AND venue LIKE ?"
        args.append(f"%{venue}%")
    if area:
        sql += " AND venue_area LIKE ?"
        args.append(f"%{area}%")
    if category:
        sql += (
            " AND EXISTS (SELECT 1 FROM paper_categories c WHERE c.paper = papers.rowid AND "
            "(c.category = ? OR c.category LIKE ?))"
        )
        args += [category, f"{category}.%"]
    sql += " ORDER BY rowid"
    return [paper_from_row(r) for r in store.conn.execute(sql, args)]

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
SECTIONS = {"arxiv": "arxiv", "openreview": "openreview", "huggingface": "hf", "hf": "hf"}  # [section] -> source
KEYS: dict[str, set[str]] = {
    "arxiv": {"sets", "categories", "start", "listings", "oai_url", "api_url", "rss_url", "min_interval"},
    "openreview": {"venues", "submissions", "url", "username", "password"},
    "hf": {"days", "url"},
}
EXAMPLE_CONFIG = """\
# paperdex sync reads this file; every section is optional.

[arxiv]
sets = ["cs"]                                  # OAI-PMH sets: cs, physics:hep-th, cs:cs:CL
categories = ["cs.CL", "cs.LG", "cs.CV", "cs.AI"]  # keep only these (empty: all)
start = "2025-06-01"                           # first day of the very first harvest
# listings = ["cs.CL"]                         # also read today's RSS announcements

[openreview]
venues = ["NeurIPS.cc/2025/Conference"]
# logging in is required: set OPENREVIEW_USERNAME / OPENREVIEW_PASSWORD (or username/password here)

[huggingface]
days = 3                                       # the first sync looks back this many days
"""


def default_http(source: str, section: dict[str, Any] | None = None) -> HttpClient:
    """The client of one service: arXiv's keeps to its 3 s limit (a shorter ``min_interval``
    only for a mirror), Hugging Face's to one request a second."""
    section = section or {}
    if source == "arxiv":
        urls = [
            section.get(k) or d
            for k, d in (("oai_url", arxiv.OAI_URL), ("api_url", arxiv.API_URL), ("rss_url", arxiv.RSS_URL))
        ]
        return arxiv.arxiv_client(min_interval=float(section.get("min_interval", arxiv.MIN_INTERVAL)), urls=urls)
    return HttpClient(min_interval=1.0)


# Replaced by tests.
http_factory: Callable[[str, dict[str, Any]], HttpClient] = default_http
openreview_factory: Callable[..., Any] = openreview.make_client


def _summary(papers: Iterable[Paper], errors: list[str], store: Store) -> MergeSummary:
    s = ingest_with_merge(store, papers)
    s.rejected += len(errors)
    s.errors.extend(errors)
    return s


def _as_merge(s: IngestSummary) -> MergeSummary:
    return s if isinstance(s, MergeSummary) else MergeSummary() + s


def _section(config: dict[str, Any] | None, source: str) -> dict[str, Any]:
    """The sources.toml section of a source ([huggingface] or [hf] for hf)."""
    if not config:
        return {}
    for name, src in SECTIONS.items():
        if src == source and isinstance(config.get(name), dict):
            return config[name]
    return {}


def _stored_config(store: Store) -> dict[str, Any]:
    """sources.toml of the store's data directory, if there is one: `paperdex ingest arxiv`
    uses the same service addresses and credentials as `paperdex sync`."""
    path = Path(store.data_dir) / CONFIG_NAME
    return load_config(store.data_dir) if path.exists() else {}


# --- network sources ---------------------------------------------------------------------


def ingest_source(
    store: Store,
    name: str,
    *,
    http: HttpClient | None = None,
    client: Any = None,
    today: date | None = None,
    config: dict[str, Any] | None = None,
    **options: Any,
) -> MergeSummary:
    """Fetch one network source into the store, merging with what is there.

    arxiv:      set="cs", from_/until="YYYY-MM-DD", categories=[...]  (OAI-PMH, resumable);
                ids=[...] (API look-up); query="..." (API search); listing="cs.CL" (today's RSS)
    openreview: venue="NeurIPS.cc/2025/Conference", submissions=False
    hf:         date="YYYY-MM-DD" | week="YYYY-Www" | month="YYYY-MM" (default: today)

    Service addresses (and OpenReview credentials) come from ``config`` (sources.toml; read
    from the store's data directory when not given) unless an option names them. ``http``
    and ``client`` let a caller share one connection across jobs (``sync`` does).
    """
    if name not in NETWORK_SOURCES:
        raise ValueError(f"unknown source {name!r}; known: {', '.join(NETWORK_SOURCES)}")
    opts = {k: v for k, v in options.items() if v not in (None, (), [])}
    section = _section(_stored_config(store) if config is None else config, name)
    if name == "openreview":
        venue = opts.pop("venue", None)
        if not venue:
            raise ValueError("openreview needs a venue id, e.g. --venue NeurIPS.cc/2025/Conference")
        base = opts.pop("base_url", None) or section.get("url") or openreview.API_URL
        if client is None:
            client = openreview_factory(base, *openreview.credentials(section))
        papers, errors = openreview.fetch_venue(venue, client, submissions=bool(opts.pop("submissions", False)))
        return _summary(papers, errors, store)
    own = http is None
    http = http or http_factory(name, section)
    try:
        if name == "hf":
            day = opts.get("date") or opts.get("day")
            week, month = opts.get("week"), opts.get("month")
            if not (day or week or month):
                day = (today or date.today()).isoformat()
            base = opts.get("base_url") or section.get("url") or hf.API_URL
            papers, errors = hf.fetch_daily_papers(http, day, week, month, base_url=base)
            return _summary(papers, errors, store)
        # arxiv
        urls = {
            k: opts.get(k) or section.get(k) or d
            for k, d in (("oai_url", arxiv.OAI_URL), ("api_url", arxiv.API_URL), ("rss_url", arxiv.RSS_URL))
        }
        if opts.get("ids"):
            ids = opts["ids"]
            ids = ids.replace(",", " ").split() if isinstance(ids, str) else list(ids)
            papers, errors = arxiv.fetch_ids(http, ids, base_url=urls["api_url"])
            return _summary(papers, errors, store)
        if opts.get("query"):
            papers, errors = arxiv.search(
                http, opts["query"], max_results=int(opts.get("max_results", 50)), base_url=urls["api_url"]
            )
            return _summary(papers, errors, store)
        if opts.get("listing"):
            papers, errors = arxiv.fetch_new(http, opts["listing"], base_url=urls["rss_url"])
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
                base_url=urls["oai_url"],
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
    """sources.toml, checked: known sections and keys only, so a typo is an error, not a
    silently ignored setting."""
    path = Path(data_dir) / CONFIG_NAME
    if not path.exists():
        raise FileNotFoundError(f"no {CONFIG_NAME} in {data_dir}; create one, for example:\n\n{EXAMPLE_CONFIG}")
    try:
        cfg = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from e
    unknown = set(cfg) - set(SECTIONS)
    if unknown:
        raise ValueError(
            f"{path}: unknown section(s) {', '.join(sorted(unknown))}; known: arxiv, openreview, huggingface"
        )
    if "hf" in cfg and "huggingface" in cfg:
        raise ValueError(f"{path}: [hf] and [huggingface] are the same section; keep one")
    for section, body in cfg.items():
        if not isinstance(body, dict):
            raise ValueError(f"{path}: [{section}] must be a table")
        bad = set(body) - KEYS[SECTIONS[section]]
        if bad:
            raise ValueError(
                f"{path}: unknown key(s) {', '.join(sorted(bad))} in [{section}]; "
                f"known: {', '.join(sorted(KEYS[SECTIONS[section]]))}"
            )
        for key in ("oai_url", "api_url", "rss_url", "url"):
            if key in body and not (isinstance(body[key], str) and body[key].startswith(("http://", "https://"))):
                raise ValueError(f"{path}: [{section}] {key} must be an http(s) URL, got {body[key]!r}")
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
    """(source, label, options) for every job the config asks for, in run order. Set names
    are checked here, so a misspelt one fails before any request."""
    jobs: list[tuple[str, str, dict[str, Any]]] = []
    a = cfg.get("arxiv")
    if a is not None:
        for s in _list(a.get("sets", ["cs"]), "arxiv.sets"):
            arxiv.check_set(s)
            jobs.append(
                (
                    "arxiv",
                    f"arxiv {s}",
                    {"set": s, "categories": _list(a.get("categories"), "arxiv.categories"), "start": a.get("start")},
                )
            )
        for listing in _list(a.get("listings"), "arxiv.listings"):
            jobs.append(("arxiv", f"arxiv new {listing}", {"listing": listing}))
    o = cfg.get("openreview")
    if o is not None:
        for v in _list(o.get("venues"), "openreview.venues"):
            jobs.append(
                ("openreview", f"openreview {v}", {"venue": v, "submissions": bool(o.get("submissions", False))})
            )
    h = _section(cfg, "hf") if any(SECTIONS[k] == "hf" for k in cfg) else None
    if h is not None:
        last = store.get_state("hf:last_day")
        days = int(h.get("days", 3))
        first = date.fromisoformat(last) if last else today - timedelta(days=max(days, 1) - 1)
        first = max(first, today - timedelta(days=31))
        d = first
        while d <= today:
            jobs.append(("hf", f"hf {d.isoformat()}", {"date": d.isoformat()}))
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
    something or failed (for cron mail).

    Every arXiv job (OAI sets, RSS listings) shares one client, so arXiv's one-request-per-3-s
    limit, which covers all its APIs together, holds across the whole run; OpenReview logs in
    once per run."""
    cfg = load_config(store.data_dir) if cfg is None else cfg
    today = today or date.today()
    only = set(only)
    total, failures = MergeSummary(), []
    clients: dict[str, Any] = {}
    try:
        for source, label, opts in plan(cfg, store, today):
            if only and source not in only:
                continue
            try:
                if source not in clients:
                    section = _section(cfg, source)
                    if source == "openreview":
                        url = section.get("url") or openreview.API_URL
                        clients[source] = openreview_factory(url, *openreview.credentials(section))
                    else:
                        clients[source] = http_factory(source, section)
                shared = clients[source]
                s = ingest_source(
                    store,
                    source,
                    today=today,
                    config=cfg,
                    http=None if source == "openreview" else shared,
                    client=shared if source == "openreview" else None,
                    **opts,
                )
            except (SourceError, ValueError) as e:
                failures.append(f"{label}: {e}")
                echo(f"{label}: FAILED: {e}")
                if source == "openreview" and source not in clients:
                    clients[source] = _Failed(e)
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
    finally:
        for c in clients.values():
            if isinstance(c, HttpClient):
                c.close()
    return total, failures


class _Failed:
    """Stands in for a client that could not be made (a failed login): every later venue
    reports the same error instead of trying to log in again."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def get_all_notes(self, **_: Any) -> Any:
        raise SourceError(str(self.error))


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

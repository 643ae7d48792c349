"""`paperdex sync` and `paperdex export`, over paperdex/sources/sync.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from paperdex.cli.common import _store
from paperdex.cli.progress import Progress
from paperdex.paper import ARXIV_ID, Paper
from paperdex.sources import bibtex, completeness
from paperdex.sources.sync import CONFIG_NAME, NETWORK_SOURCES, fmt_summary, load_config, sync_log, sync_sources
from paperdex.store import Store

ID_PREFIXES = ("openreview:", "bib:", "seed:")  # ids of records that have no arXiv id


@click.command()
@click.option("--only", multiple=True, type=click.Choice(NETWORK_SOURCES), help="Run just this source (repeatable).")
@click.option("--quiet", "-q", is_flag=True, help="Print only changes and failures (for cron).")
@click.option("--check", is_flag=True, help="Only report whether each listing's papers are all here (exit 1 if not).")
@click.pass_context
def sync(ctx: click.Context, only: tuple[str, ...], quiet: bool, check: bool) -> None:
    """Bring every source in <data-dir>/sources.toml up to date.

    Incremental: arXiv continues from where the last harvest stopped (an interrupted one
    resumes); Hugging Face reads every UTC day not read yet (a failed day again) and re-reads
    the last refresh_days for upvotes and stars; OpenReview venues are re-read. Exits 1 if any
    source failed, after running the others. Retries and notes go to <data-dir>/sync.log.
    New papers get vectors from `paperdex embed`.
    """
    if check:
        _check(ctx)
        return
    store = _store(ctx, create=True)  # sync may fill a new data directory, as ingest does
    try:
        cfg = load_config(store.data_dir)
    except (FileNotFoundError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    try:
        with sync_log(store.data_dir, quiet), Progress("sync", unit="jobs", quiet=quiet, rate=False) as p:
            total, failures = sync_sources(
                store, cfg, only=only, echo=click.echo, quiet=quiet, progress=p.step, environ=os.environ
            )
            p.finish()
    except ValueError as e:  # the config names something impossible
        raise click.ClickException(f"{store.data_dir / CONFIG_NAME}: {e}") from None
    finally:
        store.close()
    if total.added or total.updated or not quiet:
        click.echo(f"sync: {fmt_summary(total)}")
    if total.added:
        click.echo(f"{total.added} new papers are searchable by words now; `paperdex embed` adds their vectors.")
    if failures:
        click.echo(f"{len(failures)} source(s) failed", err=True)
        ctx.exit(1)


def _check(ctx: click.Context) -> None:
    """The completeness report: per listing and announced day, complete or what is missing;
    the announcement days no sync read. Reads only."""
    with _store(ctx, readonly=True) as store:
        found = completeness.states(store)
        unread = completeness.unread_days(store)
    if not found:
        click.echo("no listing read yet: add listings = [...] under [arxiv] in sources.toml and run sync")
        return
    for line in [*(st.line() for st in found), *unread]:
        click.echo(line)
    gaps = sum(len(st.missing) for st in found)
    click.echo(f"check: {len(found)} listing days, {gaps} papers missing, {len(unread)} days not read")
    if gaps or unread:
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
def export(ctx, terms, fmt, output, limit, all_, **where) -> None:
    """Export papers as BibTeX: by ids (`export 2501.00001 openreview:AbC`), by a search
    query (`export "diffusion policy"`), or by filters (`--venue NeurIPS --area "Large Language"`)."""
    with _store(ctx, readonly=True) as store:  # a reader: a mistyped --data-dir is an error, not a new empty store
        papers = _select(store, terms, limit, all_, **where)
        text = bibtex.to_bibtex(papers)
    if not papers:
        raise click.ClickException("nothing to export: no paper matched")
    if output:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(papers)} entries to {output}", err=True)
    else:
        sys.stdout.write(text)


def _select(store: Store, terms: tuple[str, ...], limit: int, all_: bool, **where: str | None) -> list[Paper]:
    """Papers named by id, else found by a lexical search of the terms, else by the filters in
    `where` (venue, area, category)."""
    if terms and all(ARXIV_ID.match(t) or t.startswith(ID_PREFIXES) or store.get(t) for t in terms):
        found = [store.get(t) for t in terms]
        missing = [t for t, p in zip(terms, found, strict=True) if p is None]
        if missing:
            raise click.ClickException(f"not in the store: {', '.join(missing)}")
        return [p for p in found if p]
    if terms:
        from paperdex.search import Filters, Searcher

        res = Searcher(store).search(
            " ".join(terms), mode="lexical", per_page=min(limit, 200), filters=Filters(**where)
        )
        return [h.paper for h in res.hits]
    if not (all_ or any(where.values())):
        raise click.UsageError("name ids or a query, or use --all / --venue / --area / --category")
    return store.papers_by_venue_area_category(**where)

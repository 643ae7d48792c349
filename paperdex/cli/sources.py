"""`paperdex sync` and `paperdex export`, over paperdex/sources/sync.py."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path

import click

from paperdex import service
from paperdex.cli.common import Output, UserError, _service, _store, note_copy_behind, tty
from paperdex.cli.progress import Progress
from paperdex.messages import message
from paperdex.paper import ARXIV_ID, typed_id
from paperdex.search import MAX_WINDOW, MODES
from paperdex.service import Pool
from paperdex.sources import bibtex, completeness
from paperdex.sources.sync import CONFIG_NAME, NETWORK_SOURCES, fmt_summary, load_config, sync_log, sync_sources

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
    note_copy_behind(ctx, total.added + total.updated)
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
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True, help="As `search --mode`.")
@click.option("-n", "--limit", default=100, show_default=True, help=f"Papers of a query, at most (1-{MAX_WINDOW}).")
@click.pass_context
def export(ctx, terms, fmt, output, limit, all_, **where) -> None:
    """Export papers as BibTeX: by ids (`export 2501.00001 openreview:AbC`), the papers a search
    query matches, as `paperdex search` finds them (`export "diffusion policy"`), or by filters
    (`--venue NeurIPS --area "Large Language"`). Notes and a cut (-n) are said on stderr."""
    # -o is checked before the search: a missing directory is the one line said, and nothing is half-written
    with Output(output) if output else nullcontext() as out:
        with _service(ctx, readonly=True) as pool:  # a reader: a mistyped --data-dir is an error, not a new store
            papers, notes = _select(pool, terms, limit, all_, **where)
            text = bibtex.to_bibtex(papers)
        for note in notes:
            click.echo(f"note: {tty(note)}", err=True)
        if not papers:
            raise UserError(message("export_nothing"))
        if out is None:
            sys.stdout.write(text)
            return
        out.write(text)
    click.echo(message("export_wrote", n=len(papers), path=tty(output)), err=True)


def _select(pool: Pool, terms: tuple[str, ...], limit: int, all_: bool, mode: str, **where: str | None):
    """(papers, notes): the papers of ids when any term is an id (an unknown one is an error,
    never a search for the list); else the papers a search of the terms matches, as `search`
    finds them, with its notices and a note when -n cut them; else the filters' papers."""
    if terms and any(_is_id(pool, t) for t in terms):
        return service.papers_by_ids(pool, list(terms)), []
    if terms:
        venue, area, category = where.get("venue"), where.get("area"), where.get("category")
        params = service.SearchParams(q=" ".join(terms), mode=mode, venue=venue, area=area, category=category)
        papers, res = service.matched(pool, params, limit)
        return papers, [*res.notices, *_cut(len(papers), res.total)]
    if not (all_ or any(where.values())):
        raise click.UsageError(message("export_needs_what"))
    with pool.reader() as store:
        return store.papers_by_venue_area_category(**where), []


def _is_id(pool: Pool, term: str) -> bool:
    """Whether a term names a paper, by the rule `show` and the API use (paper.typed_id)."""
    pid = typed_id(term)
    if ARXIV_ID.match(pid) or pid.startswith(ID_PREFIXES):
        return True
    with pool.reader() as store:
        return bool(pid) and "\x00" not in pid and store.get(pid) is not None


def _cut(n: int, total: int) -> list[str]:
    """What a user is told when the export holds fewer papers than match."""
    if n >= total:
        return []
    if n == MAX_WINDOW:
        return [message("export_cut_window", n=n, total=total, limit=MAX_WINDOW)]
    return [message("export_cut", n=n, total=total)]

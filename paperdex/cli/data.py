"""`paperdex ingest`, `embed`, `init` and `migrate`: the commands that fill the data directory
and bring it up to date."""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from paperdex.cli.common import UserError, _settings, _store, note_copy_behind, tty
from paperdex.cli.progress import Progress
from paperdex.index.publish import publish
from paperdex.ingest import check_file, import_vectors, ingest_files, load_vectors_file
from paperdex.sources import SourceError, registry
from paperdex.store import IngestSummary, Store


def _source_options(command: click.Command) -> click.Command:
    """Add every registered source's own options (arxiv --set, openreview --venue, ...) to
    `ingest`, after the file options: a new source brings its options with it."""
    own = {p.name for p in command.params}
    added = list(registry.cli_options())
    if clash := own & {o.name for o in added}:
        raise RuntimeError(f"a source option is named like an `ingest` parameter: {', '.join(sorted(clash))}")
    at = next(i for i, p in enumerate(command.params) if p.name == "strict")
    command.params[at:at] = added
    return command


@_source_options
@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--vectors", type=click.Path(exists=True, dir_okay=False), help="Precomputed vectors (.npy).")
@click.option("--ids", type=click.Path(exists=True, dir_okay=False), help="Ids aligned to --vectors rows.")
@click.option("--model", help="The model that made --vectors (e.g. all-MiniLM-L6-v2).")
@click.option("--strict", is_flag=True, help="Stop at the first bad record; files are checked before any write.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar (off a terminal: no progress lines).")
@click.pass_context
def ingest(ctx, paths, vectors, ids, model, strict, quiet, **source_options) -> None:
    """Add or update papers from files or a source.

    \b
    Files: JSON Lines / JSON (plain or .gz), BibTeX (.bib).
    Sources: `ingest arxiv --set cs --from 2025-06-01`, `ingest arxiv --id 2510.05491`,
    `ingest openreview --venue NeurIPS.cc/2025/Conference`, `ingest hf --date 2025-06-02`.

    Upserts by id and merges one paper's records from several sources; re-ingesting changes
    nothing. Malformed records are reported as FILE:LINE and skipped (every good record is
    kept); the exit status is 1 when any record was rejected. New papers are searchable by
    words at once; `paperdex embed` adds their vectors.
    """
    from paperdex.index.embed import check_model_name

    if vectors and not (ids and model):
        raise click.UsageError("--vectors needs --ids and --model")
    if (ids or model) and not vectors:
        raise click.UsageError("--ids and --model go with --vectors")
    if model:
        check_model_name(model)
    if vectors:
        load_vectors_file(vectors)  # refuse a wrong file before ingesting anything
    store = _store(ctx, create=True)
    given = {k: v for k, v in source_options.items() if v not in (None, (), False)}
    source = _source_named(paths, given)
    notes: list[str] = []
    if source:
        total = _ingest_source(store, source, given, quiet)
    else:
        total = _ingest_files(store, [Path(p) for p in paths], strict, quiet, notes)
    for line in [*notes[:50], *total.errors[:50]]:
        click.echo(tty(line), err=True)
    if len(total.errors) > 50:
        click.echo(f"... and {len(total.errors) - 50} more rejected records", err=True)
    merged = f", merged {total.merged}" if total.merged else ""
    click.echo(
        f"added {total.added}, updated {total.updated}, unchanged {total.unchanged}, rejected {total.rejected}{merged}"
    )
    note_copy_behind(ctx, total.added + total.updated)
    if vectors:
        with _write_errors(store):
            n = import_vectors(store, vectors, ids, model)
        click.echo(f"vectors: {n} attached ({model})")
        publish(store)  # the indexes now, so readers (and the first search) find them ready
    if total.rejected:
        ctx.exit(1)


def _source_named(paths: tuple[str, ...], given: dict[str, Any]) -> str | None:
    """The network source `ingest NAME` names, else None (files). An option of another source
    is a usage error, not silently ignored."""
    source = paths[0] if paths[0] in registry.network_names() else None
    for name in given:
        owner = registry.source_of_option(name)
        if owner is not None and owner.name != source:
            flag = next(o.opts[0] for o in owner.options if o.name == name)
            where = f"`ingest {source}`" if source else "files"
            raise click.UsageError(f"{flag} is an option of `ingest {owner.name}`, not of {where}")
    if source and len(paths) > 1:
        raise click.UsageError(f"`ingest {source}` takes options, not more paths")
    return source


def _ingest_source(store: Store, source: str, given: dict[str, Any], quiet: bool) -> IngestSummary:
    from paperdex.sources.sync import ingest_source

    try:
        with _write_errors(store), Progress(f"ingest {source}", unit=None, quiet=quiet):
            return ingest_source(store, source, environ=os.environ, **given)
    except (SourceError, ValueError) as e:
        raise UserError(str(e)) from None


def _ingest_files(store: Store, files: list[Path], strict: bool, quiet: bool, notes: list[str]) -> IngestSummary:
    for p in files:
        if not p.exists():
            raise UserError(f"no such file: {p}")
    for p in files if strict else ():
        if errs := check_file(p):
            raise UserError(f"{tty(errs[0])} (--strict: nothing was written)")
    size = sum(p.stat().st_size for p in files if p.is_file())
    with _write_errors(store), Progress("ingesting", size, unit="bytes", quiet=quiet) as bar:
        return ingest_files(store, files, progress=bar.update, notes=notes)


@contextmanager
def _write_errors(store: Store) -> Iterator[None]:
    """A failed write (disk full, a database that is not one) is one line, not a traceback. Each
    batch is one transaction: the batches before the failing one are stored, and a rerun goes on."""
    try:
        yield
    except (sqlite3.DatabaseError, OSError) as exc:
        if (isinstance(exc, sqlite3.OperationalError) and "full" in str(exc)) or (
            isinstance(exc, OSError) and exc.errno == errno.ENOSPC
        ):
            raise UserError(
                f"the disk is full (writing {store.data_dir}); the batch in flight was not written, "
                "earlier batches were. Free some space and run the same command again."
            ) from None
        if isinstance(exc, sqlite3.DatabaseError):
            raise UserError(f"cannot write {store.path}: {exc}") from None
        raise


@click.command()
@click.option(
    "--model",
    help="Embedding model (default: the store's, else $PAPERDEX_MODEL or multilingual-e5-small+all-MiniLM-L6-v2): "
    "a built-in one, hf:ORG/NAME from the Hugging Face hub, or openai:NAME at $PAPERDEX_EMBED_URL.",
)
@click.option("--batch-size", default=32, show_default=True, help="Papers per committed batch (a GPU wants 256+).")
@click.option("--limit", type=int, help="Embed at most this many papers.")
@click.option("--threads", type=click.IntRange(0), help="CPU threads for the model (default: $PAPERDEX_EMBED_THREADS).")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True)
@click.option(
    "--reset",
    is_flag=True,
    help="Drop every vector first. Not needed to change models: --model OTHER re-embeds while the old vectors serve.",
)
@click.option("--quiet", "-q", is_flag=True)
@click.pass_context
def embed(ctx, model, batch_size, limit, threads, device, reset, quiet) -> None:
    """Compute missing vectors and replace stale ones (text edited since its vector was made),
    resumably: stop it any time; it continues where it was."""
    from paperdex.index.embed import embed_store, get_embedder, pending_count

    settings = _settings(ctx).replace(model=model, embed_threads=threads)
    threads = settings.embed_threads or None  # the flag, else $PAPERDEX_EMBED_THREADS; None: the engine chooses
    store = _store(ctx)
    # the store's model (or the one it is switching to) wins over the setting
    name = model or store.get_state("model_next") or store.model or settings.model
    # load the model before --reset drops anything: a model that cannot load costs nothing
    get_embedder(name, threads, device=device, allow_download=True, options=settings.embedding)
    if reset:
        store.reset_vectors()
    todo = pending_count(store, name)
    if limit is not None:
        todo = min(todo, limit)
    with Progress("embedding", todo, quiet=quiet) as bar:
        n = embed_store(
            store,
            name,
            batch_size,
            limit,
            progress=bar.update,
            threads=threads,
            device=device,
            options=settings.embedding,
        )
    nxt = store.get_state("model_next")
    if nxt:
        left = pending_count(store, nxt)
        click.echo(
            f"embedded {n} papers with {nxt}; {store.count() - left}/{store.count()} have its vectors, "
            f"searches use {store.model} until all do (run embed again to go on)"
        )
    else:
        click.echo(f"embedded {n} papers with {store.model}; {store.vector_count()}/{store.count()} have vectors")
    publish(store)  # the indexes now, so readers (and the first search) find them ready


@click.command()
@click.pass_context
def init(ctx) -> None:
    """Make an empty store in the data directory (`ingest` makes one too). Other commands that
    write refuse a directory without one, so a mistyped --data-dir is an error, not a new store."""
    store = _store(ctx, create=True)
    publish(store)
    click.echo(f"a paperdex store in {store.data_dir}: {store.count()} papers")


@click.command()
@click.option(
    "--to",
    "target",
    metavar="URI",
    help="Copy the store, with its vectors, into another backend: milvus://PATH.db (Milvus Lite) "
    "or milvus://http://HOST:19530; resumable.",
)
@click.option("--restart", is_flag=True, help="With --to: copy everything again, not from the last checkpoint.")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=1000, show_default=True)
@click.pass_context
def migrate(ctx, target, restart, batch_size) -> None:
    """Bring the data directory up to this version of paperdex: its schema, and the search
    indexes readers use (readers never do either). With --to, copy it into another backend."""
    store = _store(ctx)  # a writer: opening migrates, under the write lock
    click.echo(f"schema version {store.schema_version()}: up to date")
    publish(store)
    click.echo("search indexes: published")
    if target:
        _migrate_to(store, target, restart, batch_size, _settings(ctx).model)


def _migrate_to(store: Store, target: str, restart: bool, batch_size: int, model: str) -> None:
    from paperdex.backends import open_backend, parse_uri
    from paperdex.backends.migrate import checkpoint_key, migrate_store
    from paperdex.index.embed import model_dim

    # a new collection is made for the store's vectors, or, before any, for those `embed` will make
    dim = store.vector_dim() or model_dim(store.get_state("model_next") or store.model or model)
    try:
        kind, where, _ = parse_uri(target)
    except ValueError as e:
        raise UserError(str(e)) from None
    if kind != "milvus":
        raise UserError(f"--to takes a milvus:// URI, not {target!r}")
    sized: dict[str, Any] = {"dim": dim} if dim else {}
    dest: Any = open_backend(target, remake=restart, **sized)  # a Milvus backend: it keeps the checkpoint
    try:
        last = 0 if restart else int(dest.get_state(checkpoint_key(store)) or 0)
        with Progress(f"copying to {where}", store.count_after_rowid(last)) as bar:
            s = migrate_store(store, dest, batch_size=batch_size, restart=restart, progress=bar.update)
    finally:
        dest.close()
    click.echo(
        f"copied {s.copied} papers ({s.with_vectors} with vectors) to {where}; "
        f"{s.skipped} were there from an earlier run, {s.refreshed} of them written again (changed since) "
        f"and {s.removed} deleted (gone from the store); checkpoint at rowid {s.last_rowid}"
        + (f"; aliases (ids that merges moved) brought up to date: {s.aliases}" if s.aliases else "")
    )

"""The `paperdex` command: one click group, each command a thin layer over library functions.

Exit codes: 0 success, 1 a user error (one line on stderr) or an ingest that rejected any record
(each reported as FILE:LINE), 2 usage.
"""

from __future__ import annotations

import errno
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from paperdex.cli.common import UserError, _fail, _service, _settings, _store, json_text, tty
from paperdex.cli.discover import COMMANDS  # tag, saved, token, related, digest, summarize
from paperdex.cli.progress import Progress
from paperdex.cli.serve import mcp, serve
from paperdex.cli.sources import export, sync
from paperdex.index.publish import publish
from paperdex.search.query import QueryError
from paperdex.settings import Settings, SettingsError
from paperdex.store import Store, StoreError


class _Commands(click.Group):
    """The group of every command: a model that cannot load or a store or backend that cannot
    open (an optional package this install lacks among the reasons) is one line on stderr,
    whichever command met it, never a traceback."""

    def invoke(self, ctx: click.Context):
        from paperdex.index.embed import EmbedError

        try:
            return super().invoke(ctx)
        except (EmbedError, StoreError) as e:
            raise UserError(str(e)) from None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data directory (default: $PAPERDEX_HOME or the user data dir).",
)
@click.option(
    "--backend",
    default=None,
    help="Search this backend's copy of the store (milvus://PATH.db, http://host:19530; "
    "$PAPERDEX_BACKEND); `paperdex migrate --to` makes and refreshes it.",
)
@click.version_option(package_name="paperdex")
@click.pass_context
def cli(ctx: click.Context, data_dir: Path | None, backend: str | None) -> None:
    """paperdex: search research papers on your own machine.

    Settings come from the flags, else PAPERDEX_* environment variables (README, "Settings")."""
    ctx.ensure_object(dict)
    try:  # once, here: a bad variable is one line naming it, before any command runs
        settings = Settings.from_env(data_dir=data_dir, backend=backend)
    except SettingsError as e:
        raise _fail(e) from None
    settings.install()
    ctx.obj["settings"] = settings
    ctx.obj["data_dir"] = settings.data_dir  # for commands that read only the directory


# --- ingest / embed ---------------------------------------------------------------------


def _source_options(command: click.Command) -> click.Command:
    """Add every registered source's own options (arxiv --set, openreview --venue, ...) to
    `ingest`, after the file options: a new source brings its options with it."""
    from paperdex.sources import registry

    own = {p.name for p in command.params}
    added = list(registry.cli_options())
    if clash := own & {o.name for o in added}:
        raise RuntimeError(f"a source option is named like an `ingest` parameter: {', '.join(sorted(clash))}")
    at = next(i for i, p in enumerate(command.params) if p.name == "strict")
    command.params[at:at] = added
    return command


@_source_options
@cli.command()
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
    Files: JSON Lines / JSON (plain or .gz), BibTeX (.bib), seed result pages (.txt).
    Sources: `ingest arxiv --set cs --from 2025-06-01`, `ingest arxiv --id 2510.05491`,
    `ingest openreview --venue NeurIPS.cc/2025/Conference`, `ingest hf --date 2025-06-02`.

    Upserts by id and merges one paper's records from several sources; re-ingesting changes
    nothing. Malformed records are reported as FILE:LINE and skipped (every good record is
    kept); the exit status is 1 when any record was rejected. New papers are searchable by
    words at once; `paperdex embed` adds their vectors.
    """
    from paperdex.index.embed import EmbedError, check_model_name
    from paperdex.ingest import check_file, import_vectors, ingest_file, load_vectors_file
    from paperdex.sources import SourceError, registry
    from paperdex.sources.sync import import_file, ingest_source
    from paperdex.store import IngestSummary

    if vectors and not (ids and model):
        raise click.UsageError("--vectors needs --ids and --model")
    if (ids or model) and not vectors:
        raise click.UsageError("--ids and --model go with --vectors")
    try:
        if model:
            check_model_name(model)
        if vectors:
            load_vectors_file(vectors)  # refuse a wrong file before ingesting anything
    except (EmbedError, StoreError) as e:
        raise _fail(e) from None
    store = _store(ctx, create=True)
    total = IngestSummary()
    notes: list[str] = []
    given = {k: v for k, v in source_options.items() if v not in (None, (), False)}
    source = paths[0] if paths[0] in registry.network_names() else None
    for name in given:  # an option of another source would be silently ignored
        owner = registry.source_of_option(name)
        if owner is not None and owner.name != source:
            flag = next(o.opts[0] for o in owner.options if o.name == name)
            where = f"`ingest {source}`" if source else "files"
            raise click.UsageError(f"{flag} is an option of `ingest {owner.name}`, not of {where}")
    if source:
        if len(paths) > 1:
            raise click.UsageError(f"`ingest {paths[0]}` takes options, not more paths")
        try:
            with _write_errors(store), Progress(f"ingest {source}", unit=None, quiet=quiet):
                total = ingest_source(store, paths[0], **given)
        except (SourceError, ValueError) as e:
            raise _fail(e) from None
    else:
        files = [Path(p) for p in paths]
        for p in files:
            if not p.exists():
                raise _fail(FileNotFoundError(f"no such file: {p}"))
        if strict:
            for p in files:
                errs = [f"{p}: is a directory, not a file of records"] if p.is_dir() else check_file(p)
                if errs:
                    raise _fail(ValueError(f"{tty(errs[0])} (--strict: nothing was written)"))
        size = sum(p.stat().st_size for p in files if p.is_file())
        with (
            _write_errors(store),
            Progress("ingesting", size, unit="bytes", quiet=quiet) as bar,
        ):
            for p in files:
                if p.is_dir():
                    total.errors.append(f"{p}: is a directory, not a file of records")
                    total.rejected += 1
                    continue
                s = import_file(store, p)
                if s is None:
                    s = ingest_file(store, p, progress=bar.update, notes=notes)
                else:
                    bar.update(p.stat().st_size)
                total = total + s
    for line in notes[:50]:
        click.echo(tty(line), err=True)
    for err in total.errors[:50]:
        click.echo(tty(err), err=True)
    if len(total.errors) > 50:
        click.echo(f"... and {len(total.errors) - 50} more rejected records", err=True)
    s = total.as_dict()
    merged = f", merged {s['merged']}" if s.get("merged") else ""
    click.echo(
        f"added {s['added']}, updated {s['updated']}, unchanged {s['unchanged']}, rejected {s['rejected']}{merged}"
    )
    if vectors:
        try:
            with _write_errors(store):
                n = import_vectors(store, vectors, ids, model)
        except StoreError as e:
            raise _fail(e) from None
        click.echo(f"vectors: {n} attached ({model})")
        publish(store)  # the indexes now, so readers (and the first search) find them ready
    if total.rejected:
        ctx.exit(1)


@contextmanager
def _write_errors(store: Store) -> Iterator[None]:
    """A failed write (disk full, a database that is not one) is one line, not a traceback.
    Each batch is one transaction, so nothing of the failing batch is stored; batches before
    it are, and the same command continues where it stopped."""
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


@cli.command()
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
    from paperdex.index.embed import EmbedError, embed_store, get_embedder, pending_count

    settings = _settings(ctx).replace(model=model, embed_threads=threads)
    store = _store(ctx)
    # the store's model (or the one it is switching to) wins over the setting
    name = model or store.get_state("model_next") or store.model or settings.model
    try:  # load the model before --reset drops anything: a model that cannot load costs nothing
        get_embedder(name, settings.embed_threads or None, device=device, allow_download=True)
    except EmbedError as e:
        raise _fail(e) from None
    if reset:
        store.reset_vectors()
    todo = pending_count(store, name)
    if limit is not None:
        todo = min(todo, limit)
    try:
        with Progress("embedding", todo, quiet=quiet) as bar:
            n = embed_store(
                store,
                name,
                batch_size,
                limit,
                progress=bar.update,
                threads=settings.embed_threads or None,
                device=device,
            )
    except (StoreError, EmbedError) as e:
        raise _fail(e) from None
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


@cli.command()
@click.pass_context
def init(ctx) -> None:
    """Make an empty store in the data directory (`ingest` makes one too). Other commands that
    write refuse a directory without one, so a mistyped --data-dir is an error, not a new store."""
    store = _store(ctx, create=True)
    publish(store)
    click.echo(f"a paperdex store in {store.data_dir}: {store.count()} papers")


@cli.command()
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
        if kind != "milvus":
            raise ValueError(f"--to takes a milvus:// URI, not {target!r}")
        dest = open_backend(target, **({"dim": dim} if dim else {}))
    except (ValueError, StoreError) as e:
        raise _fail(e) from None
    try:
        last = 0 if restart else int(dest.get_state(checkpoint_key(store)) or 0)
        todo = store.count_after_rowid(last)
        with Progress(f"copying to {where}", todo) as bar:
            s = migrate_store(store, dest, batch_size=batch_size, restart=restart, progress=bar.update)
    except StoreError as e:
        raise _fail(e) from None
    finally:
        dest.close()
    click.echo(
        f"copied {s.copied} papers ({s.with_vectors} with vectors) to {where}; "
        f"{s.skipped} were there from an earlier run, {s.refreshed} of them written again (changed since) "
        f"and {s.removed} deleted (gone from the store); checkpoint at rowid {s.last_rowid}"
    )


# --- search / show / stats --------------------------------------------------------------


class QueryCommand(click.Command):
    """A command whose words form a query that may start with `-` (`search -video`): any
    token that is not one of the command's own options is a query word, and everything
    after `--` is too."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value: dict[str, bool] = {}
        for p in self.get_params(ctx):
            if isinstance(p, click.Option):
                for name in [*p.opts, *p.secondary_opts]:
                    takes_value[name] = not p.is_flag and not p.count
        opts: list[str] = []
        words: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            name = a.split("=", 1)[0]
            if a == "--":
                words.extend(args[i + 1 :])
                break
            if a.startswith("-") and name in takes_value:
                opts.append(a)
                if takes_value[name] and "=" not in a and i + 1 < len(args):
                    opts.append(args[i + 1])
                    i += 1
            elif a.startswith("-") and not a.startswith("--") and takes_value.get(a[:2]):
                opts.append(a)  # a short option with its value attached: -n5
            elif a.startswith("--") and len(name) > 2:  # `-word` excludes a word; `--word` is a mistyped option
                import difflib

                near = difflib.get_close_matches(name, [n for n in takes_value if n.startswith("--")], n=3)
                raise click.NoSuchOption(name, possibilities=near, ctx=ctx)
            else:
                words.append(a)
            i += 1
        return super().parse_args(ctx, [*opts, "--", *words] if words else opts)


@cli.command(cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--mode", type=click.Choice(["hybrid", "lexical", "dense"]), default="hybrid", show_default=True)
@click.option("--sort", type=click.Choice(["relevance", "newest"]), default="relevance", show_default=True)
@click.option("-n", "--limit", "--per-page", "per_page", default=10, show_default=True, help="Hits per page.")
@click.option("--page", default=1, show_default=True)
@click.option("--category", help="Only this category (cs.LG) or archive (cs).")
@click.option("--from", "date_from", help="Earliest date, YYYY[-MM[-DD]].")
@click.option("--to", "date_to", help="Latest date, YYYY[-MM[-DD]].")
@click.option("--venue")
@click.option("--area")
@click.option("--author")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of hits.")
@click.option("--explain", is_flag=True, help="Show the parts of each score.")
@click.option("--literal", is_flag=True, help="Treat QUERY as plain text, without query syntax.")
@click.pass_context
def search(ctx, query, as_json, explain, **params):
    """Search. QUERY accepts the full query language, e.g. 'ti:"weight decay" cat:cs.LG';
    its words may be given unquoted, and it may start with `-` (`search -video diffusion`)."""
    from paperdex import service

    params = service.SearchParams(q=" ".join(query), **params)  # the options are named as its fields
    with _service(ctx, readonly=True) as pool:
        res = service.search(pool, params, facets=False)
    if as_json:
        click.echo(json_text([h.to_dict() for h in res.hits]))
        return
    for n in res.notices:
        click.echo(f"note: {tty(n)}", err=True)
    _print_hits(res, explain)


def _print_hits(res, explain: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from paperdex.web.render import authors_line

    console = Console(highlight=False, soft_wrap=False)
    start = (res.page - 1) * res.per_page
    if explain:
        # one block per hit, its lines left to wrap as the terminal does: a fifth column left
        # the title a few characters at 80 columns (and in a pipe), one word per line
        console = Console(highlight=False, soft_wrap=True)
        for i, h in enumerate(res.hits, start=start + 1):
            p = h.paper
            head = Text(f"{i:>2}. ", style="dim")
            head.append(tty(p.id), style="cyan")
            head.append(f"  {tty(p.date or '')}  ", style="dim")
            head.append(_explain(h))
            title = Text("    ")
            for seg, hit in h.title_marked:
                title.append(tty(seg), style="bold yellow" if hit else "bold")
            console.print(head)
            console.print(title)
            console.print(Text("    " + tty(authors_line(p, "et al.")), style="dim"))
    else:
        table = Table(show_lines=False, box=None, pad_edge=False)
        table.add_column("#", justify="right", style="dim")
        table.add_column("id", style="cyan", no_wrap=True)
        table.add_column("date", style="dim", no_wrap=True)
        table.add_column("title / authors")
        for i, h in enumerate(res.hits, start=start + 1):
            p = h.paper
            cell = Text()
            for seg, hit in h.title_marked:
                cell.append(tty(seg), style="bold yellow" if hit else "bold")
            cell.append("\n" + tty(authors_line(p, "et al.")), style="dim")
            table.add_row(str(i), tty(p.id), tty(p.date or ""), cell)
        console.print(table)
    more = f" (+{res.listed - res.total} more ranked)" if res.listed > res.total else ""
    console.print(
        f"[dim]{res.total} {'result' if res.total == 1 else 'results'}{more} · page {res.page}/{res.pages}"
        f" · {res.mode} · {res.took_ms:.0f} ms[/dim]"
    )


def _explain(h) -> str:
    lex = "-" if h.lexical_rank is None else f"#{h.lexical_rank} bm25={h.lexical_score:.2f}"
    den = "-" if h.dense_rank is None else f"#{h.dense_rank} cos={h.dense_score:.3f}"
    return f"score {h.score:.4f} (lexical {lex} | dense {den})"


@cli.command()
@click.argument("paper_id")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def show(ctx, paper_id, as_json) -> None:
    """Show one paper with all its fields and sources."""
    from paperdex.search.query import paper_ref

    store = _store(ctx, readonly=True)
    ref = paper_ref(paper_id)  # an arXiv URL, arXiv:ID or an arXiv DOI, as `search` takes them
    p = store.get(ref[1] if ref and ref[0] == "id" else paper_id.strip())
    if p is None:
        raise UserError(f"no paper with id {tty(paper_id)}")
    if as_json:
        click.echo(json_text(p.to_dict()))
        return
    from paperdex.web.render import author_names, authors_line

    click.secho(tty(p.title), bold=True)
    # the author line of the cards, `search` and the API (one rule: render.author_names); a
    # collaboration's thousands of names would bury the paper, and --json has them all
    shown, _ = author_names(p)
    more = f" ({len(p.authors):,} authors; --json lists them all)" if len(p.authors) > len(shown) else ""
    click.echo(tty(authors_line(p, "et al.") + more))
    meta = [p.id, p.date or "", " ".join(p.categories)]
    if p.venue:
        meta.append(p.venue + (f" · {p.venue_area}" if p.venue_area else ""))
    click.echo(tty(" | ".join(m for m in meta if m)))
    click.echo()
    click.echo(tty(p.abstract, newlines=True))
    click.echo()
    for name, url in p.links().items():
        click.echo(f"{name}: {tty(url)}")
    if p.comment:
        click.echo(f"comment: {tty(p.comment)}")
    click.echo(f"sources: {tty(', '.join(p.sources))}")
    for k, v in p.extra.items():
        click.echo(tty(f"{k}: {json_text(v, indent=None)}"))


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def stats(ctx, as_json) -> None:
    """What the data directory holds, and whether word search sees all of it (a write killed
    before it published leaves papers only in the database; this reports it, it does not fix
    it: readers never write)."""
    from paperdex.index.lexical import index_lag

    store = _store(ctx, readonly=True)
    s = store.stats()
    lag = index_lag(store)
    if as_json:
        click.echo(json_text({**s, "index_lag": lag.to_dict() if lag else None}))
        return
    for k, v in s.items():
        click.echo(tty(f"{k:15} {v}"))
    click.echo(f"{'index lag':15} {lag.message() if lag else 'none: word search sees every paper'}")


@cli.command("eval")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@click.option("--mode", type=click.Choice(["hybrid", "lexical", "dense"]), default="hybrid", show_default=True)
@click.option("--limit", type=int, help="Only the first N queries.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def eval_cmd(ctx, queries, mode, limit, as_json) -> None:
    """Recall@1/10/100, MRR@10 and nDCG@10 over a JSONL of {"query", "relevant": [ids]}."""
    from paperdex.search.engine import Searcher
    from paperdex.search.evaluate import EvalError, evaluate, load_queries

    store = _store(ctx, readonly=True)
    try:
        qs = load_queries(queries)[:limit]
        m = evaluate(Searcher(store), qs, mode=mode)
    except (EvalError, QueryError) as e:
        raise _fail(e) from None
    if as_json:
        click.echo(json.dumps(m))
        return
    for k, v in m.items():
        click.echo(f"{k:10} {v:.4f}" if isinstance(v, float) else f"{k:10} {v}")


SAMPLE = Path(__file__).parents[1] / "data"


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True)
@click.option("--no-serve", is_flag=True, help="Only load the sample.")
@click.pass_context
def demo(ctx, host, port, no_serve) -> None:
    """Load the bundled sample (3,077 arXiv papers with their vectors), then serve the web UI."""
    from paperdex.index.embed import Pair
    from paperdex.ingest import import_vectors, ingest_file

    store = _store(ctx, create=True)
    sample = SAMPLE / "sample.jsonl.gz"
    click.echo(f"loading the bundled sample into {store.data_dir}")
    with _ticking("loading the sample"):  # a line every 5 s: never a long silence, in a log too
        s = ingest_file(store, sample)
        click.echo(f"sample: added {s.added}, unchanged {s.unchanged}")
        if store.model in (None, Pair.name) and store.vector_count() < store.count():
            n = import_vectors(store, sample_vectors(), SAMPLE / "sample.ids.txt", Pair.name)
            click.echo(f"vectors: {n} attached ({Pair.name})")
        publish(store)
    store.close()
    if not no_serve:
        from paperdex.text import zh

        click.echo("preparing the Chinese segmenter (its dictionary is cached after the first run)")
        with _ticking("preparing the segmenter"):
            zh.segment("中文")  # builds the cache once here, not in each worker at once
        click.echo("starting the web server (each worker loads the indexes, the query model, the Chinese segmenter)")
        _until_it_answers(f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}/static/style.css")
        ctx.invoke(serve, host=host, port=port, pool=None, no_warm=False, log_level="info")


def sample_vectors():
    """The bundled sample's vectors of the default model (rows in sample.ids.txt's order),
    joined from its two halves' files (embed.Pair)."""
    from paperdex.index.embed import Pair
    from paperdex.index.vectors import unit
    from paperdex.ingest import load_vectors_file

    e5, minilm = (load_vectors_file(SAMPLE / f"sample.{m}.f16.npy") for m in Pair.name.split("+"))
    return Pair.join(unit(e5), unit(minilm))


@contextmanager
def _ticking(label: str, every: float = 5.0) -> Iterator[None]:
    """Print that `label` is still going every `every` seconds while the block runs."""
    import threading
    import time

    done = threading.Event()
    t0 = time.monotonic()

    def run() -> None:
        while not done.wait(every):
            click.echo(f"    ... {label} ({time.monotonic() - t0:.0f} s)", err=True)

    threading.Thread(target=run, name="demo-progress", daemon=True).start()
    try:
        yield
    finally:
        done.set()


def _until_it_answers(url: str) -> None:
    """Say every 5 s that the server is still starting, until it answers (a daemon thread: it
    never holds the process)."""
    import threading
    import time

    import httpx

    def run() -> None:
        with _ticking("the workers are still loading"):
            t0 = time.monotonic()
            while time.monotonic() - t0 < 600:
                time.sleep(0.5)
                try:
                    if httpx.get(url, timeout=1).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass

    threading.Thread(target=run, name="demo-progress", daemon=True).start()


for command in (sync, export, serve, mcp, *COMMANDS):  # the commands of the other modules of paperdex/cli
    cli.add_command(command)


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()

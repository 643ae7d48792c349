"""`paperdex tag`, `saved`, `token`, `related` and `digest` (registered by paperdex/cli): the
commands over the reader's library (paperdex/discover)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import click

from paperdex.cli.common import Output, UserError, _service, _settings, _store, json_text, pass_store, tty
from paperdex.discover import library
from paperdex.messages import LANGS, message
from paperdex.search import MODES


def _day(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --day checked as the web's /daily checks it (service._listing_args): `garbage` or
    2026-6-3 gave an empty digest that said "Nothing new today", exit 0, every day of a cron job."""
    from paperdex.service import ServiceError, _listing_args

    try:
        return _listing_args(value, None, 1, 1)[0]
    except ServiceError as e:
        raise UserError(e.message) from None


def _count(bound: str) -> Callable[[click.Context, click.Parameter, int], int]:
    """A -n checked here, under its own name, from 1 to the service's `bound` (MAX_K): the
    service's message named `k`, and the digest took 0 and -1 (a negative slice)."""

    def check(ctx: click.Context, param: click.Parameter, value: int) -> int:
        from paperdex import service  # when checked: `paperdex --help` does not load the service

        limit = getattr(service, bound)
        if not 1 <= value <= limit:
            raise click.UsageError(message("cli_count_range", option="/".join(param.opts), limit=limit), ctx)
        return value

    return check


@click.group()
def tag() -> None:
    """Tags (collections) of papers, "not interested" marks and recommendations."""


@tag.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_store(readonly=True)
def tag_list(st, as_json) -> None:
    """Every tag and how many papers it holds."""
    tags = library.tags(st)
    if as_json:
        click.echo(json_text([t.to_dict() for t in tags]))
        return
    for t in tags:
        click.echo(f"{tty(t.name)}\t{t.count}")
    if not tags:
        click.echo("no tags yet: paperdex tag add NAME PAPER_ID...", err=True)


@tag.command("add")
@click.argument("name")
@click.argument("ids", nargs=-1, required=True)
@pass_store()
def tag_add(st, name, ids) -> None:
    """Save papers into tag NAME (made if new)."""
    n = library.add_to_tag(st, name, ids)
    click.echo(f"{n} added to {tty(library.get_tag(st, name).name)}")


@tag.command("remove")
@click.argument("name")
@click.argument("ids", nargs=-1, required=True)
@pass_store()
def tag_remove(st, name, ids) -> None:
    """Take papers out of a tag."""
    click.echo(f"{library.remove_from_tag(st, name, ids)} removed")


@tag.command("delete")
@click.argument("name")
@pass_store()
def tag_delete(st, name) -> None:
    """Delete a tag (its papers stay in the store)."""
    if not library.delete_tag(st, name):
        raise UserError(f"no tag named {name!r}")


@tag.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
@pass_store(readonly=True)
def tag_show(st, name, as_json) -> None:
    """The papers of a tag, most recently saved first."""
    ids = library.tag_papers(st, library.get_tag(st, name).name)
    papers = [(i, st.get(i)) for i in ids]
    if as_json:
        click.echo(json_text([p.to_dict() if p else {"id": i, "missing": True} for i, p in papers]))
        return
    for i, p in papers:
        click.echo(f"{i}\t{tty(p.title) if p else '(not in this store)'}")


@tag.command("dismiss")
@click.argument("ids", nargs=-1, required=True)
@click.option("--undo", is_flag=True, help="Take the marks back.")
@pass_store()
def tag_dismiss(st, ids, undo) -> None:
    """Mark papers "not interested" (recommendations learn from it)."""
    n = (library.undismiss if undo else library.dismiss)(st, ids)
    click.echo(f"{n} {'unmarked' if undo else 'marked not interested'}")


@tag.command("recommend")
@click.argument("name")
@click.option("-n", "--limit", default=10, show_default=True, callback=_count("MAX_K"))
@click.option("--day", help="Only papers of this day (YYYY-MM-DD).", callback=_day)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tag_recommend(ctx, name, limit, day, as_json) -> None:
    """Unseen papers ranked by the tag's model, with why."""
    from paperdex.service import recommend
    from paperdex.store import Period

    with _service(ctx, readonly=True) as pool:
        recs = recommend(pool, name, limit, within=pool.store.rowids_in(Period(day, day), "listing") if day else None)
    if as_json:
        click.echo(json_text(recs.to_dict()))
        return
    for n in recs.notices:
        click.echo(n, err=True)
    for i, r in enumerate(recs.items, 1):
        click.echo(f"{i:2d}. {r.paper.id}  {tty(r.paper.title)}")
        if r.reason:
            like = "; ".join(tty(t)[:60] for _, t, _ in r.reason.neighbours[:2])
            click.echo(f"    like: {like}")
            if r.reason.terms:
                click.echo(f"    words: {', '.join(r.reason.terms)}")
    click.echo(f"({recs.positives} saved, {recs.candidates} ranked, {recs.took_ms:.0f} ms)", err=True)


@tag.command("export")
@click.option("--format", "fmt", type=click.Choice(["json", "bibtex"]), default="json", show_default=True)
@click.option("--tag", "name", help="BibTeX: only this tag's papers.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="File (default: stdout).")
@pass_store(readonly=True)
def tag_export(st, fmt, name, output) -> None:
    """The library (tags, not interested, saved searches) as JSON, or tagged papers as BibTeX."""
    text = json_text(library.export_json(st)) + "\n" if fmt == "json" else library.export_bibtex(st, name)
    if output:
        with Output(output) as out:  # a missing directory is one line; a failed write leaves no partial file
            out.write(text)
    else:
        click.echo(text, nl=False)


@tag.command("import")
@click.argument("path", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--tag", "name", help="The tag the entries go into (needed for a .bib or CSL-JSON file).")
@click.option("--zotero", "zotero_library", metavar="users/ID|groups/ID", help="A Zotero library, through its web API.")
@click.option("--collection", help="Zotero: only this collection (its key or name).")
@click.option("--api-key-env", metavar="VAR", help="Zotero: the environment variable holding an API key.")
@pass_store()
def tag_import(st, path, name, zotero_library, collection, api_key_env) -> None:
    """Merge a library export (.json); save a .bib or CSL-JSON file's entries into --tag; or a
    Zotero library's items into a tag per collection (or all into --tag)."""
    from paperdex.sources import zotero

    if zotero_library:
        lib = zotero.WebLibrary(zotero_library, zotero.api_key(api_key_env, os.environ))
        out = library.import_papers(st, *zotero.read_library(lib, collection, name))
    else:
        out = _import_file(st, path, name)
    click.echo(json_text(out))


def _import_file(st, path: Path | None, name: str | None) -> dict:
    from paperdex.sources import zotero

    if path is None:
        raise UserError("import what? a FILE (.json, .bib, CSL-JSON) or --zotero users/ID")
    from paperdex.sources.bibtex import UndecodableError, decode

    try:  # the reader `ingest` uses: a Latin-1 export is one line, not a UnicodeDecodeError traceback
        text = decode(path.read_bytes(), str(path))
    except UndecodableError as e:
        raise UserError(str(e)) from None
    if path.suffix.lower() != ".bib":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise UserError(f"{path}: not JSON ({e})") from None
        if not zotero.is_csl(data):
            return library.import_json(st, data)
    if not name:
        raise UserError("a .bib or CSL-JSON file goes into a tag: --tag NAME")
    if path.suffix.lower() == ".bib":
        return library.import_bibtex(st, text, name)
    res = zotero.read_csl(path)
    return library.import_papers(st, [(p, [name]) for p in res.papers], res.errors)


@click.group()
def saved() -> None:
    """Saved searches and what is new in them."""


@saved.command("add")
@click.argument("name")
@click.argument("query")
@click.option("--mode", type=click.Choice(MODES))
@click.option("--category")
@click.option("--from", "date_from")
@click.option("--to", "date_to")
@click.option("--venue")
@click.option("--area")
@click.option("--author")
@click.option("--lang", type=click.Choice(LANGS))
@click.option("--replace", is_flag=True, help="Replace a saved search of the same name.")
@pass_store()
def saved_add(st, name, query, replace, **params) -> None:
    """Save QUERY (the full query language) under NAME. The query is checked as a search checks
    it; a name already saved is refused unless --replace."""
    s = library.save_search(st, name, query, params, replace=replace)
    click.echo(f"saved {tty(s.name)} (#{s.id})")


@saved.command("list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def saved_list(ctx, as_json) -> None:
    """Every saved search and how many new papers it matches."""
    from paperdex.service import saved_searches

    with _service(ctx, readonly=True) as pool:
        rows = saved_searches(pool)
    if as_json:
        click.echo(json_text([{**ss.to_dict(), "new": nm and nm.count, "error": nm and nm.error} for ss, nm in rows]))
        return
    if not rows:
        click.echo(message("no_saved_searches"), err=True)
    for ss, nm in rows:
        new = "not counted: out of time" if nm is None else f"{nm.count} new"
        if nm and nm.error:
            new = f"cannot run: {tty(nm.error)}"
        watched = ss.query or " ".join(f"{k}:{v}" for k, v in ss.params.items() if k != "lang")  # filters alone
        click.echo(f"#{ss.id}\t{tty(ss.name)}\t{new}\t{tty(watched)}")


@saved.command("new")
@click.argument("key")
@click.option("-n", "--limit", default=20, show_default=True)
@click.option("--seen", is_flag=True, help="Then count from now on (a visit).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def saved_new(ctx, key, limit, seen, as_json) -> None:
    """The new matches of a saved search (by name or #id) since the last visit."""
    from paperdex.service import new_matches

    with _service(ctx, readonly=not seen) as pool:
        nm = new_matches(pool, key.lstrip("#"), limit)
        if seen:
            library.mark_seen(pool.store, nm.saved.id)
    if as_json:
        click.echo(json_text(nm.to_dict()))
        ctx.exit(1 if nm.error else 0)
    if nm.error:
        raise UserError(tty(nm.notices[0]))
    click.echo(f"{nm.count} new for {tty(nm.saved.name)}", err=True)
    for p in nm.papers:
        click.echo(f"{p.id}\t{p.date or ''}\t{tty(p.title)}")


@saved.command("remove")
@click.argument("key")
@pass_store()
def saved_remove(st, key) -> None:
    library.delete_saved(st, key.lstrip("#"))


@click.group()
def token() -> None:
    """Tokens that allow writing (the library, saved searches) through the web and the API."""


@token.command("create")
@click.option("--name", default="", help="A label to recognise it by.")
@pass_store()
def token_create(st, name) -> None:
    """Make a token and print it once (only its hash is stored)."""
    tok = library.create_token(st, name)
    click.echo(tok)
    click.echo("keep it: it is shown only now. Sign in on /library or send Authorization: Bearer TOKEN", err=True)


@token.command("list")
@pass_store(readonly=True)
def token_list(st) -> None:
    for t in library.tokens(st):
        click.echo(f"#{t['id']}\t{tty(t['name'])}\t{t['created']}")


@token.command("revoke")
@click.argument("key")
@pass_store()
def token_revoke(st, key) -> None:
    """Revoke a token by #id or name."""
    if not library.revoke_token(st, key.lstrip("#")):
        raise UserError(f"no token {key!r}")


@click.command()
@click.argument("text", required=False)
@click.option("-n", "--limit", default=10, show_default=True, callback=_count("MAX_RELATED"))
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def related(ctx, text, limit, as_json) -> None:
    """Related work for a pasted abstract or paragraph (TEXT, or standard input); an arXiv id
    or URL alone stands for that paper's title and abstract."""
    from paperdex import service

    text = text if text is not None else sys.stdin.read()
    if not text.strip():
        raise click.UsageError("give the text to find related work for: paperdex related TEXT, or on standard input")
    with _service(ctx, readonly=True) as pool:
        res = service.related(pool, text, limit)
    if as_json:
        from paperdex.web.render import hit_json

        click.echo(json_text({**res.to_dict(), "hits": [hit_json(h) for h in res.hits]}))
        return
    if res.key_terms:
        click.echo(f"key terms: {', '.join(res.key_terms)}", err=True)
    for n in res.notices:
        click.echo(f"note: {tty(n)}", err=True)
    for i, h in enumerate(res.hits, 1):
        click.echo(f"{i:2d}. {h.paper.id}  {tty(h.paper.title)}")


@click.command()
@click.option("--day", help="The day (YYYY-MM-DD; default: the newest in the store).", callback=_day)
@click.option(
    "--to",
    "to_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write it here: .eml the whole message, .html or .txt one part.",
)
@click.option("--smtp", help="Send it through this SMTP server, host:port.")
@click.option("--mail-from", default="paperdex@localhost", show_default=True)
@click.option("--mail-to", default="you@localhost", show_default=True)
@click.option("--starttls", is_flag=True)
@click.option("--base-url", default="http://127.0.0.1:8000", show_default=True, help="Where links point.")
@click.option("-n", "--per-section", default=5, show_default=True, callback=_count("MAX_K"))
@click.pass_context
def digest(ctx, day, to_file, smtp, starttls, base_url, per_section, **mail) -> None:
    """The daily digest (recommendations per tag, new papers per saved search) by e-mail or
    to a file; without --to or --smtp, the text is printed."""
    from paperdex.discover import digest as D
    from paperdex.service import make_searcher

    if to_file and to_file.suffix.lower() not in D.FILE_KINDS:
        raise click.UsageError(f"--to writes {', '.join(D.FILE_KINDS)}, not {to_file.suffix or 'a file without one'}")
    settings = _settings(ctx)
    with Output(to_file) if to_file else nullcontext() as out:  # a missing directory: said before the digest is built
        with _store(ctx, readonly=True) as st:  # the saved searches run on the backend's searcher
            searcher = make_searcher(st, settings.backend, settings.embedding, settings.zh_dict)
            d = D.build(st, day, base_url, per_section, searcher=searcher)
        m = D.mail(d, mail["mail_from"], mail["mail_to"])
        if out is not None:
            out.write(D.file_bytes(m, d, to_file))
            click.echo(f"wrote {tty(to_file)}", err=True)
    if smtp:
        host, _, port = smtp.rpartition(":")
        if not host or not port.isdigit():
            raise UserError("--smtp is host:port, e.g. 127.0.0.1:25")
        user, password = settings.smtp_user or None, settings.smtp_password or None
        try:
            D.send(m, host, int(port), starttls=starttls, user=user, password=password)
        except (OSError, Exception) as e:  # smtplib errors and connection failures alike
            raise UserError(f"cannot send through {smtp}: {e}") from None
        click.echo(f"sent to {mail['mail_to']} through {smtp}", err=True)
    if not to_file and not smtp:
        click.echo(D.render_text(d), nl=False)

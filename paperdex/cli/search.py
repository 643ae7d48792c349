"""`paperdex search`, `show`, `stats` and `eval`: the commands that read the store."""

from __future__ import annotations

import difflib
import itertools
import json
from typing import Any

import click

from paperdex.cli.common import UserError, _service, _settings, _store, json_text, pass_store, tty
from paperdex.messages import message, text
from paperdex.search import MODES, SORTS, Hit, Result


class QueryCommand(click.Command):
    """A command whose words form a query that may start with `-` (`search -video`): any
    token that is not one of the command's own options is a query word, and everything
    after `--` is too."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {
            name: not p.is_flag and not p.count
            for p in self.get_params(ctx)
            if isinstance(p, click.Option)
            for name in [*p.opts, *p.secondary_opts]
        }
        opts: list[str] = []
        words: list[str] = []
        rest = iter(args)
        for a in rest:
            name = a.split("=", 1)[0]
            if a == "--":
                words.extend(rest)
            elif name in takes_value:
                opts.append(a)
                if takes_value[name] and "=" not in a:
                    opts.extend(itertools.islice(rest, 1))  # its value
            elif takes_value.get(a[:2]) and not a.startswith("--"):
                opts.append(a)  # a short option with its value attached: -n5
            elif a.startswith("--") and len(name) > 2:  # `-word` excludes a word; `--word` is a mistyped option
                near = difflib.get_close_matches(name, [n for n in takes_value if n.startswith("--")], n=3)
                raise click.NoSuchOption(name, possibilities=near, ctx=ctx)
            else:
                words.append(a)
        return super().parse_args(ctx, [*opts, "--", *words] if words else opts)


@click.command(cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--sort", type=click.Choice(SORTS), default="relevance", show_default=True)
@click.option("-n", "--limit", "--per-page", "per_page", default=10, show_default=True, help="Hits per page.")
@click.option("--page", default=1, show_default=True)
@click.option("--category", help="Only this category (cs.LG) or archive (cs).")
@click.option("--from", "date_from", help="Earliest date, YYYY[-MM[-DD]].")
@click.option("--to", "date_to", help="Latest date, YYYY[-MM[-DD]].")
@click.option("--venue")
@click.option("--area")
@click.option("--author")
@click.option("--json", "as_json", is_flag=True, help="Print what /api/search answers: hits, total, tiers, notices.")
@click.option("--explain", is_flag=True, help="Show the parts of each score.")
@click.option("--literal", is_flag=True, help="Treat QUERY as plain text, without query syntax.")
@click.pass_context
def search(ctx: click.Context, query: tuple[str, ...], as_json: bool, explain: bool, **params: Any) -> None:
    """Search. QUERY accepts the full query language, e.g. 'ti:"weight decay" cat:cs.LG';
    its words may be given unquoted, and it may start with `-` (`search -video diffusion`)."""
    from paperdex import service

    request = service.SearchParams(q=" ".join(query), **params)  # the options are named as its fields
    with _service(ctx, readonly=True) as pool:
        res = service.search(pool, request, facets=as_json)  # the facets the API's JSON has; no table shows them
        if as_json:  # the API's object: a script sees the total, the tiers and why nothing matched
            from paperdex.web.render import hit_json, paged_dict

            click.echo(json_text(paged_dict(pool, res, "hits", hits=[hit_json(h) for h in res.hits])))
            return
    for n in res.notices:
        click.echo(f"note: {tty(n)}", err=True)
    if not res.hits and res.total and res.page > res.pages:  # as the page says it (search.html)
        click.echo(f"note: {message('past_last_page', page=res.page, pages=res.pages)}", err=True)
    _print_hits(res, explain)


def _print_hits(res: Result, explain: bool) -> None:
    """A table of the hits; with --explain, one block per hit (a fifth column would leave the
    title a few characters at 80 columns)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from paperdex.web.render import authors_line

    def title(h: Hit, head: str = "") -> Text:
        text = Text(head)
        for seg, hit in h.title_marked:
            text.append(tty(seg), style="bold yellow" if hit else "bold")
        return text

    console = Console(highlight=False, soft_wrap=explain)
    named = res.plan.author_phrases if res.plan is not None else []  # au: names past the tenth are shown
    numbered = list(enumerate(res.hits, start=(res.page - 1) * res.per_page + 1))
    n_related = res.listed - res.total
    divider = text("en", "tier_related_what", n=f"{n_related:,}", count=n_related)
    meets = res.total + 1 if dict(res.tiers).get("related") else None  # the first related paper's number
    if explain:
        for i, h in numbered:
            if i == meets:
                console.print(Text(f"── {divider} ──", style="bold"))
            head = Text(f"{i:>2}. ", style="dim")
            head.append(tty(h.paper.id), style="cyan")
            head.append(f"  {tty(h.paper.date or '')}  ", style="dim")
            head.append(_explain(h))
            console.print(head)
            console.print(title(h, "    "))
            console.print(Text("    " + tty(authors_line(h.paper, "et al.", phrases=named)), style="dim"))
    else:
        table = Table(show_lines=False, box=None, pad_edge=False)
        table.add_column("#", justify="right", style="dim")
        table.add_column("id", style="cyan", no_wrap=True)
        table.add_column("date", style="dim", no_wrap=True)
        table.add_column("title / authors")
        for i, h in numbered:
            if i == meets:
                table.add_row("", "", "", Text(f"── {divider} ──", style="bold"))
            cell = title(h)
            cell.append("\n" + tty(authors_line(h.paper, "et al.", phrases=named)), style="dim")
            table.add_row(str(i), tty(h.paper.id), tty(h.paper.date or ""), cell)
        console.print(table)
    counts = " · ".join(text("en", f"tier_{t}", n=f"{n:,}", count=n) for t, n in res.tiers)
    console.print(f"[dim]{counts} · {_page_line(res)} · {res.mode} · {res.took_ms:.0f} ms[/dim]")


def _page_line(res: Result) -> str:
    """The page line's "page 3/86", or a page past the last said as one ("page 104/86" read as a
    real page of 104)."""
    if res.page > res.pages:
        return text("en", "cli_page_past_last", page=f"{res.page:,}", pages=f"{res.pages:,}")
    return f"page {res.page:,}/{res.pages:,}"


def _explain(h: Hit) -> str:
    lex = "-" if h.lexical_rank is None else f"#{h.lexical_rank} bm25={h.lexical_score:.2f}"
    den = "-" if h.dense_rank is None else f"#{h.dense_rank} cos={h.dense_score:.3f}"
    return f"score {h.score:.4f} (lexical {lex} | dense {den})"


@click.command()
@click.argument("paper_id")
@click.option("--json", "as_json", is_flag=True)
@pass_store(readonly=True)
def show(store, paper_id, as_json) -> None:
    """Show one paper with all its fields and sources."""
    from paperdex.paper import typed_id

    p = store.get(typed_id(paper_id))  # an arXiv URL, arXiv:ID or a DOI, as `search` and /paper/ take them
    if p is None:
        raise UserError(f"no paper with id {tty(paper_id)}")
    if as_json:
        click.echo(json_text(p.to_dict()))
        return
    from paperdex.web.render import author_names, authors_line

    click.secho(tty(p.title), bold=True)
    # the cards' author line (render.author_names): a collaboration's thousands of names would bury the paper
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


@click.command()
@click.option("--json", "as_json", is_flag=True)
@pass_store(readonly=True)
def stats(store, as_json) -> None:
    """What the data directory holds, and whether word search sees all of it (a write killed
    before it published leaves papers only in the database; this reports it, it does not fix
    it: readers never write)."""
    from paperdex.index.lexical import index_lag

    s = store.stats()
    lag = index_lag(store)
    if as_json:
        click.echo(json_text({**s, "index_lag": lag.to_dict() if lag else None}))
        return
    for k, v in s.items():
        click.echo(tty(f"{k:15} {v}"))
    click.echo(f"{'index lag':15} {lag.message() if lag else 'none: word search sees every paper'}")


@click.command("eval")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--limit", type=int, help="Only the first N queries.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def eval_cmd(ctx, queries, mode, limit, as_json) -> None:
    """Recall@1/10/100, MRR@10 and nDCG@10 over a JSONL of {"query", "relevant": [ids]}."""
    from paperdex.search import Searcher
    from paperdex.search.evaluate import EvalError, evaluate, load_queries

    store = _store(ctx, readonly=True)
    try:
        qs = load_queries(queries)[:limit]
        st = _settings(ctx)
        m = evaluate(Searcher(store, embed_options=st.embedding, zh_dict=st.zh_dict), qs, mode=mode)
    except EvalError as e:
        raise UserError(str(e)) from None
    if as_json:
        click.echo(json.dumps(m))
        return
    for k, v in m.items():
        click.echo(f"{k:10} {v:.4f}" if isinstance(v, float) else f"{k:10} {v}")

"""`paperdex summarize`: machine summaries from the user's language model (summaries.py)."""

from __future__ import annotations

import click

from paperdex.cli.common import UserError, _settings, _store, json_text, tty
from paperdex.discover import digest
from paperdex.discover import summaries as S


@click.command()
@click.argument("ids", nargs=-1)
@click.option("--day", help="The day whose papers to summarise (YYYY-MM-DD; default: the newest).")
@click.option(
    "--lang",
    "langs",
    default="en,zh",
    show_default=True,
    help="Languages, comma-separated (en, zh).",
)
@click.option("--force", is_flag=True, help="Write them again even when a current summary exists.")
@click.option("--url", help="The endpoint (default: $PAPERDEX_LLM_URL).")
@click.option("--model", help="The model (default: $PAPERDEX_LLM_MODEL).")
@click.option("--per-day", type=click.IntRange(min=1), help="Papers per UTC day at most.")
@click.option("--concurrency", type=click.IntRange(1, 32), help="Requests at once.")
@click.option("--quiet", "-q", is_flag=True, help="No progress.")
@click.option("--json", "as_json", is_flag=True, help="The run's report as JSON.")
@click.pass_context
def summarize(ctx, ids, day, langs, force, url, model, per_day, concurrency, quiet, as_json) -> None:
    """Summarise papers with the configured language model: a TL;DR and a five-part summary
    in English and Chinese, stored with the model's name. With IDS, those papers; without, the
    papers a reader meets first (the digest's picks for tags and saved searches, then the
    day's listing). Papers already summarised from their current text are skipped; meant for
    cron after `paperdex sync`."""
    wanted = tuple(dict.fromkeys(x.strip() for x in langs.split(",") if x.strip()))
    if not wanted or set(wanted) - set(S.LANGS):
        raise UserError(f"--lang takes {', '.join(S.LANGS)}, comma-separated")
    settings = _settings(ctx)
    try:
        cfg = S.LLMConfig.from_settings(
            settings.replace(llm_url=url, llm_model=model),
            papers_per_day=per_day,
            concurrency=concurrency,
        )
    except ValueError as e:
        raise UserError(f"the language model's settings: {e}") from None
    if cfg is None:
        raise UserError(
            "no language model is configured: set PAPERDEX_LLM_URL and PAPERDEX_LLM_MODEL "
            "(or --url and --model); its key goes in $PAPERDEX_LLM_KEY"
        )
    if not (settings.data_dir / "paperdex.db").is_file():  # a mistyped --data-dir makes no new store
        raise UserError(f"no paperdex data in {settings.data_dir} (run `paperdex ingest` first)")
    with _store(ctx) as st:
        if ids:
            papers = []
            for pid in ids:
                p = st.get(pid.removeprefix("arXiv:"))
                if p is None:
                    raise UserError(f"no paper with id {pid}")
                papers.append(p)
        else:
            try:
                papers = digest.likely_first(st, day)
            except ValueError as e:  # a malformed --day
                raise UserError(str(e)) from None
        show = not quiet and not as_json

        def progress(rep: S.Report) -> None:
            if show:
                todo = rep.total - rep.cached - rep.over_budget
                click.echo(f"\r{rep.finished}/{todo} summarised ({rep.failed} failed)", nl=False, err=True)

        if show:
            click.echo(f"{len(papers)} papers; model {tty(cfg.model)} at {tty(cfg.host)}", err=True)
        rep = S.run(st, papers, cfg, langs=wanted, force=force, progress=progress)
    if show and rep.finished:
        click.echo(err=True)
    if as_json:
        click.echo(json_text({**{k: v for k, v in vars(rep).items()}, "model": cfg.model}))
    else:
        for skipped in rep.errors[:20]:
            click.echo(f"skipped {tty(skipped)}", err=True)
        click.echo(rep.line(), err=True)
    if rep.stopped:
        raise UserError(f"stopped: {rep.stopped}")

"""`paperdex summarize`: machine summaries from the user's language model (summaries.py)."""

from __future__ import annotations

import click

from paperdex.cli.common import UserError, _settings, _store, json_text, tty
from paperdex.discover import digest
from paperdex.discover import summaries as S
from paperdex.paper import Paper, typed_id
from paperdex.search import Searcher
from paperdex.settings import Settings
from paperdex.store import Store


@click.command()
@click.argument("ids", nargs=-1)
@click.option("--day", help="The day whose papers to summarise (YYYY-MM-DD; default: the newest).")
@click.option("--lang", "langs", default="en,zh", show_default=True, help="Languages, comma-separated (en, zh).")
@click.option("--force", is_flag=True, help="Write them again even when a current summary exists.")
@click.option("--url", "llm_url", help="The endpoint (default: $PAPERDEX_LLM_URL).")
@click.option("--model", "llm_model", help="The model (default: $PAPERDEX_LLM_MODEL).")
@click.option("--per-day", "llm_per_day", type=click.IntRange(min=1), help="Papers per UTC day at most.")
@click.option("--concurrency", "llm_concurrency", type=click.IntRange(1, 32), help="Requests at once.")
@click.option("--quiet", "-q", is_flag=True, help="No progress.")
@click.option("--json", "as_json", is_flag=True, help="The run's report as JSON.")
@click.pass_context
def summarize(ctx, ids, day, langs, force, quiet, as_json, **llm) -> None:
    """Summarise papers with the configured language model: a TL;DR and a five-part summary
    in English and Chinese, stored with the model's name. With IDS, those papers; without, the
    papers a reader meets first (the digest's picks for tags and saved searches, then the
    day's listing). Papers already summarised from their current text are skipped; meant for
    cron after `paperdex sync`."""
    wanted = tuple(dict.fromkeys(x.strip() for x in langs.split(",") if x.strip()))
    if not wanted or set(wanted) - set(S.LANGS):
        raise UserError(f"--lang takes {', '.join(S.LANGS)}, comma-separated")
    settings = _settings(ctx).replace(**llm)  # --url, --model, --per-day, --concurrency
    try:
        cfg = S.LLMConfig.from_settings(settings)
    except ValueError as e:
        raise UserError(f"the language model's settings: {e}") from None
    if cfg is None:
        raise UserError(
            "no language model is configured: set PAPERDEX_LLM_URL and PAPERDEX_LLM_MODEL "
            "(or --url and --model); its key goes in $PAPERDEX_LLM_KEY"
        )
    show = not quiet and not as_json

    def progress(rep: S.Report) -> None:
        if show:
            todo = rep.total - rep.cached - rep.over_budget
            click.echo(f"\r{rep.finished}/{todo} summarised ({rep.failed} failed)", nl=False, err=True)

    with _store(ctx) as st:  # a mistyped --data-dir makes no new store
        papers = _papers(st, ids, day, settings)
        if show:
            click.echo(f"{len(papers)} papers; model {tty(cfg.model)} at {tty(cfg.host)}", err=True)
        rep = S.run(st, papers, cfg, langs=wanted, force=force, progress=progress)
    if show and rep.finished:
        click.echo(err=True)
    if as_json:
        click.echo(json_text({**vars(rep), "model": cfg.model}))
    else:
        for skipped in rep.errors[:20]:
            click.echo(f"skipped {tty(skipped)}", err=True)
        click.echo(rep.line(), err=True)
    if rep.stopped:
        raise UserError(f"stopped: {rep.stopped}")


def _papers(st: Store, ids: tuple[str, ...], day: str | None, settings: Settings) -> list[Paper]:
    """The papers IDS name, else the ones a reader of `day` meets first."""
    if not ids:
        try:
            return digest.likely_first(
                st, day, searcher=Searcher(st, embed_options=settings.embedding, zh_dict=settings.zh_dict)
            )
        except ValueError as e:  # a malformed --day
            raise UserError(str(e)) from None
    papers = [st.get(typed_id(pid)) for pid in ids]
    if missing := next((pid for pid, p in zip(ids, papers, strict=True) if p is None), None):
        raise UserError(f"no paper with id {missing}")
    return [p for p in papers if p is not None]

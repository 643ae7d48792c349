"""The `paperdex` command: one click group, each command a thin layer over library functions.

Exit codes: 0 success, 1 a user error (one line on stderr) or an ingest that rejected any record
(each reported as FILE:LINE), 2 usage.
"""

from __future__ import annotations

from pathlib import Path

import click

from paperdex.cli.common import UserError
from paperdex.cli.data import embed, ingest, init, migrate
from paperdex.cli.discover import digest, related, saved, tag, token
from paperdex.cli.search import eval_cmd, search, show, stats
from paperdex.cli.serve import demo, mcp, serve
from paperdex.cli.sources import export, sync
from paperdex.cli.summarize import summarize
from paperdex.search.query import QueryError
from paperdex.settings import Settings, SettingsError
from paperdex.sources import SourceError
from paperdex.store import StoreError


class _Commands(click.Group):
    """Every command: a bad setting, a model that cannot load, a store or backend that cannot
    open, a source that cannot be read, a query or a library request that cannot be done is one
    line on stderr, never a traceback (these errors' messages are written for the user)."""

    def invoke(self, ctx: click.Context) -> object:
        from paperdex.discover.library import LibraryError
        from paperdex.index.embed import EmbedError
        from paperdex.sources.zotero import ZoteroError

        try:
            return super().invoke(ctx)
        except (SettingsError, EmbedError, StoreError, LibraryError, SourceError, ZoteroError, QueryError) as e:
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
    # once, here: a bad variable is one line naming it (_Commands), before any command runs
    ctx.obj["settings"] = Settings.from_env(data_dir=data_dir, backend=backend)


for command in (
    *(ingest, embed, init, migrate),  # cli/data.py: the data directory filled and brought up to date
    *(search, show, stats, eval_cmd),  # cli/search.py: reading it
    *(sync, export),  # cli/sources.py
    *(serve, mcp, demo),  # cli/serve.py
    *(tag, saved, token, related, digest),  # cli/discover.py: the reader's library
    summarize,  # cli/summarize.py: the optional language-model layer
):
    cli.add_command(command)


def main() -> None:
    cli(obj={})


__all__ = ["cli", "main"]

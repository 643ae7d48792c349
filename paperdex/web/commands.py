"""`paperdex serve` and `paperdex mcp`: click commands registered on the main CLI group.

Both read the data directory from the group's ``--data-dir`` (``ctx.obj["data_dir"]``).
"""

from __future__ import annotations

import click


def _data_dir(ctx: click.Context):
    from ..store import default_data_dir

    obj = ctx.find_object(dict) or {}
    return obj.get("data_dir") or default_data_dir()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "--workers-pool", "pool", type=click.IntRange(1, 32), help="Searchers kept in memory (default: cores, max 4)."
)
@click.option("--no-warm", is_flag=True, help="Do not load the vector index and model before serving.")
@click.option(
    "--log-level", default="info", show_default=True, type=click.Choice(["critical", "error", "warning", "info"])
)
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, pool: int | None, no_warm: bool, log_level: str) -> None:
    """Serve the web UI and JSON API (open http://HOST:PORT/; API docs at /api/docs)."""
    import uvicorn

    from ..store import StoreError
    from .app import create_app

    try:
        app = create_app(_data_dir(ctx), pool_size=pool, warm=not no_warm)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"paperdex: serving {_data_dir(ctx)} on http://{host}:{port}/", err=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=log_level == "info")


@click.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Run the MCP tool server on stdio (search, get_paper, similar_papers) for AI agents."""
    from ..mcp_server import run
    from ..store import StoreError

    try:
        run(_data_dir(ctx))
    except StoreError as e:
        raise click.ClickException(str(e)) from None

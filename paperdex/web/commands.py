"""`paperdex serve` and `paperdex mcp`: click commands registered on the main CLI group.

Both read the data directory from the group's ``--data-dir`` (``ctx.obj["data_dir"]``).
"""

from __future__ import annotations

import click

GRACE = 5  # seconds requests in flight get to finish after SIGTERM


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
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="Also answer requests for this Host name (repeatable; '*' for any). Default: loopback names, "
    "the --host address, and $PAPERDEX_ALLOWED_HOSTS (comma-separated).",
)
@click.option(
    "--log-level", default="info", show_default=True, type=click.Choice(["critical", "error", "warning", "info"])
)
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    pool: int | None,
    no_warm: bool,
    log_level: str,
    allow_hosts: tuple[str, ...] = (),
) -> None:
    """Serve the web UI and JSON API (open http://HOST:PORT/; API docs at /api/docs).

    On SIGTERM or Ctrl-C it stops taking connections, lets requests in flight finish for up
    to GRACE seconds, and exits."""
    import uvicorn

    from ..store import StoreError
    from .app import allowed_hosts_from_env, create_app

    hosts = [*allowed_hosts_from_env(), *allow_hosts]
    if host not in ("0.0.0.0", "::", ""):
        hosts.append(host)  # the address it was asked to listen on is a name it answers to
    try:
        app = create_app(_data_dir(ctx), pool_size=pool, warm=not no_warm, allowed_hosts=hosts)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"paperdex: serving {_data_dir(ctx)} on http://{host}:{port}/", err=True)
    try:  # after the grace period uvicorn re-raises SIGTERM (the process ends) or SIGINT
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level=log_level,
            access_log=log_level == "info",
            timeout_graceful_shutdown=GRACE,
        )
    finally:
        _exit_if_stuck()


def _exit_if_stuck() -> None:
    """After the grace period, a request still running in a worker thread (those are not
    daemon threads) would keep the process alive after Ctrl-C: exit anyway."""
    import os
    import sys
    import threading
    import time

    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    deadline = time.monotonic() + 1.0
    for t in others:
        t.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in others):
        click.echo("paperdex: requests still running after the grace period were abandoned", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


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

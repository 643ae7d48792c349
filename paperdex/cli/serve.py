"""`paperdex serve` and `paperdex mcp` (registered by paperdex/cli): the web server of
paperdex/web/serving.py and the MCP server of paperdex/mcp_server.py.

Both run with the group's settings (``ctx.obj["settings"]``, see paperdex.settings); invoked on
their own they build them from the environment and ``ctx.obj["data_dir"]``.
"""

from __future__ import annotations

import click

from paperdex.cli.common import _settings
from paperdex.web import serving


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="Worker processes (default: the number of cores); searches in different workers run in parallel.",
)
@click.option(
    "--workers-pool",
    "pool",
    type=click.IntRange(1, 32),
    help="Searchers per worker process (default: 1; with --workers 1: cores, at most 4).",
)
@click.option(
    "--time-budget",
    type=click.FloatRange(0.05, 600),
    help="Seconds one search may run before it stops with a 503 (default: $PAPERDEX_TIME_BUDGET or 2).",
)
@click.option("--no-warm", is_flag=True, help="Do not load the indexes and model before serving.")
@click.option(
    "--header-timeout",
    type=click.FloatRange(0.1, 3600),
    default=serving.HEADER_TIMEOUT,
    show_default=True,
    help="Seconds a connection gets to send a request's headers before it is closed.",
)
@click.option(
    "--body-timeout",
    type=click.FloatRange(0.1, 3600),
    default=serving.BODY_TIMEOUT,
    show_default=True,
    help="Seconds a request gets, after its headers, to send its body before the connection is closed.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="Also answer requests for this Host name (repeatable; '*' for any). Default: loopback names, "
    "the --host address, and $PAPERDEX_ALLOWED_HOSTS (comma-separated).",
)
@click.option(
    "--forwarded-allow-ips",
    "proxies",
    help="Believe X-Forwarded-For (the client's address) and X-Forwarded-Proto from these proxies only: IP "
    "addresses or networks, comma-separated ('*': any peer). Default: $PAPERDEX_FORWARDED_ALLOW_IPS, else none.",
)
@click.option(
    "--client-queue",
    type=click.IntRange(0, 1000),
    default=serving.CLIENT_QUEUE,
    show_default=True,
    help="Requests of one client (one address) that may wait for a searcher in a worker; more get 503 at once.",
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
    workers: int | None = None,
    time_budget: float | None = None,
    header_timeout: float = serving.HEADER_TIMEOUT,
    body_timeout: float = serving.BODY_TIMEOUT,
    proxies: str | None = None,
    client_queue: int = serving.CLIENT_QUEUE,
) -> None:
    """Serve the web UI and JSON API (open http://HOST:PORT/; API docs at /api/docs).

    Runs one worker process per core behind one port (the process model is described in
    paperdex/web/serving.py and the README); each loads the indexes and the query model
    before it accepts a connection. On SIGTERM or Ctrl-C it stops taking connections, lets
    requests in flight finish for up to GRACE seconds, and exits. When a write killed before
    it published left papers out of the word index, it says so and publishes them in the
    background (or tells the one command that does, when it cannot write).

    Behind a reverse proxy or a load balancer, name it with --forwarded-allow-ips so that
    requests are queued per user rather than all under the proxy's address (docs/web.md,
    "Behind a proxy"). On a Milvus Lite file it runs one worker process (one process can open
    the file)."""
    from paperdex.settings import proxy_addresses
    from paperdex.store import Store, StoreError

    settings = _settings(ctx)
    if proxies is not None:
        try:
            settings = settings.replace(forwarded_allow_ips=proxy_addresses(proxies))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--forwarded-allow-ips") from None
    hosts = [*settings.allowed_hosts, *(h.lower() for h in allow_hosts)]
    if host not in ("0.0.0.0", "::", ""):
        hosts.append(host.lower())  # the address it was asked to listen on is a name it answers to
    settings = settings.replace(allowed_hosts=tuple(dict.fromkeys(hosts)), time_budget=time_budget)
    try:
        n, why = serving.workers_for(workers, settings.backend)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    if why:
        click.echo(f"paperdex: {why}", err=True)
    st = serving.ServeOptions(
        settings=settings,
        host=host,
        port=port,
        workers=n,
        pool=pool or (1 if n > 1 else None),  # one search thread per worker: see serving.py
        warm=not no_warm,
        log_level=log_level,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        client_queue=client_queue,
    )
    try:
        with Store(settings.data_dir, readonly=True):  # fail here, readably, rather than in every worker
            pass
        status = serving.serve(st)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    if status:
        ctx.exit(status)


@click.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Run the MCP tool server on stdio for AI agents.

    \b
    Tools: search, get_paper, similar_papers, related_work, list_tags, add_to_tag,
    recommendations, saved_searches, saved_search_new (add_to_tag writes as the local owner:
    no token)."""
    from paperdex.mcp_server import run
    from paperdex.store import StoreError

    try:
        st = _settings(ctx)
        run(st.data_dir, wait=st.pool_wait, budget=st.time_budget, backend=st.backend)
    except StoreError as e:
        raise click.ClickException(str(e)) from None

"""`paperdex serve`, `mcp` and `demo`: the web server of paperdex/web/serving.py, the MCP
server of paperdex/mcp_server.py, and the bundled sample served."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import click

from paperdex.cli.common import _settings, _store
from paperdex.cli.progress import Progress
from paperdex.web import serving


def _timeout(flag: str, default: float, text: str) -> Any:
    return click.option(flag, type=click.FloatRange(0.1, 3600), default=default, show_default=True, help=text)


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
@_timeout(
    "--header-timeout",
    serving.HEADER_TIMEOUT,
    "Seconds a connection gets to send a request's headers before it is closed.",
)
@_timeout(
    "--body-timeout",
    serving.BODY_TIMEOUT,
    "Seconds a request gets, after its headers, to send its body before the connection is closed.",
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
def serve(ctx: click.Context, host: str, port: int, workers: int | None, pool: int | None, **options: Any) -> None:
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
    from paperdex.store import Store

    settings = _settings(ctx)
    if (proxies := options.pop("proxies")) is not None:
        try:
            settings = settings.replace(forwarded_allow_ips=proxy_addresses(proxies))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--forwarded-allow-ips") from None
    hosts = [*settings.allowed_hosts, *(h.lower() for h in options.pop("allow_hosts"))]
    if host not in ("0.0.0.0", "::", ""):
        hosts.append(host.lower())  # the address it was asked to listen on is a name it answers to
    settings = settings.replace(allowed_hosts=tuple(dict.fromkeys(hosts)), time_budget=options.pop("time_budget"))
    try:
        n, why = serving.workers_for(workers, settings.backend)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    if why:
        click.echo(f"paperdex: {why}", err=True)
    pool = pool or (1 if n > 1 else None)  # one search thread per worker: see serving.py
    warm = not options.pop("no_warm")
    # options: log_level, the timeouts and client_queue, named as ServeOptions' fields
    st = serving.ServeOptions(settings=settings, host=host, port=port, workers=n, pool=pool, warm=warm, **options)
    Store(settings.data_dir, readonly=True).close()  # fail here, readably, rather than in every worker
    if status := serving.serve(st):
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

    run(_settings(ctx))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True)
@click.option("--no-serve", is_flag=True, help="Only load the sample.")
@click.pass_context
def demo(ctx: click.Context, host: str, port: int, no_serve: bool) -> None:
    """Load the bundled sample (3,077 arXiv papers with their vectors), then serve the web UI."""
    from paperdex.ingest import load_sample

    with _store(ctx, create=True) as store:
        click.echo(f"loading the bundled sample into {store.data_dir}")
        with Progress("loading the sample", unit=None, interval=5.0):  # never a long silence, in a log too
            s, vectors = load_sample(store)
        model = store.model
    click.echo(f"sample: added {s.added}, unchanged {s.unchanged}")
    if vectors is not None:
        click.echo(f"vectors: {vectors} attached ({model})")
    if not no_serve:
        from paperdex.store import PrefixCounts
        from paperdex.text import zh

        click.echo("preparing the Chinese segmenter (its dictionary is cached after the first run)")
        with Progress("preparing the segmenter", unit=None, interval=5.0):
            zh.segment("中文", PrefixCounts)  # builds the cache once here, not in each worker at once
        click.echo("starting the web server (each worker loads the indexes, the query model, the Chinese segmenter)")
        _until_it_answers(f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}/static/style.css")
        ctx.invoke(serve, host=host, port=port)


def _until_it_answers(url: str) -> None:
    """Say every 5 s that the server is still starting, until it answers (a daemon thread: it
    never holds the process)."""
    import httpx

    def run() -> None:
        with Progress("starting the web server", unit=None, interval=5.0):
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                time.sleep(0.5)
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(url, timeout=1).status_code == 200:
                        return

    threading.Thread(target=run, name="demo-progress", daemon=True).start()

"""Running the sources: one job of a network source (``ingest_source``), a file a file source
reads (``import_file``), every source of sources.toml (``sync_sources``). Network clients come
from factories that tests replace, so every command runs offline against recorded responses.
"""

from __future__ import annotations

import logging
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from paperdex.sources import registry
from paperdex.sources.http import HttpClient, SourceError
from paperdex.sources.merge import ingest_with_merge
from paperdex.sources.registry import utc_today  # tests set the day through sync.utc_today
from paperdex.store import IngestSummary, Store

CONFIG_NAME = "sources.toml"
LOG_NAME = "sync.log"  # <data-dir>/sync.log: retries and notes of every sync, with their time
SPACING_DIR = "requests"  # <data-dir>/requests/<host>: the last request to each host, for every process
NETWORK_SOURCES = registry.network_names()  # every source registers itself (registry.py)

# An example sources.toml: each source's own part.
EXAMPLE_CONFIG = "# paperdex sync reads this file; every section is optional.\n\n" + "\n".join(
    s.example for s in registry.network() if s.example
)


def http_factory(source: str, section: dict[str, Any] | None = None) -> HttpClient:
    """The HTTP client of one service, as its source makes it (arXiv's keeps to its 3 s limit);
    tests replace it, so every HTTP source runs against recorded responses."""
    make = registry.get(source).client
    return make(section or {}) if make else HttpClient(min_interval=1.0)


def make_client(source: registry.Source, section: dict[str, Any], data_dir: str | Path | None = None) -> Any:
    """The connection one source's jobs share: HTTP sources through ``http_factory``. With a
    data directory, its request spacing is shared with every process using that directory."""
    if source.uses_http:
        conn = http_factory(source.name, section)
        if data_dir is not None and isinstance(conn, HttpClient):
            conn.share_spacing(Path(data_dir) / SPACING_DIR)
        return conn
    assert source.client is not None, f"source {source.name} makes no client"
    return source.client({**section, "_data_dir": str(data_dir)} if data_dir is not None else section)


def source_section(
    config: dict[str, Any] | None, source: str, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The sources.toml section of a source ([huggingface] or [hf] for hf), under the values of
    the environment variables it names (``Source.env``) that are set in ``environ``."""
    src, config = registry.get(source), config or {}
    section: dict[str, Any] = next((config[n] for n in src.sections if isinstance(config.get(n), dict)), {})
    given = {key: environ[var] for key, var in src.env.items() if environ and environ.get(var)}
    return {**section, **given} if given else section


# --- network sources ---------------------------------------------------------------------


def ingest_source(
    store: Store,
    name: str,
    *,
    http: HttpClient | None = None,
    client: Any = None,
    today: date | None = None,
    config: dict[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> IngestSummary:
    """Fetch one job of a network source into the store, merging with what is there. The
    options are the source's ``ingest`` options (``base_url`` overrides the section's ``url``);
    ``config``: sources.toml (the data directory's by default); ``http``/``client``: a
    connection shared across jobs, else one is made for this job."""
    src = registry.get(name)
    opts = {k: v for k, v in options.items() if v not in (None, (), [])}
    if config is None:  # `paperdex ingest arxiv` uses the service addresses and credentials `sync` uses
        config = load_config(store.data_dir) if (Path(store.data_dir) / CONFIG_NAME).exists() else {}
    section = source_section(config, name, environ)
    if opts.get("base_url"):
        section = {**section, "url": opts["base_url"]}
    if src.check:
        src.check(opts)
    conn = client if client is not None else http
    if own := conn is None:
        conn = make_client(src, section, store.data_dir)
    try:
        assert src.run is not None
        res = src.run(store, conn, opts, section, today)
    finally:
        if own and isinstance(conn, HttpClient):
            conn.close()
    if isinstance(res, IngestSummary):
        return res
    papers, errors = res
    return ingest_with_merge(store, papers, errors=errors)


# --- files -------------------------------------------------------------------------------


def read_file(path: str | Path) -> registry.Parsed | None:
    """What the file source that takes this file (``.bib``) reads from it; None for other formats
    (JSON Lines). ``ingest --strict`` checks a file with the reader that ingests it."""
    path = Path(path)
    for src in registry.file_sources():
        assert src.reads is not None
        res = src.reads(path)
        if res is not None:
            return res
    return None


def import_file(store: Store, path: str | Path, notes: list[str] | None = None) -> IngestSummary | None:
    """Import a file a file source reads (``.bib``), its notes added to ``notes``; None for other
    formats (JSON Lines)."""
    res = read_file(path)
    if res is None:
        return None
    if notes is not None:
        notes.extend(res.notes)
    return ingest_with_merge(store, res.papers, errors=res.errors)


# --- sync --------------------------------------------------------------------------------


def load_config(data_dir: Path) -> dict[str, Any]:
    """sources.toml, checked: a typo in a section or key is an error, not ignored."""
    path = Path(data_dir) / CONFIG_NAME
    if not path.exists():
        raise FileNotFoundError(f"no {CONFIG_NAME} in {data_dir}; create one, for example:\n\n{EXAMPLE_CONFIG}")
    try:
        cfg = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from e
    sections = registry.sections()
    if unknown := set(cfg) - set(sections):
        known = ", ".join(s.sections[0] for s in registry.network() if s.sections)
        raise ValueError(f"{path}: unknown section(s) {', '.join(sorted(unknown))}; known: {known}")
    for src in registry.network():
        both = [f"[{name}]" for name in src.sections if name in cfg]
        if len(both) > 1:
            raise ValueError(f"{path}: {' and '.join(both)} are the same section; keep one")
    for section, body in cfg.items():
        if not isinstance(body, dict):
            raise ValueError(f"{path}: [{section}] must be a table")
        keys = sections[section].config_keys
        if bad := set(body) - keys:
            raise ValueError(
                f"{path}: unknown key(s) {', '.join(sorted(bad))} in [{section}]; known: {', '.join(sorted(keys))}"
            )
        for key, value in body.items():
            if (key == "url" or key.endswith("_url")) and not (
                isinstance(value, str) and value.startswith(("http://", "https://"))
            ):
                raise ValueError(f"{path}: [{section}] {key} must be an http(s) URL, got {value!r}")
    return cfg


def plan(cfg: dict[str, Any], store: Store, today: date) -> list[tuple[str, str, dict[str, Any]]]:
    """(source, label, options) of every job, in run order (a misspelt name fails here)."""
    jobs: list[tuple[str, str, dict[str, Any]]] = []
    for src in registry.network():
        if src.plan is None or not any(name in cfg for name in src.sections):
            continue
        jobs += [(src.name, label, opts) for label, opts in src.plan(source_section(cfg, src.name), store, today)]
    return jobs


def sync_sources(
    store: Store,
    cfg: dict[str, Any] | None = None,
    *,
    only: Iterable[str] = (),
    today: date | None = None,
    echo: Callable[[str], None] = print,
    quiet: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[IngestSummary, list[str]]:
    """Run every configured source incrementally, one failing source not stopping the others:
    (total, failures). ``quiet`` reports only changes and failures (cron mail); ``progress(i, n,
    label)`` is told as job i of n starts. A source's jobs share one client (arXiv's spacing,
    one OpenReview login); one that could not be made fails them all with its error."""
    cfg = load_config(store.data_dir) if cfg is None else cfg
    today = today or utc_today()
    only = set(only)
    total, failures = IngestSummary(), []
    clients: dict[str, Any] = {}
    try:
        jobs = [job for job in plan(cfg, store, today) if not only or job[0] in only]
        for i, (source, label, opts) in enumerate(jobs):
            if progress:
                progress(i, len(jobs), label)
            src = registry.get(source)
            try:
                if source not in clients:
                    try:
                        clients[source] = make_client(src, source_section(cfg, source, environ), store.data_dir)
                    except (SourceError, ValueError) as e:
                        # a failed login: every later job of the source reports it, none logs in again
                        clients[source] = e
                if isinstance(clients[source], Exception):
                    raise SourceError(str(clients[source]))
                s = ingest_source(
                    store, source, today=today, config=cfg, client=clients[source], environ=environ, **opts
                )
            except (SourceError, ValueError) as e:
                failures.append(f"{label}: {e}")
                echo(f"{label}: FAILED: {e}")
                continue
            if src.done:
                src.done(store, opts)
            total = total + s
            if quiet and not (s.added or s.updated):
                continue
            echo(f"{label}: {fmt_summary(s)}")
            for err in s.errors[:5]:
                echo(f"  skipped: {err}")
            if len(s.errors) > 5:
                echo(f"  … and {len(s.errors) - 5} more")
    finally:
        for c in clients.values():
            if isinstance(c, HttpClient):
                c.close()
    return total, failures


def fmt_summary(s: IngestSummary) -> str:
    return ", ".join(f"{v} {k}" for k, v in s.as_dict().items())


@contextmanager
def sync_log(data_dir: Path, quiet: bool) -> Iterator[None]:
    """A sync's notes go to <data-dir>/sync.log, its warnings to stderr too unless ``quiet``."""
    logger = logging.getLogger("paperdex.sources")
    handlers: list[logging.Handler] = []
    try:
        f = logging.FileHandler(Path(data_dir) / LOG_NAME, encoding="utf-8")
    except OSError:
        pass  # a data directory that cannot be written keeps no log; warnings still print
    else:
        f.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        f.setLevel(logging.INFO)
        handlers.append(f)
    if not quiet:
        handlers.append(err := logging.StreamHandler(sys.stderr))
        err.setLevel(logging.WARNING)
    saved = logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False  # no last-resort printing of what the file holds
    for h in handlers:
        logger.addHandler(h)
    try:
        yield
    finally:
        for h in handlers:
            logger.removeHandler(h)
            h.close()
        logger.setLevel(saved[0])
        logger.propagate = saved[1]

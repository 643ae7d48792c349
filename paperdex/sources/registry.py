"""The sources paperdex knows, each declared once, by its own module's ``register(Source(...))``:
the CLI, sync.py and merge.py read this registry instead of listing the sources, so a new source
is one new module in this package (:func:`load` imports them all the first time anyone asks).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import click

from paperdex.paper import Paper

Ranks = dict[str, int]  # field group (GROUPS) -> trust; higher wins
GROUPS = ("title", "abstract", "authors", "venue", "dates", "links", "code", "categories")
Job = tuple[str, dict[str, Any]]  # (label printed by sync, options for Source.run)


@dataclass
class Parsed:
    """What a file source read: its papers, for each part it skipped, why (FILE:LINE: ...), and
    what it kept cut (an over-long title: FILE:LINE: note: ...)."""

    papers: list[Paper] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Source:
    """One place papers come from. ``run(store, client, opts, section, today)`` fetches one job:
    ``(papers, errors)`` to merge, or a summary when it wrote to the store itself; ``client``
    makes the connection a ``sync`` run shares; ``plan`` lists the jobs ``sync`` runs; ``done``
    records a finished one. ``env``'s variables are read by the command, never by a source."""

    name: str
    ranks: dict[str, Ranks]  # record source name ("arxiv", "arxiv-rss") -> its ranks
    order: int = 100  # sync runs sources in this order (arXiv first: the records others link to)
    sections: tuple[str, ...] = ()  # sources.toml section names; the first is the documented one
    config_keys: frozenset[str] = frozenset()
    env: dict[str, str] = field(default_factory=dict)  # section key -> the variable that overrides it
    options: tuple[click.Option, ...] = ()  # `paperdex ingest NAME` options; their names are run's opts
    plan: Callable[[dict[str, Any], Any, date], list[Job]] | None = None
    run: Callable[..., Any] | None = None
    client: Callable[[dict[str, Any]], Any] | None = None
    uses_http: bool = True
    done: Callable[[Any, dict[str, Any]], None] | None = None
    reads: Callable[[Path], Parsed | None] | None = None  # a file source: None for a file not its own
    # a file source: whether a record it read is its own export of the stored paper, unedited
    exported: Callable[[Paper, Paper], bool] | None = None
    check: Callable[[dict[str, Any]], None] | None = None  # refuse bad options before connecting
    example: str = ""  # its part of the example sources.toml


_SOURCES: dict[str, Source] = {}
_RANKS: dict[str, Ranks] = {}
_loaded = False
_SKIP = {"registry", "http", "merge", "sync"}  # the machinery, not sources


def trust(**ranks: int) -> Ranks:
    """A source's trust in each field group, every one of GROUPS named (a typo fails at import)."""
    if set(ranks) != set(GROUPS):
        raise ValueError(f"ranks must name each of {', '.join(GROUPS)}; got {', '.join(ranks)}")
    return ranks


def utc_today() -> date:
    """The day a sync plans for: UTC, as arXiv and Hugging Face date their days."""
    return datetime.now(UTC).date()


def register(source: Source) -> Source:
    """Add a source; its name, sections, options and ranked names must be new."""
    old = _SOURCES.get(source.name)
    if old is not None and old != source:
        raise ValueError(f"source {source.name!r} is registered twice")
    for other in _SOURCES.values():
        if other.name == source.name:
            continue
        if clash := set(other.sections) & set(source.sections):
            raise ValueError(f"sources {other.name} and {source.name} both claim [{', '.join(clash)}]")
        if clash := {o.name for o in other.options} & {o.name for o in source.options}:
            raise ValueError(f"sources {other.name} and {source.name} both take {', '.join(sorted(clash))}")
        if clash := set(other.ranks) & set(source.ranks):
            raise ValueError(f"sources {other.name} and {source.name} both rank {', '.join(sorted(clash))}")
    _SOURCES[source.name] = source
    _RANKS.update(source.ranks)
    return source


def load() -> dict[str, Source]:
    """Every source, importing this package's modules the first time (each registers itself)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for mod in pkgutil.iter_modules([str(Path(__file__).parent)]):
            if mod.name not in _SKIP and not mod.name.startswith("_"):
                importlib.import_module(f"{__package__}.{mod.name}")
    return _SOURCES


def get(name: str) -> Source:
    source = load().get(name)
    if source is None or source.run is None:  # a network source: one that runs
        raise ValueError(f"unknown source {name!r}; known: {', '.join(network_names())}")
    return source


def network() -> list[Source]:
    """The sources `ingest NAME` and `sync` run, in their run order."""
    return sorted((s for s in load().values() if s.run is not None), key=lambda s: (s.order, s.name))


def network_names() -> tuple[str, ...]:
    return tuple(s.name for s in network())


def file_sources() -> list[Source]:
    return [s for s in load().values() if s.reads is not None]


def ranks() -> dict[str, Ranks]:
    """Record source name -> trust per field group, for the merge."""
    load()
    return _RANKS


def sections() -> dict[str, Source]:
    """sources.toml section name -> its source."""
    return {sec: s for s in network() for sec in s.sections}


def as_list(v: Any, what: str) -> list[str]:
    """A sources.toml value that may be one string or a list of them."""
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{what} must be a list of strings")
    return v


def days(first: date, last: date) -> Iterator[date]:
    """Every day from ``first`` to ``last``, both included."""
    return (first + timedelta(days=n) for n in range((last - first).days + 1))


def saved_state(store: Any, key: str) -> Any:
    """A source's JSON checkpoint in the store, parsed; None when there is none or it is unreadable."""
    raw = store.get_state(key)
    try:
        return json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return None


def data_lines(name: str) -> list[str]:
    """The lines of a table in paperdex/data, without its comments and blank lines."""
    text = resources.files("paperdex").joinpath("data", name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def words(v: str | Iterable[str]) -> list[str]:
    """An option given as one string ("2501.00001, 2501.00002") or as several values."""
    return v.replace(",", " ").split() if isinstance(v, str) else list(v)


def cli_options() -> Iterable[click.Option]:
    for s in network():
        yield from s.options


def source_of_option(name: str) -> Source | None:
    return next((s for s in network() if any(o.name == name for o in s.options)), None)

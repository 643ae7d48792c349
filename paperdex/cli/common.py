"""What the `paperdex` command modules share: the error a user sees, terminal- and JSON-safe
text, and the settings, store and service a command runs on."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from paperdex.paper import finite
from paperdex.settings import Settings
from paperdex.store import Store
from paperdex.text import HIDDEN


class UserError(click.ClickException):
    exit_code = 1


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def tty(text: object, newlines: bool = False) -> str:
    """Paper text as a terminal may print it: no escape sequences or other control
    characters; line breaks only where the field has lines (an abstract)."""
    s = str(text)
    if not newlines:
        s = re.sub(r"[\r\n\t\v\f]+", " ", s)
    return HIDDEN.sub("", s)


def json_text(obj, indent: int | None = 1) -> str:
    """Valid JSON whatever the data holds (a NaN stored before records were validated becomes
    null), with the control characters JSON allows raw (C1, DEL, bidi overrides) escaped."""
    s = json.dumps(finite(obj), ensure_ascii=False, indent=indent, allow_nan=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


def _settings(ctx: click.Context) -> Settings:
    """The settings the `paperdex` group built (cli/__init__.py)."""
    return ctx.obj["settings"]


def _store(ctx: click.Context, readonly: bool = False, create: bool = False) -> Store:
    """The data directory's store. Only `ingest`, `demo` and `init` make one (create=True): any
    other writer given a directory without one (a mistyped --data-dir) stops."""
    data_dir = _settings(ctx).data_dir
    if not readonly and not create and not (data_dir / "paperdex.db").is_file():
        raise UserError(
            f"no paperdex data in {data_dir} (run `paperdex ingest`, or `paperdex init` for an empty store, first)"
        )
    return Store(data_dir, readonly=readonly)


def pass_store(readonly: bool = False) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command run on the data directory's store, handed to it as its first argument."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @click.pass_context
        @functools.wraps(command)
        def run(ctx: click.Context, *args: Any, **kw: Any) -> None:
            with _store(ctx, readonly=readonly) as st:
                command(st, *args, **kw)

        return run

    return decorate


# The time budget ($PAPERDEX_TIME_BUDGET, 2 s) is a server's, for cores other users wait for; a
# command has its machine to itself (a busy CI at load 5 ran a 0.3 s `related` past 2 s).
CLI_TIME_BUDGET = 60.0


@contextmanager
def _service(ctx: click.Context, readonly: bool = False) -> Iterator:
    """The service over the data directory's store, as the web and MCP run it, within
    CLI_TIME_BUDGET (or the settings' if longer); a refused request is one line on stderr."""
    from paperdex.service import Local, ServiceError

    settings = _settings(ctx)
    with _store(ctx, readonly=readonly) as store:
        try:
            budget = max(settings.time_budget, CLI_TIME_BUDGET)
            yield Local(store, settings.backend, budget, settings.embedding, settings.zh_dict)
        except ServiceError as e:
            raise UserError(e.message) from None

"""What the `paperdex` command modules share: the error a user sees, terminal- and JSON-safe
text, the file a command writes (-o), and the settings, store and service a command runs on."""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from paperdex.messages import message
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


class Output:
    """The file a command writes its result to (`-o FILE`), opened before the command does its
    work: a missing directory or a file it may not write is said at once, in one line, before a
    search runs and says anything else. The result is written to a new file beside FILE and
    renamed over it, so a write that fails (a full disk) leaves no partial file, and a FILE that
    was there as it was. What is not a regular file (/dev/stdout, a pipe) is written in place.
    A context manager: the new file is removed when the command stops before writing."""

    def __init__(self, path: Path) -> None:
        self.path = self._target = path
        self._part: Path | None = None
        try:
            if path.is_dir():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            if path.exists() and not os.access(path, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            if path.exists() and not path.is_file():
                return  # /dev/stdout, a pipe: written in place
            self._target = Path(os.path.realpath(path))  # through a symlink: the link stays one
            part = self._target.with_name(f".{self._target.name}.{secrets.token_hex(4)}.part")
            os.close(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # the umask's mode, as open() gives
            self._part = part
        except OSError as e:
            raise self._error(e) from None

    def _error(self, e: OSError) -> UserError:
        return UserError(message("export_cannot_write", path=tty(self.path), error=tty(e.strerror or e)))

    def write(self, data: str | bytes) -> None:
        """FILE holds ``data`` (text as UTF-8), whole, or is as it was and a UserError says why."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        try:
            if self._part is None:
                with open(self._target, "wb") as f:
                    f.write(raw)
                return
            with open(self._part, "wb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
            if self._target.exists():
                os.chmod(self._part, self._target.stat().st_mode & 0o7777)  # the file keeps its mode
            os.replace(self._part, self._target)
            self._part = None
        except OSError as e:
            self.discard()
            raise self._error(e) from None

    def discard(self) -> None:
        if self._part is not None:
            self._part.unlink(missing_ok=True)
            self._part = None

    def __enter__(self) -> Output:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def _settings(ctx: click.Context) -> Settings:
    """The settings the `paperdex` group built (cli/__init__.py)."""
    return ctx.obj["settings"]


def note_copy_behind(ctx: click.Context, written: int) -> None:
    """After `ingest` or `sync` wrote papers, with --backend (or $PAPERDEX_BACKEND) naming a
    Milvus copy: searches read the copy, which only `migrate --to` writes (docs/scale-out.md),
    so the papers just written are not found there yet. Said on stderr, not left to surprise."""
    from paperdex.backends import parse_uri

    uri = _settings(ctx).backend
    if written and uri and parse_uri(uri)[0] != "embedded":
        click.echo(f"searches with --backend {uri} find these after `paperdex migrate --to {uri}`", err=True)


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

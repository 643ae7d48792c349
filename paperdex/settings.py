"""One settings object, built once from command-line flags and the environment, passed down.

The one place paperdex reads its ``PAPERDEX_*`` variables (:data:`VARIABLES`; the README's
"Settings" table gives their flags, defaults and meanings): an entry point builds a
:class:`Settings` and hands library calls the values they need, so nothing depends on the
environment at import time, and a bad value is one line naming the variable.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from platformdirs import user_data_dir

from paperdex.index.embed import DEFAULT_MODEL, OPENAI_URL, EmbedError, EmbedOptions, check_model_name

DEFAULT_TIME_BUDGET = 2.0  # seconds one search may run
DEFAULT_POOL_WAIT = 10.0  # seconds a web request waits for a free searcher


class SettingsError(ValueError):
    """A setting has a value paperdex cannot use; the message is one line naming it."""


# --- parsers: a string from the environment -> the field's value (ValueError says why not) ---


def _switch(s: str) -> bool:
    v = s.strip().lower()
    if v not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        raise ValueError("expected 1 or 0 (also true/false, yes/no, on/off)")
    return v in ("1", "true", "yes", "on")


def _model(s: str) -> str:
    name = s.strip()
    try:
        return check_model_name(name)
    except EmbedError as e:  # the variable's value is shown by the caller already
        raise ValueError(str(e).replace(f"unknown model {name!r}", "unknown model")) from None


def _number(kind: Callable[[str], Any], ok: Callable[[Any], bool], want: str) -> Callable[[str], Any]:
    """A parser of one finite number (`kind`: int or float) that `ok` accepts; else ValueError(`want`)."""

    def parse(s: str) -> Any:
        try:
            v = kind(s.strip())
        except ValueError:
            raise ValueError(want) from None
        if not (ok(v) and abs(v) < math.inf):  # not NaN or infinite (a huge int compares exactly)
            raise ValueError(want)
        return v

    return parse


_count = _number(int, lambda n: n > 0, "expected a whole number > 0")
_threads = _number(int, lambda n: n >= 0, "expected a whole number of threads (0: the engine's own choice)")


def _hosts(s: str) -> tuple[str, ...]:
    return tuple(h.strip().lower() for h in s.split(",") if h.strip())


def proxy_addresses(s: str) -> tuple[str, ...]:
    """The proxies whose X-Forwarded-* headers `serve` believes: IP addresses and networks,
    comma-separated, or '*'. Checked here: uvicorn would silently never match a misspelt one."""
    out: list[str] = []
    for item in (x.strip() for x in s.split(",")):
        if not item:
            continue
        if item != "*":
            try:
                item = str(ipaddress.ip_network(item, strict=False) if "/" in item else ipaddress.ip_address(item))
            except ValueError:
                want = "an IP address or network (e.g. 10.0.0.5, 10.0.0.0/8, '*')"
                raise ValueError(f"{item[:60]!r} is not {want}") from None
        out.append(item)
    return ("*",) if "*" in out else tuple(dict.fromkeys(out))


def check_url(url: str) -> str:
    """An http(s) base URL with a host and no credentials or query in it (the key belongs in
    its environment variable, where it is never printed)."""
    u = urlsplit(url.strip())
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError("the endpoint is an http(s) URL such as http://127.0.0.1:8080/v1")
    if u.username or u.password or u.query or u.fragment:
        raise ValueError("the endpoint URL may not hold a user, password or query; put the key in its variable")
    return url.strip()


def _variable_name(s: str) -> str:
    name = s.strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError("expected the name of an environment variable, such as OPENAI_API_KEY")
    return name


def _env(default: Any, parse: Callable[[str], Any], **kw: Any) -> Any:
    """A field read from the variable PAPERDEX_<FIELD> (``kw["name"]``: another) by ``parse``."""
    name = kw.pop("name", None)
    return field(default=default, metadata={"parse": parse, "name": name}, **kw)


@dataclass(frozen=True)
class Settings:
    """Everything paperdex may be told from outside: flag, else environment, else default.
    Frozen, to be shared by threads and pickled to workers (fields: the README's "Settings")."""

    data_dir: Path = field(  # ~/.local/share/paperdex
        default_factory=lambda: Path(user_data_dir("paperdex")),
        metadata={"parse": lambda s: Path(s).expanduser(), "name": "PAPERDEX_HOME"},
    )
    model: str = _env(DEFAULT_MODEL, _model)
    embed_url: str | None = _env(None, check_url)
    embed_key: str | None = _env(None, str.strip, repr=False)
    zh_dict: bool = _env(True, _switch)
    zh_adapter: bool = _env(True, _switch)
    embed_threads: int | None = _env(None, lambda s: _threads(s) or None)  # 0: None
    time_budget: float = _env(DEFAULT_TIME_BUDGET, _number(float, lambda v: v > 0, "expected a number of seconds > 0"))
    pool_wait: float = _env(DEFAULT_POOL_WAIT, _number(float, lambda v: v >= 0, "expected a number of seconds >= 0"))
    allowed_hosts: tuple[str, ...] = _env((), _hosts)
    # (): none, so a direct client cannot choose the address it queues under
    forwarded_allow_ips: tuple[str, ...] = _env((), proxy_addresses)
    backend: str | None = _env(None, str.strip)
    smtp_user: str | None = _env(None, str.strip)
    # as set: a password may begin or end with a space
    smtp_password: str | None = _env(None, str, repr=False)
    llm_url: str | None = _env(None, check_url)
    llm_model: str | None = _env(None, str.strip)
    llm_key_env: str = _env("PAPERDEX_LLM_KEY", _variable_name)
    llm_key: str | None = field(default=None, repr=False)  # the key itself, from the variable llm_key_env names
    llm_per_day: int = _env(200, _count)
    llm_max_tokens: int = _env(1200, _count)
    llm_concurrency: int = _env(2, _count)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **flags: Any) -> Settings:
        """Settings from `environ` (default: os.environ), then the `flags` that are not None on
        top; an empty variable counts as unset. SettingsError for a value it cannot use."""
        environ = os.environ if environ is None else environ
        unknown = set(flags) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {}
        for var in VARIABLES:
            raw = environ.get(var.name)
            if raw is not None and raw.strip():
                values[var.field] = _parse(var, raw)
        values.update({k: v for k, v in flags.items() if v is not None})
        if "llm_key" not in values:  # the key is read from the variable the settings name
            key = environ.get(values.get("llm_key_env", cls.llm_key_env), "").strip()
            values["llm_key"] = key or None
        if "data_dir" in values:
            values["data_dir"] = Path(values["data_dir"]).expanduser()
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed; None leaves a field as it is (a flag not given)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def embedding(self) -> EmbedOptions:
        """What get_embedder and the searchers are handed: the Chinese-query adapter switch and
        the endpoint of ``openai:`` models."""
        return EmbedOptions(self.zh_adapter, self.embed_url or OPENAI_URL, self.embed_key)


@dataclass(frozen=True)
class Variable:
    """One environment variable: the field it sets and how its text is read."""

    name: str
    field: str
    parse: Callable[[str], Any]


VARIABLES: tuple[Variable, ...] = tuple(
    Variable(f.metadata["name"] or f"PAPERDEX_{f.name.upper()}", f.name, f.metadata["parse"])
    for f in dataclasses.fields(Settings)
    if "parse" in f.metadata
)


def _parse(var: Variable, raw: str) -> Any:
    try:
        return var.parse(raw)
    except ValueError as e:
        shown = raw if len(raw) <= 60 else raw[:57] + "..."
        shown = re.sub(r"//[^/@]*@", "//***@", shown)  # a URL's credentials are never echoed
        raise SettingsError(f"{var.name}={shown!r}: {e}") from None


def read_env(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """One setting (a field name) from the environment, else its default: for ``Store()`` and
    ``open_backend()`` without arguments, which must not fail on an unrelated bad variable."""
    environ = os.environ if environ is None else environ
    var = next(v for v in VARIABLES if v.field == name)
    raw = environ.get(var.name)
    return _parse(var, raw) if raw is not None and raw.strip() else getattr(Settings(), name)

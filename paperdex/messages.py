"""Every text paperdex shows a person, once: a code with English and Chinese templates and named
fields, in one table (MESSAGES, from messages.toml) for the core's messages and the interface's
labels, and one lookup, :func:`text`.

``message("no_paper_id", id=pid)`` gives a :class:`Message`, which *is* the English text (a
``str``), so callers, logs, JSON and tests read it as a string, and which keeps its code and
fields, so an interface shows it in another language (``msg.in_lang("zh")``) instead of matching
the English text. Text from outside paperdex (Starlette's 404) has its English as its code
(:func:`shown`). The bottom layer: this module imports nothing of paperdex.
"""

from __future__ import annotations

import string
import tomllib
from importlib import resources
from typing import Any

LANGS = ("en", "zh")
NAMED_LONGEST = 40  # characters of a typed word a message names (`typed`)


def _load() -> dict[str, dict[str, str]]:
    """The table of messages.toml (a translator edits text without reading Python); its
    [outside] table is text from outside paperdex, whose code is its English text."""
    table = tomllib.loads(resources.files("paperdex").joinpath("messages.toml").read_text("utf-8"))
    outside = table.pop("outside")
    return {**table, **{en: {"en": en, "zh": zh} for en, zh in outside.items()}}


MESSAGES: dict[str, dict[str, str]] = _load()


def fields(template: str) -> list[str]:
    """The names of the fields of a template, in order ("{id!r}" -> "id")."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def text(lang: str, code: str, /, **params: Any) -> str:
    """The text of `code` in `lang` (English when the table has none) with its fields filled; a
    Message among them in `lang` too. A count of one (``n=1`` or ``count=1``) picks `code_one`
    when the table has it; a code the table does not have is shown as it is."""
    if params.get("count", params.get("n")) in (1, "1") and f"{code}_one" in MESSAGES:
        code = f"{code}_one"
    entry = MESSAGES.get(code)
    if entry is None:
        return code
    template = entry.get(lang) or entry["en"]
    if not params:
        return template
    return template.format_map({k: v.in_lang(lang) if isinstance(v, Message) else v for k, v in params.items()})


def shown(lang: str, msg: str) -> str:
    """A message as a reader of `lang` reads it: a Message in `lang`; plain text in `lang` when
    it is text from outside paperdex (its own code), else as it is (never matched back)."""
    if isinstance(msg, Message):
        return msg.in_lang(lang)
    return text(lang, msg) if MESSAGES.get(msg, {}).get("en") == msg else msg


class Message(str):
    """A message: its English text (this string), its `code` in MESSAGES and its `params`."""

    code: str
    params: dict[str, Any]

    def __new__(cls, code: str, params: dict[str, Any]) -> Message:
        missing = [f for f in fields(MESSAGES[code]["en"]) if f not in params]
        if missing:
            raise KeyError(f"message {code!r} needs {', '.join(missing)}")
        self = super().__new__(cls, text("en", code, **params))
        self.code, self.params = code, dict(params)
        return self

    def __getnewargs__(self) -> tuple[Any, ...]:  # pickle and copy
        return (self.code, self.params)

    def __str__(self) -> str:
        # str(error) and f"{error}" keep the Message, so it survives `ServiceError(400, str(e))`
        return self

    def in_lang(self, lang: str) -> str:
        """The message in `lang` (English when the table has no text for it)."""
        return text(lang, self.code, **self.params)


def message(code: str, **params: Any) -> Message:
    """The message `code` with its fields; raises KeyError for an unknown code or a missing field."""
    return Message(code, params)


def typed(text: str) -> str:
    """Text a user typed as a message names it: cut to NAMED_LONGEST characters, so a pasted run
    of letters or characters is not echoed whole and the message stays one line (docs/search.md)."""
    return text if len(text) <= NAMED_LONGEST else text[:NAMED_LONGEST] + "…"


def param(name: str) -> str:
    """A request parameter's name as a message says it: a Message when the table translates it, else the name."""
    return message(f"param_{name}") if f"param_{name}" in MESSAGES else name

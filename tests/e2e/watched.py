"""A browser page that records what a reader would meet as breakage — a dialog (an injected
alert), a script error, a console error (a CSP violation, a missing asset) — in `page.events`,
for the test to assert empty. One place for the fixtures of conftest.py, test_ui.py and
test_daily_whole.py."""

from __future__ import annotations

from typing import Any


def watched_page(browser, **context: Any):
    """A new context (no cookies carried over) and its page; `context` as for new_context."""
    ctx = browser.new_context(**context)
    p = ctx.new_page()
    events: list[str] = []
    p.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
    p.on("pageerror", lambda e: events.append(f"pageerror: {e}"))
    p.on("console", lambda m: events.append(f"console: {m.text}") if m.type == "error" else None)
    p.events = events
    return ctx, p

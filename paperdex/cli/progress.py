"""Progress of long work (`embed`, `ingest`, `migrate --to`, `sync`), one rule for every command:
on a terminal, click's bar; anywhere else (a cron log), a line every :data:`INTERVAL` seconds,
even while the work reports nothing, then a last line with the total and the time:

    embedding: 1,200 of 5,183 papers, 2.1 papers/s, about 31 min left
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import Any, TextIO

import click

INTERVAL = 30.0  # seconds between two lines off a terminal: enough to see a run is alive


class Progress:
    """One command's long work. ``total``: None when not known (no bar: lines, as off a terminal);
    ``unit``: what is counted, "bytes", or None (only that it is working); ``rate=False`` for
    steps too unlike for a rate (sync's jobs)."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        unit: str | None = "papers",
        quiet: bool = False,
        rate: bool = True,
        file: TextIO | None = None,
        interval: float | None = None,
    ) -> None:
        self.label, self.total, self.unit, self.quiet, self.rate = label, total, unit, quiet, rate
        self.file = file if file is not None else sys.stderr
        self.interval = INTERVAL if interval is None else interval
        self.done = 0
        self.doing: str | None = None
        self._bar: Any = None
        if not quiet and total is not None and _isatty(self.file):
            self._bar = click.progressbar(length=total, label=label, file=self.file)
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, n: int) -> None:
        """``n`` more done: the callback embed_store, ingest_file and migrate_store take."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        self._maybe_line()  # off a terminal only

    def step(self, done: int, total: int | None, doing: str) -> None:
        """``done`` of ``total`` steps finished and ``doing`` under way (sync's jobs)."""
        self.done, self.total = done, total
        if doing != self.doing:
            self.doing, self._doing_since = doing, time.monotonic()
        self._maybe_line()

    def __enter__(self) -> Progress:
        self.start = self.last = self._doing_since = time.monotonic()
        if self._bar is not None:
            self._bar.__enter__()
        elif not self.quiet and self.interval > 0:
            self._thread = threading.Thread(target=self._heartbeat, name=f"progress {self.label}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.__exit__(kind, exc, tb)
        if not self.quiet:
            self._echo(self.summary(stopped=kind is not None))

    def finish(self) -> None:
        """Every step is done (for step-counted work, whose last step reports only its start)."""
        if self.total is not None:
            self.done = self.total
        self.doing = None

    def line(self) -> str:
        """What is done, then the rate and the time left (or how long the step has run)."""
        now = time.monotonic()
        elapsed = now - self.start
        if self.unit is None:  # nothing counted: that it is alive, and for how long
            parts = ["working", f"{duration(elapsed)} so far"]
        elif not self.rate:
            parts = [f"{self._count(self.done, self.total)} done", f"{duration(elapsed)} so far"]
        else:
            per_s = self.done / elapsed if elapsed > 0 else 0.0
            parts = [self._count(self.done, self.total), self._rate(per_s)]
            if self.total is not None:
                left = (self.total - self.done) / per_s if per_s > 0 else None
                parts.append(f"about {duration(left)} left" if left is not None else "time left not known yet")
        text = f"{self.label}: {', '.join(parts)}"
        if self.doing:
            text += f"; now {self.doing} (for {duration(now - self._doing_since)})"
        return text

    def summary(self, stopped: bool = False) -> str:
        """How much, in how long, at what rate; or where it stopped."""
        elapsed = time.monotonic() - self.start
        if self.unit is None:
            return f"{self.label}: {'stopped after' if stopped else 'done in'} {duration(elapsed)}"
        if stopped:
            return f"{self.label}: stopped after {self._count(self.done, self.total)}, {duration(elapsed)}"
        text = f"{self.label}: {self._count(self.done)} in {duration(elapsed)}"
        if self.rate and elapsed > 0 and self.done:
            text += f" ({self._rate(self.done / elapsed)})"
        return text

    def _count(self, done: int, total: int | None = None) -> str:
        """What is done, as a person counts it: "1,200 of 5,183 papers", "12.0 MB of 120.0 MB"."""
        if self.unit == "bytes":
            return size(done) + (f" of {size(total)}" if total is not None else "")
        return f"{done:,}" + (f" of {total:,}" if total is not None else "") + f" {self.unit}"

    def _rate(self, per_s: float) -> str:
        if self.unit == "bytes":
            return f"{size(per_s)}/s"
        return f"{per_s:.1f} {self.unit}/s" if per_s < 10 else f"{per_s:,.0f} {self.unit}/s"

    def _maybe_line(self) -> None:
        if self.quiet or self._bar is not None:
            return
        with self._lock:
            if time.monotonic() - self.last >= self.interval and not self._stop.is_set():
                self._echo(self.line())

    def _echo(self, text: str) -> None:
        click.echo(text, file=self.file)
        self.last = time.monotonic()

    def _heartbeat(self) -> None:
        """A line whenever none was printed for an interval, even while a step reports nothing."""
        while not self._stop.wait(max(0.0, self.last + self.interval - time.monotonic())):
            self._maybe_line()


def _isatty(f: TextIO) -> bool:
    try:
        return f.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def duration(seconds: float | None) -> str:
    """As precise as a reader of a log needs: "45 s", "3 min 20 s", "31 min", "2 h 5 min"."""
    if seconds is None:
        return "?"
    if seconds < 9.95:
        return f"{max(0.0, seconds):.1f} s"
    s = round(seconds)  # 59.6 s is "1 min 0 s", not "60 s"
    if s < 60:
        return f"{s} s"
    m = s // 60
    if m < 10:
        return f"{m} min {s % 60} s"
    if m < 60:
        return f"{m} min"
    return f"{m // 60} h {m % 60} min"


def size(n: float) -> str:
    """Bytes as a person reads them: 830 B, 12.4 kB, 1.2 GB (powers of 1000, as `ls -h --si`)."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < (999.5 if unit == "B" else 999.95):  # what would print as 1000 is the next unit
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"

"""Is every paper of each announced day here? Each arXiv listing ``sync`` reads is recorded
(its day, its ids, the days the feed skips); the papers it named that the store lacks, or holds
only as the listing gave them, are fetched by id, then and on later syncs for a week
(docs/sources.md, "Completeness of the daily feed").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from paperdex.sources.merge import Matcher, ingest_with_merge
from paperdex.sources.registry import days, saved_state
from paperdex.store import IngestSummary

LISTING_SOURCE = "arxiv-rss"  # the listing's records (arxiv.RSS_SOURCE)
KEY = "feed:listing:"  # + listing name: {day: {"ids": [...], "skip": [...], "read": ..., "missing": [...]}}
KEEP_DAYS = 30  # days of each listing remembered
RETRY_DAYS = 7  # a paper missing from a listing is asked for until the listing read is this much newer


@dataclass
class DayState:
    listing: str
    day: str
    listed: int  # papers the listing announced (new and cross-lists)
    held: int  # of those, in the store
    missing: list[str]  # not in the store, or there only as the listing gave them (`partial`)
    read: str | None  # when the listing was read (UTC)
    tries: int = 0
    newest: str | None = None  # the newest day of this listing that was read
    partial: list[str] = field(default_factory=list)  # held, but known only from the listing

    def line(self) -> str:
        if not self.listed:
            return f"{self.listing} {self.day}: no announcement (the listing was empty)"
        if not self.missing:
            return f"{self.listing} {self.day}: complete ({self.held} of {self.listed})"
        shown = ", ".join(self.missing[:5]) + (" …" if len(self.missing) > 5 else "")
        if self.partial:
            shown += f"; {len(self.partial)} known only from the listing, without arXiv's metadata"
        when = "next retry at the next sync" if self.retries_left else f"given up after {self.tries} tries"
        return f"{self.listing} {self.day}: {len(self.missing)} papers missing ({shown}); {when}"

    @property
    def retries_left(self) -> bool:
        """Counted from the newest listing read, not the clock: a store whose syncs stopped
        still says what its next sync will do."""
        try:
            newest = date.fromisoformat(self.newest or self.day)
            return date.fromisoformat(self.day) >= newest - timedelta(days=RETRY_DAYS)
        except ValueError:
            return False


def local_day(value: str | None) -> str | None:
    """The calendar day of an RFC 822 / ISO date as written (arXiv dates its listings in its
    own time zone: 'Mon, 30 Nov 2026 00:00:00 -0500' is the 30th)."""
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).date().isoformat()
    except (TypeError, ValueError):
        m = re.match(r"\d{4}-\d{2}-\d{2}", value)
        return m.group(0) if m else None


def schedule(body: bytes | str) -> tuple[str | None, list[str]]:
    """(the listing's day, the weekdays it skips): the channel's ``<pubDate>`` and ``<skipDays>``."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    channel = text[max(text.find("<channel"), 0) :].split("<item", 1)[0]
    m = re.search(r"<pubDate>([^<]+)</pubDate>", channel)
    day = local_day(m.group(1).strip()) if m else None
    skip = re.search(r"<skipDays>(.*?)</skipDays>", channel, re.S)
    days = re.findall(r"<day>\s*(\w+)\s*</day>", skip.group(1)) if skip else []
    return day, days


def _load(store: Any, listing: str) -> dict[str, dict]:
    data = saved_state(store, KEY + listing)
    return data if isinstance(data, dict) else {}


def record(store: Any, listing: str, day: str, ids: Iterable[str], skip: list[str]) -> None:
    """What a listing announced on ``day`` (written by the sync that read it)."""
    data = _load(store, listing)
    entry = data.get(day, {})
    data[day] = {
        **entry,
        "ids": sorted(set(ids) | set(entry.get("ids", []))),
        "skip": skip,
        "read": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    for old in sorted(data)[:-KEEP_DAYS]:
        del data[old]
    store.set_state(KEY + listing, json.dumps(data, sort_keys=True))


def states(store: Any, listing: str | None = None) -> list[DayState]:
    """Every recorded listing day, newest first (read-only)."""
    names = [listing] if listing is not None else [k[len(KEY) :] for k in store.state_keys_starting(KEY)]
    out = []
    for name in sorted(names):
        data = _load(store, name)
        newest = max(data) if data else None
        for day, entry in data.items():
            ids = [i for i in entry.get("ids", []) if isinstance(i, str)]
            found = store.sources_of(ids)
            # without a submission date or comment, a paper is complete once another source supplied it
            partial = [i for i in ids if found.get(i) == [LISTING_SOURCE]]
            missing = [i for i in ids if i not in found or found[i] == [LISTING_SOURCE]]
            tries = int(entry.get("tries", 0))
            out.append(DayState(name, day, len(ids), len(found), missing, entry.get("read"), tries, newest, partial))
    return sorted(out, key=lambda s: (s.day, s.listing), reverse=True)


def unread_days(store: Any) -> list[str]:
    """Days between a listing's first and last recorded ones that the feed does not skip and no sync read."""
    out = []
    for name in sorted(k[len(KEY) :] for k in store.state_keys_starting(KEY)):
        data = _load(store, name)
        if not data:
            continue
        skip = {s.lower() for entry in data.values() for s in entry.get("skip", [])}
        out += [
            f"{name} {d.isoformat()}: not read (no sync read this day's listing)"
            for d in days(date.fromisoformat(min(data)), date.fromisoformat(max(data)))
            if d.isoformat() not in data and d.strftime("%A").lower() not in skip
        ]
    return out


def backfill(
    store: Any,
    listing: str,
    fetch_ids: Callable[[list[str]], tuple[list[Any], list[str]]],
    matcher: Matcher | None = None,
) -> Any:
    """Fetch by id (``fetch_ids``: arXiv's API) the papers recent listings named that the store
    lacks or holds only from the listing, with the listing's day; the merge summary."""
    data = _load(store, listing)
    retried = [st for st in states(store, listing) if st.missing and st.retries_left]
    if not retried:
        return IngestSummary()
    day_of: dict[str, str] = {}
    for st in reversed(retried):  # oldest first: a paper two listings named gets the first day
        for pid in st.missing:
            day_of.setdefault(pid, st.day)
        data[st.day]["tries"] = int(data[st.day].get("tries", 0)) + 1
    papers, errs = fetch_ids(list(day_of))
    # an answer may carry more than was asked; only these get the day
    got = [replace(p, listed=p.listed or day_of[p.id]) for p in papers if p.id in day_of]
    total = ingest_with_merge(store, got, matcher=matcher)
    total.errors.extend(f"back-fill {listing}: {e}" for e in errs)
    store.set_state(KEY + listing, json.dumps(data, sort_keys=True))
    return total


def day_notice(store: Any, day: str) -> str | None:
    """The daily page's line for ``day`` over its listings; None when no listing was read for it."""
    found = [s for s in states(store) if s.day == day and s.listed]
    if not found:
        return None
    missing = sum(len(s.missing) for s in found)
    names = ", ".join(s.listing for s in found)
    if not missing:
        return f"complete: every paper of the {names} listing is here"
    return f"{missing} papers missing from the {names} listing; next retry at the next sync"

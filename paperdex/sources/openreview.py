"""OpenReview venues through openreview-py (API v2): a venue's accepted papers (or, with
``submissions``, everything submitted), each with its decision, its primary area as the venue
search pages label it, and the arXiv id of its preprint when it names one (then its own id, so
it is the same record as the preprint)."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from paperdex.paper import ARXIV_ID, ARXIV_ID_SHAPE, OPENREVIEW_SITE, Paper
from paperdex.sources.http import RETRY_STATUS, SourceError
from paperdex.sources.registry import Source, as_list, data_lines, register, trust

log = logging.getLogger("paperdex.sources")

SOURCE = "openreview"
API_URL = "https://api2.openreview.net"
SITE_URL = OPENREVIEW_SITE  # forum and PDF links (Paper.links reads the forum from extra)


def area_key(raw: str) -> str:
    """The lookup form of a primary area: "Applications to neuroscience & cognitive science"
    and "applications_to_neuroscience_and_cognitive_science" agree."""
    text = re.sub(r"\([^)]*\)", " ", raw).lower().replace("&", " and ")
    return "_".join(re.findall(r"[a-z0-9]+", text))


# Primary areas -> the "Group · Area" labels of the venue search pages (paperdex/data/openreview-areas.tsv)
AREA_LABELS: dict[str, str] = {
    area_key(k): v for k, v in (line.split("\t") for line in data_lines("openreview-areas.tsv"))
}

# The groups every label starts with (ICML's taxonomy, which the venue search pages use): an
# area no table knows is put under the group its words name, so the area filter still finds it.
GROUPS = frozenset(label.split(" · ")[0] for label in AREA_LABELS.values())
_RULES = [line.split("\t") for line in data_lines("openreview-groups.tsv")]  # group and modality rules
_GROUP_WORDS = [(rx, label) for kind, label, rx in _RULES if kind == "group"]  # first match wins, on area_key()
# ICLR's "applications to computer vision, audio, language, and other modalities" covers three
# areas of the label set; the paper's own title and keywords say which (no guess without them).
AMBIGUOUS = {area_key("applications to computer vision, audio, language, and other modalities")}
_MODALITIES = [(re.compile(rx, re.I), label) for kind, label, rx in _RULES if kind == "modality"]
_PROSE = {"abstract", "TLDR", "tldr", "title", "keywords", "authors"}
_SMALL = {"and", "or", "of", "for", "in", "on", "the", "to", "with", "a", "an"}
_UPPER = {"ai": "AI", "llms": "LLMs", "llm": "LLM", "ml": "ML", "nlp": "NLP", "3d": "3D", "rl": "RL"}
_ID = f"({ARXIV_ID_SHAPE})"
_ARXIV_IN_TEXT = re.compile(rf"arxiv\.org/(?:abs|pdf)/{_ID}(?:v\d+)?|ar[xX]iv:\s?{_ID}")


def _title_case(words: str) -> str:
    return " ".join(
        _UPPER.get(w.lower()) or (w.lower() if i and w.lower() in _SMALL else w[:1].upper() + w[1:])
        for i, w in enumerate(words.split())
    )


def area_label(raw: str | None, text: str = "") -> str | None:
    """A venue's primary area as a label under one of GROUPS: ``Deep Learning->Large Language
    Models`` -> ``Deep Learning · Large Language Models``, ``trustworthy_ml`` -> ``Social Aspects
    · Trustworthy ML``; ICLR's ambiguous area is decided by ``text`` (title and keywords)."""
    if not (raw := " ".join(str(raw or "").split())):
        return None
    key = area_key(raw)
    if key in AMBIGUOUS:
        counts = Counter[str]()
        for rx, label in _MODALITIES:
            counts[label] += len(rx.findall(text))
        best = max(counts, key=counts.__getitem__)  # ties: the first in _MODALITIES
        return best if counts[best] else "Applications"
    if key in AREA_LABELS:
        return AREA_LABELS[key]
    labels = []
    for p in re.split(r"\s*(?:->|→|»|›|·)\s*", raw):
        p = re.sub(r"\s*\([^)]*\)\s*", " ", p).strip()
        if "_" in p and " " not in p:
            p = p.replace("_", " ")
        labels.append(_title_case(p) if p[1:] == p[1:].lower() else p)
    labels = [lab for lab in labels if lab]
    if not labels:
        return None
    if labels[0] not in GROUPS:
        group = next((g for rx, g in _GROUP_WORDS if re.search(rx, key)), "General Machine Learning")
        labels = [group] if len(labels) == 1 and labels[0].lower() == group.lower() else [group, *labels]
    return " · ".join(labels)


def _value(content: dict, key: str) -> Any:
    """A note's content field: API v2 wraps each value as {"value": ...}."""
    v = content.get(key)
    return v.get("value") if isinstance(v, dict) else v


def _day(ms: Any) -> str | None:
    if isinstance(ms, (int, float)) and ms > 0:
        return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()
    return None


def find_arxiv_id(note: Any) -> str | None:
    """The arXiv id a note names: an ``arxiv:`` external id, or an arxiv.org link or
    ``arXiv:`` reference in its content (a dedicated field, the code/supplement link, the
    BibTeX, the abstract's trailing "Preprint: ..." line)."""
    for ext in getattr(note, "external_ids", None) or []:
        if isinstance(ext, str) and ext.lower().startswith("arxiv:"):
            aid = ext.split(":", 1)[1]
            if ARXIV_ID.match(aid):
                return re.sub(r"v\d+$", "", aid)
    content = getattr(note, "content", None) or {}
    for key in ("arxiv", "arxiv_id", "arXiv", "arxiv_link", "preprint"):
        v = _value(content, key)
        if isinstance(v, str):
            if m := _ARXIV_IN_TEXT.search(v) or re.fullmatch(rf"\s*{_ID}(?:v\d+)?\s*", v):
                return next(g for g in m.groups() if g)
    for key in content:  # not _PROSE: an abstract may cite other preprints
        if key not in _PROSE and isinstance(v := _value(content, key), str) and (m := _ARXIV_IN_TEXT.search(v)):
            return next(g for g in m.groups() if g)
    return None


_PRESENTATIONS = ("oral", "spotlight", "poster", "highlight")


def decision_of(venue: str | None, venueid: str | None = None) -> tuple[str | None, str | None]:
    """(decision, presentation) of a note, from ``content.venueid`` (the venue's own id when
    accepted, else ending in ``/Rejected_Submission``, ``TMLR/Under_Review``, ...) and the venue
    string ("NeurIPS 2024 poster", "Submitted to ICLR 2025"). Decision is one of the search
    filter's DECISIONS (``submitted``: posted and not accepted, the outcome unsaid);
    presentation is oral, spotlight, poster or highlight when the venue string says so."""
    v = " ".join((venue or "").lower().split())
    tail = (venueid or "").rsplit("/", 1)[-1].lower() if venueid and "/" in venueid else ""
    for words, decision in (
        (("withdrawn", "withdraw"), "withdrawn"),
        (("desk_reject", "desk reject"), "desk_rejected"),
        (("reject",), "rejected"),
        (("under_review", "under review", "decision_pending", "decision pending", "submitted to"), "under_review"),
        (("submission", "submitted"), "submitted"),
    ):
        said = any(w in v for w in words)
        if any(w in tail for w in words) or (said and (not tail or decision == "under_review")):
            return decision, None
    if not v and not venueid:
        return None, None
    # a word may be glued to another: ICML 2025's "spotlightposter" is a spotlight
    presentation = next((w for w in _PRESENTATIONS if re.search(rf"\b{w}", v)), None)
    if presentation is None and "notable" in v:  # ICLR 2023: "notable top 5%" / "notable top 25%"
        presentation = "oral" if "5%" in v and "25%" not in v else "spotlight"
    return "accepted", presentation


def note_to_paper(note: Any, venue_id: str | None = None) -> Paper:
    content = getattr(note, "content", None) or {}
    title = " ".join(str(_value(content, "title") or "").split())
    if not title:
        raise ValueError("no title")
    authors = _value(content, "authors") or []
    if not isinstance(authors, list):
        raise ValueError("'authors' is not a list")
    venue = _value(content, "venue")
    venueid = _value(content, "venueid") or venue_id
    decision, presentation = decision_of(venue, venueid)
    raw_area = _value(content, "primary_area") or _value(content, "subject_areas")
    if isinstance(raw_area, list):
        raw_area = raw_area[0] if raw_area else None
    arxiv_id = find_arxiv_id(note)
    forum = getattr(note, "forum", None) or note.id
    pdf = _value(content, "pdf")
    code = _value(content, "code")
    keywords = found if isinstance(found := _value(content, "keywords"), list) else []
    extra = {
        "id": note.id,
        "forum": forum,
        "number": getattr(note, "number", None),
        "venueid": venueid,
        "decision": decision,
        "presentation": presentation,
        "primary_area": raw_area,
        "keywords": keywords,
        "tldr": _value(content, "TLDR") or _value(content, "tldr"),
        "arxiv_id": arxiv_id,
        "url": f"{SITE_URL}/forum?id={forum}",
    }
    # decision and presentation are always written, None included: a paper that went from
    # poster to withdrawn must lose "poster" when its record is merged over the old one
    kept = {k: v for k, v in extra.items() if v not in (None, [], "") or k in ("decision", "presentation")}
    return Paper(
        id=arxiv_id or f"openreview:{forum}",
        title=title,
        authors=[" ".join(str(a).split()) for a in authors if str(a).strip()],
        abstract=" ".join(str(_value(content, "abstract") or "").split()),
        venue=" ".join(str(venue).split()) if venue else None,
        venue_area=area_label(raw_area, f"{title}\n{' ; '.join(map(str, keywords))}"),
        published=_day(getattr(note, "pdate", None)) or _day(getattr(note, "cdate", None)),
        abs_url=None if arxiv_id else f"{SITE_URL}/forum?id={forum}",
        pdf_url=(SITE_URL + pdf if isinstance(pdf, str) and pdf.startswith("/") else pdf) if not arxiv_id else None,
        code_url=code if isinstance(code, str) and code.startswith("http") else None,
        sources=[SOURCE],
        extra={SOURCE: kept},
    )


TIMEOUT = 60.0  # seconds for one request (openreview-py sets none: a stalled cron job hangs)
RETRIES = 4
CREDENTIALS_HINT = (
    "set OPENREVIEW_USERNAME and OPENREVIEW_PASSWORD to your OpenReview account (or username and "
    "password under [openreview] in sources.toml)"
)
SESSION_FILE = "openreview-session.json"  # in the data directory: one login serves every run
SESSION_SECONDS = 50 * 60  # OpenReview's tokens last an hour unless asked otherwise


def _cached_token(path: Path | None, base_url: str, username: str) -> str | None:
    """A saved session of this user at this service while it is fresh; None for anything else."""
    if path is None:
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        fresh = (saved["url"], saved["user"]) == (base_url, username) and time.time() - saved["at"] <= SESSION_SECONDS
        return saved["token"] if fresh and isinstance(saved["token"], str) and saved["token"] else None
    except (OSError, ValueError, KeyError, TypeError):  # no file, not JSON, or not a session's shape
        return None


def _save_token(path: Path | None, base_url: str, username: str, token: str | None) -> None:
    """Kept readable by its owner only: the token is a login."""
    if path is None or not token:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"url": base_url, "user": username, "token": token, "at": time.time()}, f)
        os.replace(path.with_suffix(".tmp"), path)
    except OSError as e:  # a read-only data directory costs a login per run, nothing more
        log.info("OpenReview session not saved (%s)", e)


def make_client(
    base_url: str = API_URL,
    username: str | None = None,
    password: str | None = None,
    *,
    timeout: float = TIMEOUT,
    retries: int = RETRIES,
    session_file: str | Path | None = None,
) -> Any:
    """An openreview-py API v2 client with a timeout on every request, logged (not printed)
    retries of 429/5xx and a login when credentials are given, reusing a fresh session saved in
    ``session_file``: OpenReview limits logins per minute."""
    import openreview  # imported late: pulls in requests and friends
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    class LoggedRetry(Retry):
        def increment(self, method=None, url=None, response=None, error=None, *args, **kwargs):  # noqa: ANN001
            reason = f"HTTP {response.status}" if response is not None else f"{type(error).__name__}: {error}"
            log.warning("OpenReview %s %s: %s; retrying", method, url, reason)
            return super().increment(method, url, response, error, *args, **kwargs)

    class Adapter(HTTPAdapter):
        last_status: int | None = None

        def send(self, request, **kwargs):  # type: ignore[override]  # noqa: ANN001, ANN201  (passes all on)
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = timeout
            resp = super().send(request, **kwargs)
            Adapter.last_status = resp.status_code
            return resp

    class Client(openreview.api.OpenReviewClient):
        _deferred = True

        def login_user(self, *args: Any, **kwargs: Any) -> Any:
            # the constructor would log in before our adapter is mounted, with the credentials
            # openreview-py reads from the environment itself: paperdex logs in below, with its own
            if self._deferred:
                return None
            return super().login_user(*args, **kwargs)

    client = Client(baseurl=base_url.rstrip("/"))
    retry = LoggedRetry(
        total=retries,
        connect=2,
        read=2,
        backoff_factor=2,
        backoff_max=120,
        status_forcelist=sorted(RETRY_STATUS),
        raise_on_status=False,
        respect_retry_after_header=True,
    )
    adapter = Adapter(max_retries=retry)
    client.session.mount("https://", adapter)
    client.session.mount("http://", adapter)
    client.paperdex_adapter = adapter
    client.paperdex_user = None
    client.paperdex_relogin = None
    client._deferred = False
    if username or password:
        if not (username and password):
            raise SourceError(f"OpenReview login needs both a username and a password: {CREDENTIALS_HINT}")
        path = Path(session_file) if session_file else None

        def login() -> None:
            try:
                client.login_user(username, password)
            except openreview.OpenReviewException as e:
                raise SourceError(f"OpenReview login as {username} failed: {_message(e)}") from e
            except Exception as e:
                raise _network_error(e, "login") from e
            _save_token(path, base_url, username, client.token)

        if token := _cached_token(path, base_url, username):
            client.token = token
            client.headers["Authorization"] = "Bearer " + token
            client.paperdex_relogin = login  # if the server no longer takes it
        else:
            login()
        client.paperdex_user = username
    return client


@contextlib.contextmanager
def _no_progress_bar() -> Iterator[None]:
    """openreview-py draws a tqdm bar for venues of over 1,000 notes; paperdex prints one line a
    venue, and a bar in cron mail is noise."""
    import openreview.tools as tools

    bar = tools.tqdm
    tools.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        tools.tqdm = bar


def _message(e: Exception) -> str:
    arg = e.args[0] if e.args else e
    if isinstance(arg, dict):
        name, msg = arg.get("name"), arg.get("message")
        return f"{name}: {msg}" if name and msg else str(msg or name or arg)
    return " ".join(str(arg).split())[:300]


def _network_error(e: Exception, what: str) -> Exception:
    import requests

    if isinstance(e, requests.RequestException):
        return SourceError(f"OpenReview {what}: {type(e).__name__}: {e}")
    return e


def fetch_venue(venue_id: str, client: Any, *, submissions: bool = False) -> tuple[list[Paper], list[str]]:
    """Papers of one venue: its accepted ones, or with ``submissions`` every note submitted to it."""
    import openreview

    if not re.fullmatch(r"[\w.\-]+(/[\w.\-]+)*", venue_id) or "/" not in venue_id and venue_id != "TMLR":
        raise ValueError(f"not an OpenReview venue id: {venue_id!r} (e.g. NeurIPS.cc/2025/Conference)")

    def get() -> list:
        with _no_progress_bar():
            if submissions:
                return client.get_all_notes(invitation=f"{venue_id}/-/Submission")
            return client.get_all_notes(content={"venueid": venue_id})

    try:
        try:
            notes = get()
        except openreview.OpenReviewException:
            relogin = client.paperdex_relogin
            if relogin is None or client.paperdex_adapter.last_status not in (401, 403):
                raise
            client.paperdex_relogin = None  # the saved session expired: log in once, then ask again
            relogin()
            notes = get()
    except openreview.OpenReviewException as e:
        arg = e.args[0] if e.args else None
        name = arg.get("name") if isinstance(arg, dict) else None
        if client.paperdex_adapter.last_status == 403 or name in ("ChallengeRequiredError", "ForbiddenError"):
            if user := client.paperdex_user:
                raise SourceError(
                    f"OpenReview refused {venue_id} to {user} (403 {name or 'Forbidden'}): {_message(e)}"
                ) from e
            raise SourceError(
                f"OpenReview refuses anonymous requests (403 {name or 'Forbidden'}); {CREDENTIALS_HINT}."
            ) from e
        raise SourceError(f"OpenReview {venue_id}: {_message(e)}") from e
    except (KeyError, TypeError, ValueError) as e:  # a response not shaped like API v2 notes
        raise SourceError(f"OpenReview {venue_id}: unexpected response ({type(e).__name__}: {e})") from e
    except Exception as e:  # requests' connection errors, timeouts, bad JSON
        raise _network_error(e, venue_id) from e
    papers, errors = [], []
    for note in notes:
        try:
            papers.append(note_to_paper(note, venue_id))
        except ValueError as e:
            errors.append(f"OpenReview note {getattr(note, 'id', '?')}: {e}; skipped")
    return papers, errors


# --- the source, as paperdex ingest / sync / the merge see it --------------------------------


def _client(section: dict[str, Any]) -> Any:
    """One logged-in client per sync run, with the data directory's saved session (``_data_dir``)."""
    data_dir = section.get("_data_dir")
    return make_client(
        section.get("url") or API_URL,
        section.get("username") or None,
        section.get("password") or None,
        session_file=Path(data_dir) / SESSION_FILE if data_dir else None,
    )


def _check(opts: dict[str, Any]) -> None:
    if not opts.get("venue"):
        raise ValueError("openreview needs a venue id, e.g. --venue NeurIPS.cc/2025/Conference")


def _run(store: Any, client: Any, opts: dict[str, Any], section: dict[str, Any], today: Any) -> Any:
    return fetch_venue(opts["venue"], client, submissions=bool(opts.get("submissions", False)))


def _plan(section: dict[str, Any], store: Any, today: Any) -> list[tuple[str, dict[str, Any]]]:
    submissions = bool(section.get("submissions", False))
    return [
        (f"openreview {v}", {"venue": v, "submissions": submissions})
        for v in as_list(section.get("venues"), "openreview.venues")
    ]


register(
    Source(
        name=SOURCE,
        order=20,
        sections=("openreview",),
        config_keys=frozenset({"venues", "submissions", "url", "username", "password"}),
        env={"username": "OPENREVIEW_USERNAME", "password": "OPENREVIEW_PASSWORD"},
        options=(
            click.Option(["--venue"], help="openreview: venue id, e.g. NeurIPS.cc/2025/Conference."),
            click.Option(
                ["--submissions"], is_flag=True, help="openreview: all submissions, not only accepted papers."
            ),
        ),
        ranks={SOURCE: trust(title=40, abstract=40, authors=40, venue=50, dates=20, links=40, code=20, categories=10)},
        plan=_plan,
        run=_run,
        client=_client,
        uses_http=False,
        check=_check,
        example="""\
[openreview]
venues = ["NeurIPS.cc/2025/Conference"]
# logging in is required: set OPENREVIEW_USERNAME / OPENREVIEW_PASSWORD (or username/password here)
""",
    )
)

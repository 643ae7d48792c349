"""`paperdex sync` against a real HTTP server on 127.0.0.1 that answers with the real-format
samples: OAI pages in the format asked for (arXivRaw, as the client asks; the arXiv-format pages
of the samples rendered in that shape by tests/fixtures/arxiv/make_raw_pages.py) chained by their
real resumption tokens, an RSS listing, Hugging Face pages,
and OpenReview refusing anonymous requests (403) but serving a logged-in session. A sync killed
(SIGKILL) in the middle of a harvest and run again ends in the same store as an uninterrupted
run, and arXiv requests are never closer than 3 s apart across jobs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from paperdex.sources import arxiv
from paperdex.sources import sync as sources_sync
from paperdex.sources.http import HttpClient
from paperdex.store import Store

from .conftest import FakeClock, fixture, real

RAW = [fixture("arxiv", f"oai_raw_cs_p{i}.xml") for i in (1, 2, 3)]
P1 = arxiv.parse_oai_page(RAW[0].read_bytes()).token
P2 = arxiv.parse_oai_page(RAW[1].read_bytes()).token
CANNOT = real("arxiv_oai", "err_bad_set.xml").read_text()
NOTE = json.loads(real("openreview", "note_neurips2024_shape.json").read_text())["note"]
UNKNOWN_ID = json.loads(real("arxiv_api", "id_0000.0000_s0_m100_8b51d9633a68.json").read_text())["body"]
HF_ITEMS = json.loads(real("hf", "daily_papers_item_2602.23229.json").read_text())["response"]


class Service(ThreadingHTTPServer):
    """The services' stand-in. ``hold`` makes the request for the last OAI page wait (so the
    client can be killed in the middle of a harvest); ``clock`` stamps arXiv requests."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.hold = threading.Event()
        self.reached = threading.Event()
        self.release = threading.Event()
        self.clock = None
        self.arxiv_times: list[float] = []
        self.log: list[str] = []
        self.hf_down: set[str] = set()  # Daily Papers days that answer 503
        self.hf_upvotes: int | None = None  # what the server says now

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Service

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, obj: object, status: int = 200) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json; charset=utf-8")

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/or/login" and body == {"id": "reader@example.org", "password": "secret", "expiresIn": None}:
            return self._json({"token": "tok123", "user": {"id": "~Reader1", "profile": {"id": "~Reader1"}}})
        return self._json({"name": "ForbiddenError", "message": "Invalid username or password"}, 403)

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        srv = self.server
        srv.log.append(f"{url.path} {q.get('resumptionToken', q.get('set', q.get('date', '')))}")
        if url.path in ("/oai", "/api/query") or url.path.startswith("/rss/"):
            if srv.clock is not None:
                srv.arxiv_times.append(srv.clock())
        if url.path == "/oai":
            token = q.get("resumptionToken")
            page: Path | None = None
            if token == P1:
                page = RAW[1]
            elif token == P2:
                if srv.hold.is_set():
                    srv.reached.set()
                    srv.release.wait(30)
                    return
                page = RAW[2]
            elif token:
                name = "err_badResumptionToken.xml"
            elif q.get("metadataPrefix") != "arXivRaw":  # this stand-in speaks the format paperdex asks for
                body = re.sub(r"code='[^']*'>[^<]*<", "code='cannotDisseminateFormat'>Invalid metadataPrefix<", CANNOT)
                return self._send(200, body.encode(), "text/xml; charset=utf-8")
            elif q.get("from", "") >= "2026-11-30":  # nothing changed since the samples' responseDate
                name = "err_noRecordsMatch.xml"
            elif q.get("set") == "math":
                name = "listrecords_arXivRaw_math.xml"
            elif q.get("set") == "cs":
                page = RAW[0]
            else:
                name = "err_bad_set.xml"
            body = (page or real("arxiv_oai", name)).read_bytes()
            return self._send(200, body, "text/xml; charset=utf-8")
        if url.path.startswith("/rss/"):
            return self._send(200, real("arxiv_rss", "rss_realmeta_serialized.xml").read_bytes(), "application/rss+xml")
        if url.path == "/api/query":  # the listing's papers looked up by id: the API does not know them yet
            return self._send(200, UNKNOWN_ID.encode(), "application/atom+xml; charset=utf-8")
        if url.path == "/hf":
            if q.get("date") in srv.hf_down:
                return self._send(503, b"Service Unavailable", "text/plain")
            items = json.loads(json.dumps(HF_ITEMS))
            if srv.hf_upvotes is not None:
                items[0]["paper"]["upvotes"] = srv.hf_upvotes
            return self._json(items if q.get("p") == "0" else [])
        if url.path == "/or/notes":
            if self.headers.get("Authorization") != "Bearer tok123":
                return self._json(
                    {"name": "ChallengeRequiredError", "message": "Challenge required", "status": 403}, 403
                )
            return self._json({"notes": [] if "after" in q else [NOTE], "count": 1})
        return self._send(404, b"not found", "text/plain")


@pytest.fixture
def service():
    srv = Service()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()


def config(url: str, min_interval: float | None = None) -> str:
    spacing = f"min_interval = {min_interval}\n" if min_interval is not None else ""
    return f"""
[arxiv]
sets = ["math", "cs"]
start = "2010-01-01"
listings = ["cs"]
oai_url = "{url}/oai"
api_url = "{url}/api/query"
rss_url = "{url}/rss/"
{spacing}
[openreview]
venues = ["NeurIPS.cc/2024/Conference"]
url = "{url}/or"

[huggingface]
days = 1
url = "{url}/hf"
"""


def snapshot(data_dir: Path) -> tuple[dict, dict]:
    with Store(data_dir) as s:
        papers = {p.id: p.to_dict() for p in s.iter_papers()}
        state = {k: s.get_state(k) for k in ("arxiv:oai:cs", "arxiv:oai:math")}
    return papers, state


def test_uninterrupted_sync_logs_in_after_a_403_and_spaces_arxiv_requests(service, tmp_path, monkeypatch):
    clock = FakeClock()
    service.clock = clock
    made = []

    def factory(source: str, section: dict) -> HttpClient:
        made.append(source)
        interval = arxiv.MIN_INTERVAL if source == "arxiv" else 0.0
        return HttpClient(min_interval=interval, clock=clock, sleep=clock.sleep)

    monkeypatch.setattr(sources_sync, "http_factory", factory)
    monkeypatch.delenv("OPENREVIEW_USERNAME", raising=False)
    monkeypatch.delenv("OPENREVIEW_PASSWORD", raising=False)
    d = tmp_path / "ref"
    d.mkdir()
    (d / "sources.toml").write_text(config(service.url))
    lines: list[str] = []
    with Store(d) as s:
        _, failures = sources_sync.sync_sources(s, echo=lines.append)
    assert failures == [
        "openreview NeurIPS.cc/2024/Conference: OpenReview refuses anonymous requests (403 ChallengeRequiredError); "
        "set OPENREVIEW_USERNAME and OPENREVIEW_PASSWORD to your OpenReview account (or username and password "
        "under [openreview] in sources.toml)."
    ]
    # one arXiv client for the whole run (OAI math, OAI cs x3 pages, RSS, the API for the papers
    # known only from the listing), 3 s apart throughout
    assert made.count("arxiv") == 1
    gaps = [b - a for a, b in zip(service.arxiv_times, service.arxiv_times[1:], strict=False)]
    assert len(service.arxiv_times) == 6 and min(gaps) >= 3.0

    monkeypatch.setenv("OPENREVIEW_USERNAME", "reader@example.org")
    monkeypatch.setenv("OPENREVIEW_PASSWORD", "secret")
    with Store(d) as s:
        _, failures = sources_sync.sync_sources(s, echo=lines.append, only=["openreview"], environ=os.environ)
        assert failures == []
        assert s.get("openreview:aVh9KRZdRk").extra["openreview"]["decision"] == "accepted"
        assert s.get("0806.4129").published == "2008-06-25"
        # read by the arXivRaw parser: version 1's day and the version list
        cs = s.get("cs/0001024")
        assert (cs.published, cs.updated, cs.extra["arxiv"]["version"]) == ("2000-01-25", "2009-11-30", "v2")
        assert s.get("2602.23229").extra["hf"]["upvotes"] == 10


def _run_sync(data_dir: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "PAPERDEX_HOME": str(data_dir),
        "OPENREVIEW_USERNAME": "reader@example.org",
        "OPENREVIEW_PASSWORD": "secret",
        "NO_PROXY": "127.0.0.1",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "paperdex", "sync"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def test_a_sync_killed_mid_harvest_resumes_to_the_same_store(service, tmp_path):
    dirs = {}
    for name in ("clean", "killed"):
        dirs[name] = tmp_path / name
        dirs[name].mkdir()
        (dirs[name] / "sources.toml").write_text(config(service.url, min_interval=0.01))

    clean = _run_sync(dirs["clean"])
    out = clean.communicate(timeout=120)[0].decode()
    assert clean.returncode == 0, out

    service.hold.set()  # the request for the last OAI page now hangs...
    victim = _run_sync(dirs["killed"])
    assert service.reached.wait(60), victim.communicate(timeout=5)[0].decode()
    victim.send_signal(signal.SIGKILL)  # ...and the process is killed while it waits
    victim.wait(10)
    service.hold.clear()
    service.release.set()
    with Store(dirs["killed"]) as s:
        assert json.loads(s.get_state("arxiv:oai:cs"))["token"] == P2  # stopped inside the harvest
        assert s.get("openreview:aVh9KRZdRk") is None

    service.log.clear()
    again = _run_sync(dirs["killed"])
    out = again.communicate(timeout=120)[0].decode()
    assert again.returncode == 0, out
    assert "/oai " + P2 in service.log  # resumed at the saved token, not from the start
    assert "/oai cs" not in service.log
    assert snapshot(dirs["killed"]) == snapshot(dirs["clean"])


def test_a_failed_hugging_face_day_arrives_on_the_next_sync_and_upvotes_follow(service, tmp_path, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(
        sources_sync,
        "http_factory",
        lambda source, section: HttpClient(min_interval=1.0, clock=clock, sleep=clock.sleep, max_retries=1),
    )
    d = tmp_path / "hf"
    d.mkdir()
    (d / "sources.toml").write_text(f'[huggingface]\ndays = 2\nrefresh_days = 1\nurl = "{service.url}/hf"\n')
    service.hf_down.add("2026-03-05")
    with Store(d) as s:
        _, failures = sources_sync.sync_sources(s, today=date(2026, 3, 6), echo=lambda x: None)
    assert len(failures) == 1 and failures[0].startswith("hf 2026-03-05: ")
    service.hf_down.clear()
    service.hf_upvotes = 99
    service.log.clear()
    with Store(d) as s:
        _, failures = sources_sync.sync_sources(s, today=date(2026, 3, 7), echo=lambda x: None)
        assert failures == []
        assert s.get("2602.23229").extra["hf"]["upvotes"] == 99  # the server's count, not the first read's
    assert "/hf 2026-03-05" in service.log  # the failed day, asked for again
    with Store(d) as s:
        assert json.loads(s.get_state("hf:read")) == ["2026-03-05", "2026-03-06", "2026-03-07"]

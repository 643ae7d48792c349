"""Offline plumbing for the source tests: a temporary store, a fake clock whose sleep only
advances time, and HTTP routers served through httpx's MockTransport (arXiv, Hugging Face)
or the `responses` library (OpenReview, whose client uses requests)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import responses

from paperdex.sources.http import HttpClient
from paperdex.store import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(*parts: str) -> Path:
    return FIXTURES.joinpath(*parts)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(round(s, 3))
        self.now += s


class Router:
    """Answers each request with the first route whose predicate matches; records requests."""

    def __init__(self) -> None:
        self.routes: list[tuple[Callable[[httpx.Request], bool], Callable[[httpx.Request], httpx.Response]]] = []
        self.requests: list[httpx.Request] = []

    def add(self, pred: Callable[[httpx.Request], bool], answer: object) -> Router:
        if isinstance(answer, httpx.Response):
            resp = answer
            self.routes.append((pred, lambda req: resp))
        elif isinstance(answer, list):  # answered in turn, the last one repeating
            queue = list(answer)

            def take(req: httpx.Request) -> httpx.Response:
                item = queue.pop(0) if len(queue) > 1 else queue[0]
                return item(req) if callable(item) else item

            self.routes.append((pred, take))
        else:
            self.routes.append((pred, answer))  # type: ignore[arg-type]
        return self

    def __call__(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        for pred, answer in self.routes:
            if pred(req):
                return answer(req)
        return httpx.Response(404, text=f"no route for {req.url}")


def xml(path: Path, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=path.read_bytes(), headers={"Content-Type": "text/xml"})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_http(clock: FakeClock) -> Callable[..., HttpClient]:
    def make(router: Router, **kw: object) -> HttpClient:
        kw.setdefault("min_interval", 3.0)
        return HttpClient(transport=httpx.MockTransport(router), clock=clock, sleep=clock.sleep, **kw)  # type: ignore[arg-type]

    return make


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "data")
    yield s
    s.close()


def param(req: httpx.Request, name: str) -> str | None:
    return req.url.params.get(name)


@pytest.fixture
def openreview_api():
    """OpenReview API v2 /notes served from the fixture (the `after` page is empty)."""
    doc = json.loads(fixture("openreview", "notes_icml2026.json").read_text())

    def notes(req):
        if "after=" in req.url:
            return (200, {"Content-Type": "application/json"}, json.dumps({"notes": []}))
        return (200, {"Content-Type": "application/json"}, json.dumps(doc))

    with responses.RequestsMock(assert_all_requests_are_fired=False) as rs:
        rs.add_callback("GET", "https://api2.openreview.net/notes", callback=notes)
        yield rs


CS_TOKEN = (
    "verb%3DListRecords%26metadataPrefix%3DarXivRaw%26set%3Dcs%26from%3D2025-04-01%26until%3D2026-06-30%26skip%3D3"
)


def real(*parts: str) -> Path:
    """A sample copied from shared/real-formats (its provenance is in its header)."""
    return FIXTURES.joinpath("real", *parts)


def oai_router(page2: Path | None = None) -> Router:
    page2 = page2 or fixture("arxiv", "oai_cs_page2.xml")
    r = Router()
    r.add(lambda q: param(q, "resumptionToken") == CS_TOKEN, xml(page2))
    r.add(
        lambda q: param(q, "verb") == "ListRecords" and param(q, "from") == "2026-07-01",
        xml(real("arxiv_oai", "err_noRecordsMatch.xml")),
    )
    r.add(
        lambda q: param(q, "verb") == "ListRecords" and param(q, "metadataPrefix") == "arXivRaw",
        xml(fixture("arxiv", "oai_cs_page1.xml")),
    )
    return r

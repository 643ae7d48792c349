"""What a request may cost (issue 26): cross-site requests refused before any work, JSON only as
JSON, bodies bounded while read and writes authenticated before their body, tokens never in a
URL, related work reading a bounded prefix within the time budget, budget stops as 503 pages,
and searchers handed out client by client."""

from __future__ import annotations

import json
import logging
import re
import threading

import pytest
from fastapi.testclient import TestClient

from paperdex import service
from paperdex.discover import recommend as R
from paperdex.index.embed import MiniLM
from paperdex.search import OverBudget, Searcher
from paperdex.service import FairGate
from paperdex.settings import Settings
from paperdex.web import limits
from paperdex.web.app import create_app
from paperdex.web.redact import RedactTokens
from tests.conftest import run_async

TEXT = (
    "We present a method for robotic grasping of deformable objects from a single camera view. "
    "A policy trained in simulation with domain randomisation transfers to a real robot arm. "
) * 40  # ~6,800 characters: a long pasted text

IMG = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"}
NO_CORS_POST = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "empty"}
OTHER_PORT = {"sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"}
LINK = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document"}


def test_another_sites_page_cannot_spend_the_searchers(client):
    """An <img> GET or a no-cors POST from another site is a 403 before any search; a link
    followed from another site (a navigation) still opens the search."""
    long_q = "/?q=" + "grasping+" * 80
    for url in ("/api/search?q=grasping", "/?q=grasping", "/search.json?q=robot", long_q, "/api/papers/x/similar"):
        r = client.get(url, headers=IMG)
        assert r.status_code == 403, url
        assert client.get(url, headers=OTHER_PORT).status_code == 403, url
    r = client.post(
        "/api/related", content=json.dumps({"text": TEXT}), headers={**NO_CORS_POST, "content-type": "text/plain"}
    )
    assert r.status_code == 403 and "other sites" in r.json()["error"]["message"]
    # a form on another site posting to the related-work page (a navigation, but a POST)
    assert client.post("/related", data={"text": TEXT}, headers=LINK).status_code == 403
    # browsers without Sec-Fetch-*: the Origin of a cross-origin POST
    assert client.post("/api/related", json={"text": TEXT}, headers={"origin": "http://evil.test"}).status_code == 403
    # what is still answered: a link from another site, this site's own requests, non-browsers, static files
    assert client.get("/?q=grasping", headers=LINK).status_code == 200
    same = {"sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty"}
    assert client.post("/api/related", json={"text": TEXT[:600], "k": 3}, headers=same).status_code == 200
    assert client.get("/api/search?q=grasping").status_code == 200
    assert client.get("/static/style.css", headers=IMG).status_code == 200


def test_json_endpoints_refuse_text_plain(client):
    """A no-cors POST can only be text/plain (no preflight): a JSON endpoint refuses it."""
    r = client.post("/api/related", content=json.dumps({"text": TEXT}), headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = client.post("/api/tags/x/papers", content=b'{"ids": ["1"]}', headers={"content-type": "text/plain"})
    assert r.status_code == 401  # the token first: no token, no reading of anything


class Body:
    """An ASGI receive() that hands out a body in chunks and counts what the app took."""

    def __init__(self, chunk: bytes, chunks: int) -> None:
        self.chunk, self.left, self.read = chunk, chunks, 0

    async def __call__(self):
        if self.left <= 0:
            return {"type": "http.request", "body": b"", "more_body": False}
        self.left -= 1
        self.read += len(self.chunk)
        return {"type": "http.request", "body": self.chunk, "more_body": self.left > 0}


def _call(app, method: str, path: str, headers: dict[str, str], body: Body) -> tuple[int, bytes]:
    out: dict = {"body": b""}

    async def send(message) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost"), *((k.encode(), v.encode()) for k, v in headers.items())],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    run_async(app(scope, body, send))
    return out["status"], out["body"]


def test_a_huge_body_is_refused_before_it_is_read(app):
    """200 MB announced: 413 without reading a byte; the same sent chunked (no length): cut off
    at the limit; a write without a token: 401 before its body is read."""
    chunk = b"x" * 65536
    huge = Body(chunk, 200 * 16)
    status, _ = _call(
        app, "POST", "/api/related", {"content-type": "application/json", "content-length": str(200 << 20)}, huge
    )
    assert status == 413 and huge.read == 0
    streamed = Body(chunk, 200 * 16)
    status, body = _call(app, "POST", "/api/related", {"content-type": "application/json"}, streamed)
    assert status == 413 and b"larger than" in body
    assert streamed.read <= limits.MAX_BODY + len(chunk)
    unauth = Body(b'{"ids": [' + b'"2501.00001",' * 40000 + b'"x"]}', 1)
    status, _ = _call(app, "POST", "/api/tags/x/papers", {"content-type": "application/json"}, unauth)
    assert status == 401 and unauth.read == 0
    status, _ = _call(app, "POST", "/library/tags/add", {"content-type": "application/x-www-form-urlencoded"}, unauth)
    assert status == 401 and unauth.read == 0


def test_a_token_in_the_url_is_refused_and_not_logged(client):
    tok = "pdx_" + "A" * 43
    r = client.get(f"/api/tags?token={tok}")
    assert r.status_code == 400 and "Authorization" in r.json()["error"]["message"]
    assert client.get(f"/api/search?q={tok}").status_code == 400
    rec = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d', None, None)
    rec.args = ("127.0.0.1:1", "GET", f"/api/tags?x=1&token={tok}&q={tok}", "1.1", 400)
    RedactTokens().filter(rec)
    assert tok not in rec.getMessage() and "x=1" in rec.getMessage()


def test_related_work_embeds_a_bounded_prefix(client, monkeypatch):
    """A 6,800-character paste: the model reads its opening EMBED_CHARS characters, as it
    reads documents, not the 5,000 the lexical side reads."""
    seen: list[int] = []
    real = MiniLM.embed_query  # the test store's model

    def spy(self, text):
        seen.append(len(text))
        return real(self, text)

    monkeypatch.setattr(MiniLM, "embed_query", spy)
    # an opening no other test pasted: the app is shared, and it embeds each text's prefix once
    text = "Bounded prefix. " + TEXT
    r = client.post("/api/related", json={"text": text, "k": 5})
    assert r.status_code == 200 and r.json()["hits"]
    assert seen and max(seen) <= R.EMBED_CHARS


def test_related_work_stops_at_the_time_budget(web_dir, monkeypatch):
    """A related-work request whose search runs past the budget is a 503, like a search (the
    model has a wait of its own, and a late model degrades to the words: test_related_degrade)."""

    def over(self, *a, **kw):
        raise OverBudget("the query ran out of its time budget")

    monkeypatch.setattr(Searcher, "search", over)
    c = TestClient(
        create_app(web_dir, pool_size=1, settings=Settings.from_env(data_dir=web_dir, time_budget=0.2)),
        base_url="http://localhost",
    )
    r = c.post("/api/related", json={"text": TEXT})
    assert r.status_code == 503 and "time budget" in r.json()["error"]["message"]
    page = c.get("/?q=" + "grasping " * 80)  # the search box with a pasted text
    assert page.status_code == 503


def test_a_search_over_budget_is_a_503_page(client, monkeypatch):
    def over(self, *a, **kw):
        raise OverBudget("the query ran out of its time budget")

    monkeypatch.setattr(Searcher, "search", over)
    r = client.get("/?q=grasping")
    assert r.status_code == 503 and "time budget" in r.text
    monkeypatch.undo()
    assert client.get("/?q=cat:").status_code == 400  # a query the user must fix stays a 400


def test_the_date_pattern_says_what_the_server_accepts(client):
    spec = client.get("/openapi.json").json()
    params = {p["name"]: p for p in spec["paths"]["/api/search"]["get"]["parameters"]}
    pattern = params["from"]["schema"].get("pattern") or params["from"]["schema"]["anyOf"][0]["pattern"]
    for bad in ("0000-00-00", "2025-00", "2025-13-01", "2025-01-32", "0000"):
        assert not re.match(pattern, bad), bad
        assert client.get(f"/api/search?from={bad}").status_code == 400, bad
    for good in ("2025", "2025-06", "2025-06-30", "2024-02-29"):
        assert re.match(pattern, good), good
        assert client.get(f"/api/search?from={good}").status_code == 200, good


def test_a_free_searcher_goes_to_the_client_that_holds_none():
    """One client holds the only searcher and queues three more requests; another client's
    request, queued after them, is served next."""
    gate = FairGate(1, max_waiting=3)
    assert gate.acquire("page", 1)
    order: list[str] = []
    lock = threading.Lock()

    def ask(client: str) -> None:
        assert gate.acquire(client, 30)
        with lock:
            order.append(client)
        gate.release(client)

    threads = []
    for who in ("page", "page", "page", "user"):
        t = threading.Thread(target=ask, args=(who,))
        t.start()
        threads.append(t)
        while gate.waiting < len(threads):  # queued, in this order
            threading.Event().wait(0.001)
    assert not gate.acquire("page", 0)  # a fourth waiting request of one client: refused at once
    gate.release("page")
    for t in threads:
        t.join(30)
    assert order[0] == "user", order
    assert order == ["user", "page", "page", "page"]


def test_each_request_is_counted_for_its_own_client(app):
    """The client a request borrows a searcher for is its address (set by the outer layer)."""
    seen: list[str] = []
    real = FairGate.acquire

    def spy(self, client, timeout):
        seen.append(client)
        return real(self, client, timeout)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FairGate, "acquire", spy)
        TestClient(app, base_url="http://localhost", client=("10.0.0.7", 1234)).get("/api/search?q=robot")
    assert seen == ["10.0.0.7"]
    assert service.CLIENT.get() == "local"


def test_related_work_waits_for_a_searcher_off_the_event_loop(web_dir):
    """A related-work request waiting for the one searcher must not hold the worker's event
    loop: a paper look-up is answered meanwhile (it waited behind it, then got a 503)."""
    app = create_app(web_dir, pool_size=1, settings=Settings.from_env(data_dir=web_dir, pool_wait=5))
    done: list[int] = []
    with TestClient(app, base_url="http://localhost") as c:  # one event loop for every request
        with app.state.pool.searcher():
            t = threading.Thread(target=lambda: done.append(c.post("/api/related", json={"text": TEXT}).status_code))
            t.start()
            while not app.state.pool.waiting and t.is_alive():  # it waits for the searcher
                threading.Event().wait(0.005)
            r = c.get("/api/days")
            assert r.status_code == 200 and not done
        t.join(60)
    assert done == [200]


def test_a_pasted_text_is_embedded_without_holding_a_searcher(web_dir, monkeypatch):
    """While the model embeds a pasted text, the one searcher serves other searches."""
    started, go = threading.Event(), threading.Event()
    real = MiniLM.embed_query

    def held(self, text):
        if len(text) > 200:  # the pasted text, not a search's query
            started.set()
            go.wait(60)
        return real(self, text)

    monkeypatch.setattr(MiniLM, "embed_query", held)
    app = create_app(web_dir, pool_size=1, settings=Settings.from_env(data_dir=web_dir, pool_wait=2, time_budget=30))
    done: list[int] = []
    with TestClient(app, base_url="http://localhost") as c:
        t = threading.Thread(target=lambda: done.append(c.post("/api/related", json={"text": TEXT}).status_code))
        t.start()
        assert started.wait(60)
        try:
            assert c.get("/api/search", params={"q": "robot grasping"}).status_code == 200
        finally:
            go.set()
        t.join(60)
    assert done == [200]


@pytest.mark.parametrize("query", ["key=pdx%255F" + "A" * 43, "pdx_" + "B" * 43 + "=1", "q=PDX_" + "C" * 43])
def test_a_token_in_any_encoding_is_refused(client, query):
    """The refusal reads a URL's secrets by the access log's rule (web/redact.py): a token
    encoded twice, pasted as a parameter's name or upper-cased was answered 200."""
    r = client.get(f"/api/tags?{query}")
    assert r.status_code == 400 and "Authorization" in r.json()["error"]["message"]

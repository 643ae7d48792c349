"""Issue 37: a lab behind one address. Refusals and latency of 16 users who share one address,
reaching `paperdex serve` through a reverse proxy that sets X-Forwarded-For, and directly.

    python bench/proxy_load.py [--data-dir DIR] [--clients 16] [--seconds 30] [--workers 2]
                               [--client-queue 16]

Starts `paperdex serve --forwarded-allow-ips 127.0.0.2` on DIR (default: the bundled sample,
loaded once into a temporary directory with `paperdex demo --no-serve`) and, in a process of
its own, a small reverse proxy (below) that connects to the server from 127.0.0.2 and adds
the address its client connected from to X-Forwarded-For, as nginx's
``proxy_add_x_forwarded_for`` does. Then, one case after the other:

* proxied: N users (each one keep-alive connection from 127.0.0.1, so one address: a lab
  behind NAT) searching back to back through the proxy; the server queues them under the
  address the proxy names, 127.0.0.1;
* direct: the same N users connecting to the server itself (127.0.0.1, no proxy).

During each, a bystander (another address, 127.0.0.3) searches back to back too: its p99
says whether the lab's queue holds up other users. A user that gets a 503 sends its next
search at once (no back-off): the worst case, as in the issue's measurement. Prints per
case the requests, the 503s (told apart: see Tally), other failures, the lab's p50/p99 (of
its 200s), the bystander's p99, the load average of the machine (it is shared; the figures
depend on it) and how the lab's connections to the server (the proxy's, when proxied) were
spread over its workers half way through. `--client-queue` (repeatable with commas: 4,16) is
passed to the server: 4 was the bound before issue 37.

Loopback only; at most 300 s a case and 64 users.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from load import QUERIES, percentile  # noqa: E402

from paperdex.web.serving import CLIENT_QUEUE  # noqa: E402

# Users behind one address that a server with the default --client-queue never refuses: each
# has one request out at a time, and even if every connection lands on one worker, one runs
# and CLIENT_QUEUE wait.
BOUND = CLIENT_QUEUE + 1
PROXY_SOURCE = "127.0.0.2"  # the proxy's address as the server sees it: the one it trusts
BYSTANDER = "127.0.0.3"
POOL_WAIT = 10.0  # the server's PAPERDEX_POOL_WAIT (the default): seconds a request waits for a searcher
HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the reverse proxy ------------------------------------------------------------------------


async def _proxy(port: int, upstream: str) -> None:
    """HTTP/1.1 keep-alive in front, a pool of keep-alive connections from PROXY_SOURCE behind;
    each request is sent on with X-Forwarded-For (the client's address appended) and
    X-Forwarded-Proto, and its answer passed back byte for byte (compressed bodies too)."""
    transport = httpx.AsyncHTTPTransport(local_address=PROXY_SOURCE, limits=httpx.Limits(max_connections=128))
    client = httpx.AsyncClient(base_url=upstream, transport=transport, timeout=60)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")[0]
        try:
            while line := await reader.readline():
                method, target, _ = line.decode("latin-1").split(" ", 2)
                headers: list[tuple[str, str]] = []
                while (h := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    k, _, v = h.decode("latin-1").partition(":")
                    headers.append((k.strip(), v.strip()))
                length = int(next((v for k, v in headers if k.lower() == "content-length"), "0"))
                body = await reader.readexactly(length) if length else b""
                prior = [v for k, v in headers if k.lower() == "x-forwarded-for"]
                sent = [(k, v) for k, v in headers if k.lower() not in HOP and k.lower() != "x-forwarded-for"]
                sent += [("X-Forwarded-For", ", ".join([*prior, peer])), ("X-Forwarded-Proto", "http")]
                async with client.stream(method, target, headers=sent, content=body) as r:
                    raw = b"".join([c async for c in r.aiter_raw()])
                head = [f"HTTP/1.1 {r.status_code} {r.reason_phrase}"]
                head += [f"{k}: {v}" for k, v in r.headers.multi_items() if k.lower() not in HOP | {"content-length"}]
                head += [f"content-length: {len(raw)}", "", ""]
                writer.write("\r\n".join(head).encode("latin-1") + raw)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def run_proxy(port: int, upstream: str) -> None:  # in a process of its own: its own GIL
    asyncio.run(_proxy(port, upstream))


# --- the users ------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one group of users got. A 503 is one of three things, told apart here:
    *refused*, at once, because the client's queue was full (the bound under test); *timed
    out*, after waiting PAPERDEX_POOL_WAIT (10 s) for a searcher; *over budget*, a search that
    ran past its time budget (2 s). The last two mean the machine is short of CPU, not that
    the client was turned away for being many."""

    ok: list[float] = field(default_factory=list)  # seconds, 200s
    refused: int = 0
    timed_out: int = 0
    over_budget: int = 0
    other: dict[str, int] = field(default_factory=dict)

    def add(self, status: str, seconds: float, text: str = "") -> None:
        if status == "200":
            self.ok.append(seconds)
        elif status == "503" and "time budget" in text:
            self.over_budget += 1
        elif status == "503":
            if seconds < 0.9 * POOL_WAIT:
                self.refused += 1
            else:
                self.timed_out += 1
        else:
            self.other[status] = self.other.get(status, 0) + 1

    @property
    def total(self) -> int:
        return len(self.ok) + self.refused + self.timed_out + self.over_budget + sum(self.other.values())

    def p(self, q: float) -> float:
        return percentile(sorted(self.ok), q) * 1000


async def _user(base: str, n: int, stop: float, tally: Tally, source: str | None = None) -> None:
    transport = httpx.AsyncHTTPTransport(local_address=source) if source else None
    async with httpx.AsyncClient(base_url=base, transport=transport, timeout=60) as c:
        while time.perf_counter() < stop:
            q = QUERIES[n % len(QUERIES)]
            n += 1
            t = time.perf_counter()
            try:
                r = await c.get("/api/search", params={"q": q})
                status, text = str(r.status_code), r.text
            except httpx.HTTPError as e:
                status, text = type(e).__name__, ""
            tally.add(status, time.perf_counter() - t, text)


def spread(port: int, peer: str) -> str:
    """The server's established connections from `peer` per worker process ('12/4'): the
    kernel hands each connection to one worker, and a kept-alive one stays there."""
    try:
        out = subprocess.run(
            ["ss", "-tnpH", "state", "established", f"( sport = :{port} )"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    per: Counter[str] = Counter()
    for line in out.splitlines():
        fields = line.split()
        pid = re.search(r"pid=(\d+)", line)
        if len(fields) >= 4 and pid and fields[3].rsplit(":", 1)[0] == peer:
            per[pid.group(1)] += 1
    return "/".join(str(n) for _, n in per.most_common()) or "?"


async def _case(base: str, server: str, port: int, peer: str, users: int, seconds: float) -> tuple[Tally, Tally, str]:
    lab, bystander = Tally(), Tally()
    stop = time.perf_counter() + seconds

    async def look() -> str:
        await asyncio.sleep(seconds / 2)
        return await asyncio.get_running_loop().run_in_executor(None, spread, port, peer)

    seen, *_ = await asyncio.gather(
        look(), *(_user(base, i, stop, lab) for i in range(users)), _user(server, 7, stop, bystander, BYSTANDER)
    )
    return lab, bystander, seen


# --- the server -----------------------------------------------------------------------------


def sample_store() -> Path:
    d = Path(tempfile.gettempdir()) / "paperdex-bench-sample"
    if not (d / "paperdex.db").exists():
        subprocess.run([sys.executable, "-m", "paperdex", "--data-dir", str(d), "demo", "--no-serve"], check=True)
    return d


def start_server(data_dir: Path, port: int, workers: int, queue: int | None) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(data_dir), "serve", "--port", str(port)]
    cmd += ["--workers", str(workers), "--log-level", "warning", "--forwarded-allow-ips", PROXY_SOURCE]
    if queue is not None:
        cmd += ["--client-queue", str(queue)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server exited ({proc.returncode})")
        if answers(f"http://127.0.0.1:{port}", 4):  # every worker warm
            return proc
        time.sleep(0.5)
    proc.kill()
    sys.exit("the server did not start in 180 s")


def answers(base: str, times: int = 1) -> bool:
    """A search answered `times` times, each on a fresh connection (so every worker is warm)."""
    try:
        return all(httpx.get(f"{base}/api/search?q=warm", timeout=30).status_code == 200 for _ in range(times))
    except httpx.HTTPError:
        return False


def row(case: str, queue: int | None, n: int, lab: Tally, by: Tally, load0: float, load1: float) -> str:
    shown = "default" if queue is None else str(queue)
    line = (
        f"{case:<9} {shown:>5} {n:>5} {lab.total:>8} {lab.refused:>7} {lab.timed_out:>9} {lab.over_budget:>11} "
        f"{sum(lab.other.values()):>5} {lab.p(50):>7.0f} {lab.p(99):>7.0f} {by.p(99):>17.0f}"
        f"  {load0:.1f} -> {load1:.1f}"
    )
    if lab.other:
        line += f"  {lab.other}"
    if len(by.ok) < by.total:
        line += f"  bystander: {by.total - len(by.ok)} of {by.total} not 200"
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, help="A store (default: the bundled sample in a temporary directory).")
    ap.add_argument("--clients", default="16", help="Users behind the one address (commas: several runs).")
    ap.add_argument("--seconds", type=float, default=30.0, help="Length of each case.")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--client-queue", default="", help="--client-queue of the server (commas: several servers).")
    a = ap.parse_args()
    counts = [int(x) for x in a.clients.split(",")]
    queues: list[int | None] = [int(x) for x in a.client_queue.split(",")] if a.client_queue else [None]
    if not 0 < a.seconds <= 300 or not all(0 < n <= 64 for n in counts):
        sys.exit("--seconds must be in (0, 300] and --clients in (0, 64]")
    data_dir = a.data_dir or sample_store()
    print(f"{os.cpu_count()} cores; store {data_dir}; {a.workers} workers; {a.seconds:g} s a case")
    print(
        "case      queue users requests refused timed-out over-budget other  p50 ms  p99 ms  bystander p99 ms"
        "  load avg (1 min)"
    )
    worst_below = 0
    for queue in queues:
        port, proxy_port = free_port(), free_port()
        server = start_server(data_dir, port, a.workers, queue)
        upstream = f"http://127.0.0.1:{port}"
        proxy = multiprocessing.get_context("spawn").Process(target=run_proxy, args=(proxy_port, upstream), daemon=True)
        proxy.start()
        try:
            while not answers(f"http://127.0.0.1:{proxy_port}"):
                time.sleep(0.2)
            for n in counts:
                for case, base, peer in (
                    ("proxied", f"http://127.0.0.1:{proxy_port}", PROXY_SOURCE),
                    ("direct", upstream, "127.0.0.1"),
                ):
                    load0 = os.getloadavg()[0]
                    lab, by, seen = asyncio.run(_case(base, upstream, port, peer, n, a.seconds))
                    load1 = os.getloadavg()[0]
                    print(row(case, queue, n, lab, by, load0, load1) + f"  connections per worker {seen}", flush=True)
                    if queue in (None, CLIENT_QUEUE) and n <= BOUND:
                        worst_below = max(worst_below, lab.refused)
        finally:
            proxy.kill()
            server.terminate()
            server.wait(30)
    if {None, CLIENT_QUEUE} & set(queues) and min(counts) <= BOUND:
        print(f"refusals with at most {BOUND} users behind one address (the documented bound): {worst_below}")


if __name__ == "__main__":
    main()

"""Figures for issues 26 and 37: normal searches while related work and a cross-site page load
the server, what share of the related-work requests is answered (issue 37: >= 90% with four
clients on the default model, searches p99 <= 1 s), and what a 200 MB body costs a worker.

    python bench/related_load.py --data-dir DIR [--seconds 60] [--workers 2] [--no-page]
        [--distinct] [--mcp N] [--no-bodies]

Starts `paperdex serve` on DIR (a store with vectors; the default model, multilingual-e5-small,
is the expensive case) and runs, at once:

* four related-work clients (from 127.0.0.2), each posting 5,000-character texts (corpus
  abstracts run together) to /api/related back to back, as a script pasting long texts would:
  each client its own text again and again (a page and its retries), or with --distinct a new
  text every request (no request finds its text's vector made already: the model's worst case);
  an answer found by the words alone, because the model did not reach the text in time
  (service.RELATED_EMBED_WAIT), is counted apart;
* with --mcp N, a `paperdex mcp` server on stdio (its own process, as an agent runs it) asked
  for related_work N times, one after another, while the rest runs;
* a page on another origin (http://127.0.0.1:OTHER/, served by this script) open in headless
  Chromium, which fires <img> GETs of long-text searches and no-cors text/plain POSTs to
  /api/related at the server, as fast as the browser sends them;
* one user (from 127.0.0.1) searching the load queries (../shared/data/load-queries.txt) one
  after another: the latency of each search and every answer that is not a 200.

It prints the searches' p50/p95/p99/max and refusals, alone first and then under that load,
what the related-work clients and the cross-site page got, and the workers' RSS before and
after 200 MB bodies (announced with Content-Length, and sent chunked without one) posted to a
write endpoint without a token and to /api/related.
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import itertools
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CHROMIUM = os.environ.get("PAPERDEX_CHROMIUM") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> float:
    """CPU seconds the whole machine spent busy so far (all cores)."""
    v = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def worker_pids(parent: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(parent)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()] or [parent]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def texts(n: int) -> list[str]:
    """n pasted texts of 5,000 characters: consecutive corpus abstracts run together."""
    abstracts = []
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt") as f:
        for i, line in enumerate(f):
            if i % 7 == 0:
                abstracts.append(json.loads(line)["abstract"])
            if len(abstracts) >= n * 6:
                break
    out = []
    for i in range(n):
        t = " ".join(abstracts[i * 6 : i * 6 + 6])
        out.append((t * 3)[:5000])
    return out


WORDS_ONLY = "words alone"  # in the notice of an answer the model did not reach in time


class Texts:
    """The texts the related-work clients paste: each client its own, again and again, or
    (distinct) a new one every request, shifted through the corpus so its opening (the
    prefix the model reads) is never one embedded before."""

    def __init__(self, n: int, distinct: bool) -> None:
        self.base, self.distinct = texts(max(n, 8) if distinct else n), distinct
        self._n = itertools.count()

    def next(self, client: int) -> str:
        if not self.distinct:
            return self.base[client]
        i = next(self._n)
        t = self.base[i % len(self.base)]
        cut = (i * 37) % 2000  # words moved from the front: a new opening each time
        return (t[cut:] + " " + t[:cut])[:5000] + f" (request {i})"


class Probe:
    """One user searching, one query after another."""

    def __init__(self, base: str, queries: list[str]) -> None:
        self.base, self.queries = base, queries
        self.times: list[float] = []
        self.status: Counter[int] = Counter()
        self.errors: Counter[str] = Counter()

    def run(self, stop: threading.Event, pause: float = 0.1) -> None:
        with httpx.Client(timeout=60) as c:
            i = 0
            while not stop.is_set():
                q = self.queries[i % len(self.queries)]
                i += 1
                t = time.perf_counter()
                try:
                    r = c.get(f"{self.base}/api/search", params={"q": q, "per_page": 20})
                    code = r.status_code
                    if code != 200:
                        self.errors[r.json().get("error", {}).get("message", "")[:70]] += 1
                except httpx.HTTPError:
                    code = 0
                self.times.append(time.perf_counter() - t)
                self.status[code] += 1
                stop.wait(pause)

    def report(self, label: str) -> None:
        ms = [x * 1000 for x in self.times]
        refused = sum(n for c, n in self.status.items() if c != 200)
        print(
            f"{label}: {len(ms)} searches, p50 {pct(ms, 0.5):.0f} ms, p95 {pct(ms, 0.95):.0f} ms, "
            f"p99 {pct(ms, 0.99):.0f} ms, max {max(ms):.0f} ms; not 200: {refused} {dict(self.status)}"
        )
        for msg, n in self.errors.items():
            print(f"  {n} x {msg}")


def related_client(
    base: str, client: int, bodies: Texts, stop: threading.Event, out: list, codes: Counter, errors: Counter
) -> None:
    """Related-work requests back to back; codes counts 200 (with the model), "200 words"
    (found by the words alone) and every other status."""
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(timeout=120, transport=transport) as c:
        while not stop.is_set():
            t = time.perf_counter()
            try:
                r = c.post(f"{base}/api/related", json={"text": bodies.next(client), "k": 20})
                code: int | str = r.status_code
                if code == 200 and any(WORDS_ONLY in n for n in r.json().get("notices", [])):
                    code = "200 words"
                elif code != 200:
                    errors[r.json().get("error", {}).get("message", "")[:90]] += 1
            except (httpx.HTTPError, ValueError):
                code = 0
            out.append(time.perf_counter() - t)
            codes[code] += 1


def mcp_client(data_dir: Path, bodies: Texts, n: int, out: list) -> None:
    """`paperdex mcp` on stdio, asked for related_work n times one after another: (seconds,
    "ok" / "ok words" / the error) of each."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "paperdex", "--data-dir", str(data_dir), "mcp"], env=dict(os.environ)
        )
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            for i in range(n):
                t = time.perf_counter()
                res = await session.call_tool("related_work", {"text": bodies.next(i % 4), "k": 10})
                body = " ".join(getattr(c, "text", "") for c in res.content)
                failed = getattr(res, "is_error", None) or getattr(res, "isError", False)
                what = body[:90] if failed else ("ok words" if WORDS_ONLY in body else "ok")
                out.append((time.perf_counter() - t, what))

    asyncio.run(go())


ATTACK = """<!doctype html><html><body><h1>another site</h1><script>
const target = %(target)s, text = %(text)s;
let fired = 0;
function fire() {
  for (let i = 0; i < 4; i++) {
    const img = new Image();
    img.src = target + "/?q=" + encodeURIComponent(text.slice(i * 50, i * 50 + 900)) + "&n=" + (fired++);
    fetch(target + "/api/related", {method: "POST", mode: "no-cors", body: JSON.stringify({text: text}),
                                    headers: {"Content-Type": "text/plain"}}).catch(() => {});
    const img2 = new Image();
    img2.src = target + "/api/search?q=" + encodeURIComponent("diffusion model " + fired);
  }
  document.title = String(fired);
  setTimeout(fire, 50);
}
fire();
</script></body></html>"""


def attacker_site(port: int, target: str, text: str) -> http.server.ThreadingHTTPServer:
    page = (ATTACK % {"target": json.dumps(target), "text": json.dumps(text)}).encode()

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *a) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def cross_site_page(url: str, stop: threading.Event, seen: Counter, nice: int) -> None:
    """Headless Chromium on the other origin's page; counts the server's answers to it. The
    attacker's browser runs on its visitor's machine, not the server's; here it shares the
    server's cores, so it runs at niceness `nice` (--browser-nice) to take CPU the server
    does not want."""
    import tempfile

    from playwright.sync_api import sync_playwright

    exe = CHROMIUM
    if nice:
        wrapper = Path(tempfile.mkdtemp()) / "chromium"
        wrapper.write_text(f'#!/bin/sh\nexec nice -n {nice} {CHROMIUM} "$@"\n')
        wrapper.chmod(0o755)
        exe = str(wrapper)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"], headless=True)
        page = b.new_page()
        page.on("response", lambda r: seen.update([r.status]) if "/static" not in r.url and r.url != url else None)
        page.goto(url, wait_until="commit")  # its images never stop loading
        while not stop.is_set():
            page.wait_for_timeout(200)
        b.close()


def big_bodies(base: str, pids: list[int]) -> None:
    """200 MB bodies to a write endpoint without a token and to /api/related: announced with
    Content-Length, and streamed chunked; the workers' RSS before and after."""
    before = {p: rss_mb(p) for p in pids}
    chunk = b"[" + b'"2501.00001",' * 5000  # ~70 KB of a plausible JSON body
    total = 200 << 20

    def stream():
        sent = 0
        while sent < total:
            yield chunk
            sent += len(chunk)

    results = []
    for path in ("/api/tags/x/papers", "/api/related"):
        for how in ("content-length", "chunked"):
            headers = {"content-type": "application/json"}
            if how == "content-length":
                headers["content-length"] = str(total)
            t = time.perf_counter()
            try:
                r = httpx.post(f"{base}{path}", content=stream(), headers=headers, timeout=120)
                code = r.status_code
            except httpx.HTTPError as e:  # the server answered 413 and closed while we sent
                code = f"closed ({type(e).__name__})"
            results.append((path, how, code, time.perf_counter() - t))
    after = {p: rss_mb(p) for p in pids}
    for path, how, code, took in results:
        print(f"200 MB body to {path} ({how}): {code} in {took:.2f} s")
    for p in pids:
        print(f"worker {p}: RSS {before[p]:.0f} MB -> {after[p]:.0f} MB ({after[p] - before[p]:+.1f} MB)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True, type=Path)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--related", type=int, default=4)
    ap.add_argument("--no-page", action="store_true", help="without the cross-site page")
    ap.add_argument("--browser-nice", type=int, default=19, help="the cross-site page's browser's niceness")
    ap.add_argument("--distinct", action="store_true", help="a new text every related-work request")
    ap.add_argument("--mcp", type=int, default=0, help="related_work calls through `paperdex mcp` meanwhile")
    ap.add_argument("--no-bodies", action="store_true", help="without the 200 MB bodies at the end")
    args = ap.parse_args()
    port, other = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(ROOT / "bench" / "out" / "related_load.serve.log", "wb")  # noqa: SIM115
    cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(args.data_dir), "serve", "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--workers", str(args.workers), "--log-level", "warning"], stdout=log, stderr=log)
    try:
        end = time.monotonic() + 300
        while True:
            try:
                if (
                    httpx.get(f"{base}/api/days", timeout=2).status_code == 200
                    and "serving" in Path(log.name).read_text()
                ):
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < end, Path(log.name).read_text()[-2000:]
            time.sleep(0.5)
        pids = worker_pids(proc.pid)
        queries = [q for q in (SHARED / "load-queries.txt").read_text().splitlines() if q.strip()]
        random.Random(26).shuffle(queries)
        bodies = Texts(args.related, args.distinct)
        print(f"server: {args.workers} workers, store {args.data_dir}, budget default; {os.cpu_count()} cores")

        alone = Probe(base, queries)
        stop = threading.Event()
        t = threading.Thread(target=alone.run, args=(stop,))
        t.start()
        time.sleep(min(20.0, args.seconds / 3))
        stop.set()
        t.join()
        alone.report("searches alone")

        stop = threading.Event()
        rel_times: list[float] = []
        rel_codes: Counter[int | str] = Counter()
        rel_errors: Counter[str] = Counter()
        page_codes: Counter[int] = Counter()
        site = attacker_site(other, base, bodies.base[0])
        threads = [
            threading.Thread(target=related_client, args=(base, i, bodies, stop, rel_times, rel_codes, rel_errors))
            for i in range(args.related)
        ]
        mcp_out: list[tuple[float, str]] = []
        if args.mcp:
            threads.append(threading.Thread(target=mcp_client, args=(args.data_dir, bodies, args.mcp, mcp_out)))
        if not args.no_page:
            page = f"http://127.0.0.1:{other}/"
            threads.append(threading.Thread(target=cross_site_page, args=(page, stop, page_codes, args.browser_nice)))
        for th in threads:
            th.start()
        time.sleep(3)  # the load running before the user starts
        loaded = Probe(base, queries)
        probe = threading.Thread(target=loaded.run, args=(stop,))
        cpu0, busy0, t0 = sum(cpu_seconds(p) for p in pids), machine_busy(), time.monotonic()
        probe.start()
        time.sleep(args.seconds)
        cpu1, busy1, t1 = sum(cpu_seconds(p) for p in pids), machine_busy(), time.monotonic()
        stop.set()
        for th in [*threads, probe]:
            th.join(180)
        site.shutdown()
        page_label = "" if args.no_page else " and a cross-site page"
        loaded.report(f"searches with {args.related} related-work clients{page_label}")
        ms = [x * 1000 for x in rel_times]
        answered = rel_codes[200] + rel_codes["200 words"]
        kind = "a new text every request" if args.distinct else "each client its own text"
        print(
            f"related work ({args.related} clients, 5,000-character texts, {kind}): {len(ms)} requests "
            f"{dict(rel_codes)}: {answered} answered ({100 * answered / max(1, len(ms)):.1f}%; "
            f"{rel_codes['200 words']} by the words alone), p50 {pct(ms, 0.5):.0f} ms, p99 {pct(ms, 0.99):.0f} ms"
        )
        for msg, n in rel_errors.items():
            print(f"  {n} x {msg}")
        if args.mcp:
            ok = sum(1 for _, w in mcp_out if w.startswith("ok"))
            print(
                f"MCP related_work: {ok} of {len(mcp_out)} answered ({sum(w == 'ok words' for _, w in mcp_out)} by "
                f"the words alone), seconds {[round(t, 1) for t, _ in mcp_out]}"
            )
            for _, w in mcp_out:
                if not w.startswith("ok"):
                    print(f"  {w}")
        p99 = pct([x * 1000 for x in loaded.times], 0.99)
        print(
            f"issue 37's bar: >= 90% of related work answered: {100 * answered / max(1, len(ms)):.1f}%; "
            f"searches p99 <= 1,000 ms: {p99:.0f} ms"
        )
        print(f"cross-site page's requests, answers by status: {dict(page_codes)}")
        print(
            f"CPU meanwhile ({os.cpu_count()} cores x {t1 - t0:.0f} s): the server's workers "
            f"{cpu1 - cpu0:.0f} s, the whole machine {busy1 - busy0:.0f} s busy"
        )
        if not args.no_bodies:
            big_bodies(base, pids)
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()

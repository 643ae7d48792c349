"""What a page costs a reader: bytes transferred and layout shift, in a real Chromium.

Starts `paperdex serve` over a data directory (one worker, a free loopback port) and opens
each page in Debian's headless Chromium (Playwright, no download) with an empty cache: sums
the bytes sent over the wire for the page and everything it loads (the Network domain's
encodedDataLength: compressed size plus headers) and the cumulative layout shift the page
reports (PerformanceObserver "layout-shift", shifts right after input excluded), after load
and one second of idle so KaTeX's typesetting and its fonts are counted.

    .venv/bin/python bench/page_weight.py [DATA_DIR] [--query Q ...] [--page PATH ...]

Targets (issue 23): a results page ≤ 150 KB transferred, layout shift ≤ 0.05.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from urllib.parse import quote

import httpx

CHROMIUM = os.environ.get("PAPERDEX_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
QUERIES = [
    "diffusion models for image editing",
    "weight decay",
    "大语言模型 推理",
    "$\\beta$-VAE disentanglement",
    "regret bound linear bandits",
    "convergence rate stochastic gradient",
]
CLS_JS = """
() => new Promise(done => {
  let cls = 0;
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) if (!e.hadRecentInput) cls += e.value;
  }).observe({type: "layout-shift", buffered: true});
  setTimeout(() => done(cls), 1000);
})
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(data_dir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "paperdex", "--data-dir", data_dir, "serve", "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--workers", "1", "--log-level", "warning"], stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(base + "/static/style.css", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def measure(browser, url: str, width: int) -> tuple[float, float, int, float]:
    """(KB transferred, CLS, requests, share of the math needing KaTeX that it typeset) for one cold
    page load."""
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    sizes: dict[str, float] = {}
    cdp.on("Network.loadingFinished", lambda e: sizes.__setitem__(e["requestId"], e["encodedDataLength"]))
    page.goto(url, wait_until="load")
    cls = page.evaluate(CLS_JS)
    maths = page.evaluate(
        "() => [document.querySelectorAll('.math[data-tex]').length, document.querySelectorAll('.math.typeset').length]"
    )
    page.wait_for_timeout(200)
    ctx.close()
    typeset = maths[1] / maths[0] if maths[0] else 1.0
    return sum(sizes.values()) / 1024, cls, len(sizes), typeset


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", nargs="?", default="bench/out/s63k")
    ap.add_argument("--query", action="append", help="queries to measure (default: four, one with math)")
    ap.add_argument("--page", action="append", default=[], help="another path to measure, e.g. /paper/ID")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    proc, base = serve(args.data_dir)
    try:
        pages = [("home", "/"), ("daily", "/daily"), ("daily compact", "/daily?layout=compact")]
        pages += [(f"search {q!r}", "/?q=" + quote(q)) for q in (args.query or QUERIES)]
        pages += [(path, path) for path in args.page]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            httpx.get(base + "/?q=warm", timeout=120)  # the first search loads the models
            print(f"{'page':<44} {'width':>5} {'KB':>7} {'CLS':>6} {'req':>4} {'typeset':>8}")
            for name, path in pages:
                for width in (1280, 390):
                    kb, cls, n, typeset = measure(browser, base + path, width)
                    print(f"{name[:44]:<44} {width:>5} {kb:7.1f} {cls:6.3f} {n:>4} {typeset:8.0%}")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()

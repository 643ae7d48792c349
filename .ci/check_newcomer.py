"""What a new user does first, checked from outside: a served paperdex and its command line.

Run by .ci/newcomer with the Python of the install under test (so it needs only the standard
library): it waits for `/`, then searches in English and in Chinese and expects hits, opens the
first hit's page, `/daily` and `/healthz`, and runs `paperdex search` and `paperdex show` as a
user types them. Every failure is one line saying what a user would have seen; the exit status
is the number of failed checks.

    python check_newcomer.py --url http://127.0.0.1:8731 --paperdex .venv/bin/paperdex \
        --data-dir .data/demo --wait 600
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

ENGLISH = "diffusion models for image editing"
CHINESE = "扩散模型 图像编辑"


def get(url: str, timeout: float = 60) -> tuple[int, str]:
    """Status and body of a GET (an HTTP error is a status, not an exception)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def running(pid: int | None) -> bool:
    """Whether process `pid` (the server's) is still alive; None: not watched."""
    if pid is None:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(url: str, seconds: float, pid: int | None) -> float:
    """Seconds until `url` answered 200; SystemExit after `seconds`, or as soon as the
    server's process `pid` has exited (a failed start is not waited out)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if not running(pid):
            sys.exit(f"FAIL: the server's process exited before {url} answered")
        try:
            if get(url, timeout=5)[0] == 200:
                return time.monotonic() - t0
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(1)
    sys.exit(f"FAIL: {url} did not answer within {seconds:.0f} s")


class Checks:
    """Runs named checks, printing one line each, and counts the failures."""

    def __init__(self) -> None:
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str) -> bool:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}", flush=True)
        self.failed += not ok
        return ok


def web_checks(c: Checks, base: str) -> str | None:
    """Both searches, a paper page, the daily feed and the health check; the first English hit's id."""
    first = None
    for label, q in (("English search", ENGLISH), ("Chinese search", CHINESE)):
        status, body = get(f"{base}/search.json?" + urllib.parse.urlencode({"q": q}))
        hits = json.loads(body).get("hits", []) if status == 200 else []
        first_id = f", first {hits[0]['id']}" if hits else ""
        c.check(label, bool(hits), f"{q!r}: HTTP {status}, {len(hits)} hits{first_id}")
        status, html = get(f"{base}/?" + urllib.parse.urlencode({"q": q}))
        c.check(f"{label} page", status == 200 and 'class="card"' in html, f"HTTP {status}")
        first = first or (hits[0]["id"] if hits else None)
    if first:
        status, html = get(f"{base}/paper/{first}")
        c.check("paper page", status == 200 and first in html, f"/paper/{first}: HTTP {status}")
    status, html = get(f"{base}/daily")
    c.check("daily", status == 200 and 'class="card"' in html, f"HTTP {status}")
    status, body = get(f"{base}/healthz")
    c.check("healthz", status == 200 and json.loads(body).get("ok") is True, f"HTTP {status} {body[:200]}")
    for asset in ("/static/style.css", "/static/app.js"):
        status, _ = get(base + asset)
        c.check(f"static {asset}", status == 200, f"HTTP {status}")
    return first


def cli_checks(c: Checks, paperdex: str, data_dir: str, pid: str | None) -> None:
    """`paperdex search` (English and Chinese, the default model's query encoder) and `paperdex show`."""
    for q in (ENGLISH, CHINESE):
        r = subprocess.run(
            [paperdex, "--data-dir", data_dir, "search", q, "--json"], capture_output=True, text=True, timeout=300
        )
        found = json.loads(r.stdout) if r.returncode == 0 else []
        hits = found.get("hits", []) if isinstance(found, dict) else []  # `search --json`: /api/search's object
        said = r.stderr.strip()[-300:]
        c.check(f"paperdex search {q!r}", bool(hits), f"exit {r.returncode}, {len(hits)} hits {said}")
        if "Traceback" in r.stderr:
            c.check("no traceback", False, r.stderr[-500:])
    if pid:
        r = subprocess.run([paperdex, "--data-dir", data_dir, "show", pid], capture_output=True, text=True, timeout=120)
        c.check(f"paperdex show {pid}", r.returncode == 0 and pid in r.stdout, f"exit {r.returncode} {r.stderr[-300:]}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--paperdex", required=True, help="the installed paperdex command")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--wait", type=float, default=600)
    ap.add_argument("--pid", type=int, help="the server's process: stop waiting when it exits")
    args = ap.parse_args()
    waited = wait_for(args.url + "/", args.wait, args.pid)
    print(f"ok   / answered after {waited:.0f} s of waiting", flush=True)
    c = Checks()
    pid = web_checks(c, args.url)
    cli_checks(c, args.paperdex, args.data_dir, pid)
    print(f"{c.failed} check(s) failed" if c.failed else "every newcomer check passed", flush=True)
    return min(c.failed, 100)


if __name__ == "__main__":
    sys.exit(main())

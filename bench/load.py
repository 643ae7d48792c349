"""Load test for `/api/search` on loopback: a fixed number of concurrent clients send search
requests, rotating through real queries, for a fixed time; prints requests/s, latency
percentiles and errors.

    paperdex serve --port 8000 &            # or any running paperdex server on this machine
    python bench/load.py --url http://127.0.0.1:8000 --duration 30 --concurrency 8 \
        --queries ../shared/data/load-queries.txt      # each query once per cycle; default: 16 built in

Bounded by design: loopback addresses only, at most 300 s and 64 clients.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import socket
import statistics
import sys
import time
from urllib.parse import urlparse

import httpx

QUERIES = [
    "weight decay",
    "diffusion models for video generation",
    "vision language model hallucination",
    'ti:"reinforcement learning" robot',
    "retrieval augmented generation evaluation",
    "3D gaussian splatting",
    "large language model reasoning cat:cs.CL",
    "sparse attention long context",
    "扩散模型 视频生成",
    "mixture of experts date:2026",
    "graph neural networks",
    "speculative decoding",
    "medical image segmentation",
    "autonomous driving planning",
    "大语言模型 推理",
    "contrastive learning -image",
]


def _loopback_only(url: str) -> None:
    host = urlparse(url).hostname or ""
    for info in socket.getaddrinfo(host, None):
        if not ipaddress.ip_address(info[4][0]).is_loopback:
            sys.exit(f"refusing {host}: this load test only targets loopback addresses")


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


async def run(url: str, duration: float, concurrency: int, per_page: int, queries: list[str] | None = None) -> dict:
    queries = queries or QUERIES
    latencies: list[float] = []
    errors: dict[str, int] = {}
    stop = time.perf_counter() + duration
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:
        # one request to warm the server (model and index load) outside the measurement
        (await client.get("/api/search", params={"q": "warm up"})).raise_for_status()

        async def worker(i: int) -> None:
            n = i
            while time.perf_counter() < stop:
                q = queries[n % len(queries)]
                n += concurrency
                t0 = time.perf_counter()
                try:
                    r = await client.get("/api/search", params={"q": q, "per_page": per_page})
                    if r.status_code != 200:
                        errors[str(r.status_code)] = errors.get(str(r.status_code), 0) + 1
                        continue
                except httpx.HTTPError as e:
                    errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
                    continue
                latencies.append(time.perf_counter() - t0)

        t_start = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - t_start

    lat = sorted(latencies)
    ms = [x * 1000 for x in lat]
    return {
        "url": url + "/api/search",
        "duration_s": round(elapsed, 1),
        "concurrency": concurrency,
        "requests": len(lat),
        "errors": errors,
        "requests_per_s": round(len(lat) / elapsed, 1),
        "latency_ms": {
            "mean": round(statistics.fmean(ms), 1) if ms else None,
            "p50": round(percentile(ms, 50), 1),
            "p90": round(percentile(ms, 90), 1),
            "p99": round(percentile(ms, 99), 1),
            "max": round(ms[-1], 1) if ms else None,
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--per-page", type=int, default=20)
    ap.add_argument("--queries", help="A file of queries, one a line (the clients together send each once per cycle).")
    ap.add_argument("--json", action="store_true", help="Print the result as JSON only.")
    a = ap.parse_args()
    if not 0 < a.duration <= 300 or not 0 < a.concurrency <= 64:
        sys.exit("--duration must be in (0, 300] and --concurrency in (0, 64]")
    _loopback_only(a.url)
    qs = None
    if a.queries:
        with open(a.queries, encoding="utf-8") as f:
            qs = [line.strip() for line in f if line.strip()]
    res = asyncio.run(run(a.url.rstrip("/"), a.duration, a.concurrency, a.per_page, qs))
    if a.json:
        print(json.dumps(res))
        return
    lat = res["latency_ms"]
    print(f"{res['url']}: {res['requests']} requests in {res['duration_s']} s, {res['concurrency']} clients")
    print(
        f"  {res['requests_per_s']} requests/s; latency p50 {lat['p50']} ms, p90 {lat['p90']} ms, p99 {lat['p99']} ms"
    )
    print(f"  errors: {res['errors'] or 'none'}")


if __name__ == "__main__":
    main()

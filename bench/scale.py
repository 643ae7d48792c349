"""How cost grows with the corpus, on both backends: the embedded store and Milvus Lite 2.5.

    python bench/scale.py prepare [--sizes 10k,63k,250k,1m]     corpora + query vectors
    python bench/scale.py build --backend embedded|milvus --size 63k [--fresh]
    python bench/scale.py measure --backend embedded|milvus --size 63k [--queries 200]
    python bench/scale.py agree --size 10k [--queries 20]        top 10 of both backends compared
    python bench/scale.py all [--sizes ...] [--milvus-sizes ...]    prepare, build, measure
    python bench/scale.py report                                 table + docs/performance-scale.png
    python bench/scale.py --dim 768 ...                          the same with the default pair's vectors
    python bench/scale.py --dim 768 peer --size 1m               Milvus Lite 2.5 as a peer (bench/milvus_peer.py)
    python bench/scale.py --dim 768 compare --size 1m            embedded, then the peer: one run, ratios

Every step is resumable and skips what is done (results in bench/out/scale/results.json;
progress lines in bench/out/scale/progress.log). Run big builds in the background:
``nohup setsid nice python bench/scale.py all > bench/out/scale/all.log 2>&1 &``.

Corpora. 10k is the first 10,000 records of the shared 63,104 (arxiv-2025-2026, with their
all-MiniLM-L6-v2 vectors), 63k all of them. Beyond that, copy k of record i (k = 1, 2, ...) is
synthesised from record i and a "donor" drawn (seeded by k and i) from the records of the same
primary category: its title is the first two thirds of record i's title words followed by the
last third of the donor's, its abstract the first half of record i's sentences followed by the
second half of the donor's; authors, categories and dates are record i's; the id is
``<id>s<k>``. Its vector is record i's plus Gaussian noise (sigma 0.025 per dimension, cosine
about 0.9 to the original), renormalised. So topics, vocabulary, category and date
distributions stay those of real arXiv, while every synthetic paper is a distinct text and
a distinct point.

At 768 dimensions (``--dim 768``, issue 36: the default model, a pair) the same records are
used with the pair's real vectors: multilingual-e5-small's halves of the 63k papers
(bench/out/e5-63k.npy and .ids.txt, or $SCALE_E5) beside the shared MiniLM ones. A copy's
halves each get today's noise (sigma 0.025 per dimension, cosine about 0.9 to the original
half) and are renormalised, then joined as every pair vector is (`embed.Pair.join`), so the
copy's cosine to its original stays about 0.9 and each half stays a unit vector of its model.
The 200 queries are embedded by the pair's own query encoder (`Pair.embed_query`). Everything
of that run goes to bench/out/scale768/ (or $SCALE_OUT768), its own results.json included, so
nothing mixes with the 384-dimension runs. ``peer`` times Milvus Lite 2.5 the way
bench/search.py does (bench/milvus_peer.py: its own collection, BM25 function + FLAT dense,
``hybrid_search`` with RRF), on the embedded store's rows (a copy merged by its DOI left out)
and the same vectors and query vectors, the 200 queries cut to three words and, because that
file measures two lists, the same 200 titles whole. ``compare`` runs the embedded measurement
and then the peer's, back to back, and prints the ratios.

Measures per backend and size: ingest time (embedded: `ingest` into SQLite, then the lexical
snapshot built and published, side by side with the vector import into SQLite and its
publish; each step in its own process, whose peak resident memory is recorded; Milvus:
`paperdex migrate --to` from the embedded store, i.e. the whole copy ending with the lexical
snapshot built from the collection and published, then `publish_s`: one more publish with
nothing changed, what every later write costs), size on disk (embedded: SQLite, the vectors'
share of it, which is their one copy, and the lexical snapshot; Milvus: the Lite file and the
snapshot folder), resident memory of the processes serving queries after the run (embedded:
this process; Milvus Lite: this client + its server), engine time p50/p99 of
`Backend.search` (per_page 10, no facets, no highlighting, query vector given) for lexical,
dense, hybrid, hybrid with a tight `cat:cs.RO` filter and with a loose `cat:cs` one (most
papers), Milvus's bare dense search (top 10, no engine around it), and dense recall@10
against exact float search over the corpus file's vectors (a measurement refuses a store
without its snapshots published). Each result records the commit measured. Queries: titles of
200 records (seed 42) cut to their first three words.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# ../shared/data beside the clone; from a worktree (/work/wt/NAME), the first ancestor that has one
SHARED = next(
    (p / "shared" / "data" for p in Path(__file__).resolve().parents[1:] if (p / "shared" / "data").is_dir()),
    ROOT.parent / "shared" / "data",
)
CORPUS = SHARED / "arxiv-2025-2026.jsonl.gz"
VECTORS = SHARED / "arxiv-2025-2026.all-MiniLM-L6-v2.f16.npy"
IDS = SHARED / "arxiv-2025-2026.ids.txt"
OUT = Path(os.environ.get("SCALE_OUT", ROOT / "bench" / "out" / "scale"))  # elsewhere for a smoke run
RESULTS = OUT / "results.json"
MODEL = "all-MiniLM-L6-v2"
SIZES = {"6k": 6_000, "10k": 10_000, "63k": 63_104, "250k": 250_000, "1m": 1_000_000}  # 6k: a smoke run
CAT = "cs.RO"
LOOSE = "cs"  # an archive most papers are in: a loose filter (the dense side filters afterwards)
SIGMA = 0.025
E5_HALVES = Path(os.environ.get("SCALE_E5", ROOT / "bench" / "out" / "e5-63k.npy"))  # the pair's e5 halves, 63k
DIM = 384  # 768: the default pair (configure)
SMOKE = "6k"  # a check of the steps, not a point of the curves


def configure(dim: int) -> None:
    """Point the run at the vectors of `dim` dimensions: 384 all-MiniLM-L6-v2 (the shared
    vectors, as always), 768 the default pair, in a folder of its own."""
    global OUT, RESULTS, MODEL, DIM
    if dim == 768:
        from paperdex.index.embed import Pair

        MODEL = Pair.name
        OUT = Path(os.environ.get("SCALE_OUT768", ROOT / "bench" / "out" / "scale768"))
        RESULTS = OUT / "results.json"
    DIM = dim


def log(msg: str) -> None:
    line = f"{time.strftime('%H:%M:%S')} {msg}"
    print(line, flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "progress.log", "a") as f:
        f.write(line + "\n")


def load_results() -> dict:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {}


def save_result(key: str, **values) -> None:
    import fcntl

    with open(OUT / ".results.lock", "w") as lock:  # several steps may run at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = load_results()
        r.setdefault(key, {}).update(values)
        tmp = RESULTS.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(r, indent=1, sort_keys=True))
        tmp.replace(RESULTS)


def reset_result(key: str, keep: tuple[str, ...] = ()) -> None:
    """Forget a backend/size's figures (a fresh build), but those named in `keep`."""
    import fcntl

    with open(OUT / ".results.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = load_results()
        r[key] = {k: v for k, v in r.get(key, {}).items() if k in keep}
        tmp = RESULTS.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(r, indent=1, sort_keys=True))
        tmp.replace(RESULTS)


def du(*paths: Path) -> int:
    total = 0
    for p in paths:
        if p.is_file():
            total += p.stat().st_size
        elif p.is_dir():
            total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return total


def rss_kb(pid: int | str = "self", field: str = "VmRSS") -> int:
    """Resident memory now, or at its peak with field="VmHWM" (this process since its exec;
    a child's ru_maxrss would count the parent it was forked from)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def load_avg() -> float:
    return os.getloadavg()[0]


# --- corpora ----------------------------------------------------------------------------------


def shared_records() -> tuple[list[dict], np.ndarray]:
    with gzip.open(CORPUS, "rt") as f:
        recs = [json.loads(line) for line in f]
    row = {pid: i for i, pid in enumerate(IDS.read_text().split())}
    vecs = np.load(VECTORS)[[row[r["id"]] for r in recs]]
    if DIM == 768:  # each paper's e5 half, then its MiniLM half; joined by compose()
        e5_row = {pid: i for i, pid in enumerate(E5_HALVES.with_suffix(".ids.txt").read_text().split())}
        vecs = np.hstack([np.load(E5_HALVES)[[e5_row[r["id"]] for r in recs]], vecs])
    return recs, vecs


def compose(v: np.ndarray) -> np.ndarray:
    """A paper's unit vector from its (noisy) row: at 768 dimensions the two halves, each made
    a unit vector, joined as the pair joins them."""
    if DIM != 768:
        return v / np.linalg.norm(v)
    from paperdex.index.embed import Pair

    h = len(v) // 2
    return Pair.join(v[:h] / np.linalg.norm(v[:h]), v[h:] / np.linalg.norm(v[h:]))[0]


def _synth(r: dict, donor: dict, k: int) -> dict:
    tw, dw = r["title"].split(), donor["title"].split()
    cut = max(1, (2 * len(tw)) // 3)
    title = " ".join(tw[:cut] + dw[(2 * len(dw)) // 3 :]) or r["title"]
    rs, ds = r["abstract"].split(". "), donor["abstract"].split(". ")
    abstract = ". ".join(rs[: max(1, len(rs) // 2)] + ds[len(ds) // 2 :])
    out = dict(r)
    out.update(id=f"{r['id']}s{k}", title=title, abstract=abstract)
    return out


def corpus(size: str) -> tuple[Path, Path, Path]:
    n = SIZES[size]
    base = OUT / f"corpus-{size}"
    paths = (base.with_suffix(".jsonl"), base.with_suffix(".npy"), base.with_suffix(".ids.txt"))
    if all(p.exists() for p in paths):
        return paths
    log(f"corpus {size}: writing {n:,} records")
    recs, vecs = shared_records()
    by_cat: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(recs):
        by_cat[(r.get("categories") or ["?"])[0]].append(i)
    rng = np.random.default_rng(12345)
    out_vecs = np.zeros((n, vecs.shape[1]), dtype=np.float16)
    ids = []
    tmp = paths[0].with_suffix(".jsonl.tmp")
    with open(tmp, "w") as f:
        for j in range(n):
            k, i = divmod(j, len(recs))
            r = recs[i]
            if k == 0:
                rec, v = r, vecs[i].astype(np.float32)
            else:
                pick = random.Random(k * 1_000_003 + i)
                donor = recs[pick.choice(by_cat[(r.get("categories") or ["?"])[0]])]
                rec = _synth(r, donor, k)
                v = vecs[i].astype(np.float32) + rng.normal(0, SIGMA, vecs.shape[1]).astype(np.float32)
            out_vecs[j] = compose(v)
            ids.append(rec["id"])
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            if j and j % 100_000 == 0:
                log(f"corpus {size}: {j:,}")
    np.save(paths[1], out_vecs)
    paths[2].write_text("\n".join(ids) + "\n")
    tmp.replace(paths[0])
    return paths


def queries(n: int = 200) -> tuple[list[str], np.ndarray]:
    qf, vf = OUT / "queries.json", OUT / "queries.npy"
    if qf.exists() and vf.exists():
        return json.loads(qf.read_text())[:n], np.load(vf)[:n]
    recs, _ = shared_records()
    rnd = random.Random(42)
    qs = [" ".join(r["title"].split()[:3]) for r in rnd.sample(recs, 200)]
    from paperdex.index.embed import get_embedder

    emb = get_embedder(MODEL)
    qv = np.stack([emb.embed_query(q) for q in qs]).astype(np.float32)
    qf.write_text(json.dumps(qs))
    np.save(vf, qv)
    return qs[:n], qv[:n]


def title_queries(n: int = 200) -> tuple[list[str], np.ndarray]:
    """The same 200 records' titles whole (seed 42), embedded as queries: the second list
    bench/milvus_peer.py measures (and its recall reads)."""
    qf, vf = OUT / "queries-title.json", OUT / "queries-title.npy"
    if qf.exists() and vf.exists():
        return json.loads(qf.read_text())[:n], np.load(vf)[:n]
    recs, _ = shared_records()
    qs = [r["title"] for r in random.Random(42).sample(recs, 200)]
    from paperdex.index.embed import get_embedder

    emb = get_embedder(MODEL)
    qv = np.stack([emb.embed_query(q) for q in qs]).astype(np.float32)
    qf.write_text(json.dumps(qs))
    np.save(vf, qv)
    return qs[:n], qv[:n]


# --- builds -----------------------------------------------------------------------------------


def emb_dir(size: str) -> Path:
    return OUT / f"embedded-{size}"


def milvus_path(size: str) -> Path:
    return OUT / f"milvus-{size}.db"


def _run_phase(step: str, size: str) -> int:
    """One build step in a child process (which records its own peak memory)."""
    cmd = [sys.executable, __file__, "--dim", str(DIM), "phase", "--step", step, "--size", size]
    rc = subprocess.run(cmd, check=False).returncode
    log(f"embedded/{size}: {step} exit {rc}")
    return rc


def _ingested(store, ids_path: Path) -> bool:
    """Whether a store (from an interrupted run) already holds the whole corpus: ingest goes
    in file order, so the last records are the last written (a few may have been merged)."""
    tail = ids_path.read_text().split()[-50:]
    return store.count() > 0 and any(store.get(pid) is not None for pid in tail)


def phase(step: str, size: str) -> None:
    """The build steps, each timed on its own. `ingest` writes SQLite only (its publish is
    left to the next steps); `lexical` builds and publishes the lexical snapshot, as
    paperdex.index.publish does; `vectors` imports the vectors into SQLite (`vectors_s`), then
    publishes them (`graph_s`: the name kept from the HNSW graph it once built)."""

    key = f"embedded/{size}"
    jsonl, npy, ids = corpus(size)
    try:
        _phase(step, key, jsonl, npy, ids)
    finally:
        peak = round(rss_kb(field="VmHWM") / 1024)
        save_result(key, **{f"{step}_peak_rss_mb": peak})
        log(f"{key}: {step} peak RSS {peak:,} MB")


def _publish_later() -> None:
    """Keep this step's writes from publishing (each step is a process of its own): ingest and
    the vector import end with `paperdex.index.publish.publish`, which builds the lexical
    snapshot when it is behind; a no-op `store.publish` no longer stopped them, and the ingest
    step timed a whole lexical build while the lexical step timed an incremental one."""
    import paperdex.ingest
    import paperdex.sources.merge

    paperdex.ingest.publish = paperdex.sources.merge.publish = lambda store: None


def _phase(step: str, key: str, jsonl: Path, npy: Path, ids: Path) -> None:
    from paperdex.index import lexical, vectors
    from paperdex.ingest import import_vectors, ingest_file
    from paperdex.store import Store

    size = key.split("/")[1]
    with Store(emb_dir(size)) as store:
        if step == "ingest":
            if _ingested(store, ids):
                log(f"{key}: the store already holds the corpus ({store.count():,} papers): ingest skipped")
                save_result(key, papers=store.count(), ingest_resumed=True)
                return
            _publish_later()  # published by the next steps, each timed on its own
            log(f"{key}: ingest (load {load_avg():.1f})")
            t = time.perf_counter()
            s = ingest_file(store, jsonl)
            dt = time.perf_counter() - t
            save_result(key, papers=store.count(), ingest_s=round(dt, 1), ingest_load=round(load_avg(), 1))
            log(f"{key}: {s.added:,} added in {dt:.0f} s")
        elif step == "lexical":
            log(f"{key}: lexical build (load {load_avg():.1f})")
            t = time.perf_counter()
            ix = lexical.build(store, lexical.load(store))
            t_build = time.perf_counter() - t
            lexical.publish(store, ix)
            dt = time.perf_counter() - t
            save_result(
                key, lexical_s=round(dt, 1), lexical_build_s=round(t_build, 1), lexical_load=round(load_avg(), 1)
            )
            log(f"{key}: lexical snapshot published in {dt:.0f} s (build {t_build:.0f} s)")
        elif step == "vectors":
            log(f"{key}: vector import (load {load_avg():.1f})")
            t = time.perf_counter()
            _publish_later()  # the lexical snapshot is the other step's
            import_vectors(store, npy, ids, MODEL)
            t_import = time.perf_counter() - t
            log(f"{key}: vectors in SQLite in {t_import:.0f} s; publish")
            t = time.perf_counter()
            vectors.publish(store)
            dt = time.perf_counter() - t
            save_result(key, vectors_s=round(t_import, 1), graph_s=round(dt, 1), vectors_load=round(load_avg(), 1))
            log(f"{key}: vector snapshot published in {dt:.0f} s")


def disk_sizes(size: str) -> dict:
    """Bytes on disk of the store's parts: SQLite (and the vectors' share of it), the
    published lexical snapshot."""
    import sqlite3

    d = emb_dir(size)
    with sqlite3.connect(d / "paperdex.db") as c:  # the WAL of the build folded in first
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out = {"disk_bytes": du(d), "disk_db_bytes": du(*d.glob("paperdex.db*"))}
    try:
        with sqlite3.connect(f"file:{d / 'paperdex.db'}?mode=ro", uri=True) as c:
            q = "SELECT sum(pgsize) FROM dbstat WHERE name = 'vectors'"
            (out["disk_db_vectors_bytes"],) = c.execute(q).fetchone()
    except sqlite3.Error:
        pass
    try:
        out["disk_lexical_bytes"] = du(d / json.loads((d / "lexical.json").read_text())["dir"])
    except (OSError, ValueError, KeyError):
        pass
    # the vectors' one copy is SQLite's; folders of the format-4 snapshot (rows and graph)
    # count while a store still has them
    old = [p for p in d.glob("vectors.*") if p.is_dir()]
    out["disk_vectors_bytes"] = out.get("disk_db_vectors_bytes", 0) + (du(*old) if old else 0)
    return out


def build_embedded(size: str, fresh: bool = False) -> None:
    """Resumable: each step runs unless its result is recorded (and the store holds it)."""
    import shutil

    key = f"embedded/{size}"
    if fresh:
        shutil.rmtree(emb_dir(size), ignore_errors=True)
        reset_result(key, keep=("effectiveness",))
    corpus(size)
    done = load_results().get(key, {})
    t = time.perf_counter()
    ran = []
    if "ingest_s" not in done and "ingest_resumed" not in done:
        ran.append("ingest")
        if _run_phase("ingest", size):
            raise SystemExit(f"{key}: ingest failed")
    # the two snapshots are independent: built side by side, one core each
    steps = [s for s, mark in (("lexical", "lexical_s"), ("vectors", "graph_s")) if mark not in done]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        codes = list(pool.map(lambda s: _run_phase(s, size), steps))
    if any(codes):
        raise SystemExit(f"{key}: {dict(zip(steps, codes, strict=True))}")
    ran += steps
    if not ran:
        return
    wall = time.perf_counter() - t
    # the wall time of a whole build (ingest to both snapshots), or of what a resumed run did
    name = "build_wall_s" if len(ran) == 3 else "resumed_wall_s"
    save_result(key, **{name: round(wall, 1)}, build_load=round(load_avg(), 1), **disk_sizes(size))
    log(f"{key}: built ({wall:.0f} s this run)")


def build_milvus(size: str) -> None:
    key = f"milvus/{size}"
    if load_results().get(key, {}).get("ingest_s"):
        return
    build_embedded(size)
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend
    from paperdex.store import Store

    prev = load_results().get(key, {}).get("partial_s", 0.0)
    log(f"{key}: migrate from {emb_dir(size).name} (load {load_avg():.1f})")
    t = time.perf_counter()
    with Store(emb_dir(size)) as store, MilvusBackend(milvus_path(size)) as mv:
        done = [0]

        def progress(k: int) -> None:
            done[0] += k
            if done[0] % 50_000 < k:
                log(f"{key}: {done[0]:,} copied")
                save_result(key, partial_s=round(prev + time.perf_counter() - t, 1))

        s = migrate_store(store, mv, batch_size=2000, progress=progress)  # ends with mv.publish()
        t_copy = prev + time.perf_counter() - t
        t = time.perf_counter()
        mv.publish()  # once more, timed alone: what every later write costs the writer
        t_publish = time.perf_counter() - t
        n = mv.count()
        snap = mv.snapshot_dir
    save_result(
        key,
        papers=n,
        ingest_s=round(t_copy, 1),
        publish_s=round(t_publish, 1),
        copied_this_run=s.copied,
        build_load=round(load_avg(), 1),
        disk_bytes=du(milvus_path(size), snap),
        disk_lexical_bytes=du(snap),
    )
    log(f"{key}: done ({t_copy:.0f} s, {n:,} papers)")


def peer_input(size: str, nq: int) -> Path:
    """What bench/milvus_peer.py reads: the embedded store's rows (a copy merged into another
    paper by its DOI is left out; of an id twice in the file, its first record), their vectors
    from the corpus file, the queries cut to three words and whole, with their vectors."""
    import sqlite3

    d = OUT / f"peer-{size}"
    if (d / "queries.npz").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    jsonl, npy, _ = corpus(size)
    with sqlite3.connect(f"file:{emb_dir(size) / 'paperdex.db'}?mode=ro", uri=True) as c:
        keep = {pid for (pid,) in c.execute("SELECT id FROM papers")}
    if not keep:
        raise SystemExit(f"peer/{size}: build the embedded store first (its rows are the peer's)")
    rows = []
    with open(jsonl) as f, open(d / "docs.jsonl", "w") as out:
        for j, line in enumerate(f):
            r = json.loads(line)
            if r["id"] not in keep:
                continue
            keep.discard(r["id"])
            rows.append(j)
            out.write(json.dumps({"text": r["title"] + ". " + r["abstract"], "cats": r.get("categories") or []}) + "\n")
    np.save(d / "docs.npy", np.load(npy, mmap_mode="r")[rows])
    qs, qv = queries(nq)
    ts, tv = title_queries(nq)
    (d / "queries.json").write_text(json.dumps({"3 words": qs, "full title": ts}))
    np.savez(d / "queries.npz", **{"3 words": qv, "full title": tv})
    log(f"peer/{size}: input written, {len(rows):,} papers")
    return d


def peer(size: str, budget: float, nq: int) -> None:
    """Milvus Lite 2.5 timed by bench/milvus_peer.py (its collection built at the first run; a
    build that did not finish is started again), its JSON line kept under milvus-peer/SIZE."""
    import shutil

    key = f"milvus-peer/{size}"
    inp = peer_input(size, nq)
    db = OUT / f"milvus-peer-{size}.db"
    if db.exists() and not load_results().get(key, {}).get("built"):
        log(f"{key}: {db.name} from an unfinished build: removed")
        db.unlink() if db.is_file() else shutil.rmtree(db)
    label = f"Milvus Lite peer {size}"
    log(f"{key}: bench/milvus_peer.py {db.name} (load {load_avg():.1f})")
    cmd = [sys.executable, str(Path(__file__).with_name("milvus_peer.py")), "--db", str(db), "--input", str(inp)]
    p = subprocess.run(
        cmd + ["--budget", str(budget), "--label", label], stdout=subprocess.PIPE, text=True, check=False
    )
    if p.returncode:
        raise SystemExit(f"{key}: bench/milvus_peer.py exit {p.returncode}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if res["built_s"] is not None:
        save_result(key, built=True, build_s=round(res["built_s"], 1), build_load=res["loadavg"][0])
    with open(inp / "docs.jsonl") as f:
        papers = sum(1 for _ in f)
    res.pop("built_s")
    save_result(
        key,
        **res,
        papers=papers,
        disk_bytes=du(db),
        measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    )
    for lst, cells in res["cells"].items():
        log(f"{key} {lst}: " + ", ".join(f"{c} {v['p50']:.1f} / {v['p99']:.1f} ({v['n']})" for c, v in cells.items()))


def compare(size: str, budget: float, nq: int) -> None:
    """The embedded store's cells, then the peer's, back to back, the load average logged every
    15 s meanwhile; then the ratios."""
    import threading

    trace: list[tuple[str, float]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(15):
            trace.append((time.strftime("%H:%M:%S"), round(load_avg(), 2)))

    threading.Thread(target=watch, daemon=True).start()
    cmd = [sys.executable, __file__, "--dim", str(DIM), "measure", "--backend", "embedded", "--size", size]
    if subprocess.run(cmd + ["--queries", str(nq)], check=False).returncode:
        raise SystemExit(f"compare/{size}: the embedded measurement failed")
    peer(size, budget, nq)
    stop.set()
    save_result(f"compare/{size}", load_trace=trace, measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    peer_report(size)


PEER_CELLS = (("lexical", "lexical"), ("dense", "dense"), ("hybrid", "hybrid"), (f"hybrid+cat:{CAT}", "hybrid_cat"))


def peer_report(size: str) -> None:
    """The embedded row, the peer's rows and Milvus p50 / paperdex p50 per cell (3-word queries)."""
    r = load_results()
    e, m = r.get(f"embedded/{size}", {}), r.get(f"milvus-peer/{size}", {})
    if not e or not m:
        print(f"{size}: no embedded or no peer measurement yet")
        return
    print(f"\n{size}, {DIM} dimensions, p50 / p99 ms, 200 queries a cell (where fewer ran: in brackets)")
    print("| engine | queries | " + " | ".join(c for c, _ in PEER_CELLS) + " | dense recall@10 | load |")
    print("|" + " --- |" * 8)
    cells = " | ".join(
        f"{e[k + '_p50_ms']:.1f} / {e[k + '_p99_ms']:.1f}" + (f" ({e[k + '_n']})" if e[k + "_n"] < nq(e) else "")
        for _, k in PEER_CELLS
    )
    print(f"| paperdex embedded | 3 words | {cells} | {e['recall_at_10']} | {e['measure_load']} |")
    for lst, cs in m["cells"].items():
        cells = " | ".join(
            f"{cs[c]['p50']:.1f} / {cs[c]['p99']:.1f}" + (f" ({cs[c]['n']})" if cs[c]["n"] < cs[c]["of"] else "")
            for c, _ in PEER_CELLS
        )
        # the peer's recall: over its 100 titles and 100 three-word queries (bench/milvus_peer.py)
        rec = f"{m['recall10']['all']['recall']:.3f} (both lists)" if lst == "3 words" else "–"
        print(
            f"| Milvus Lite {m['milvus_lite']} peer (BM25, {m['index']}) | {lst} | {cells} | {rec} | {m['loadavg']} |"
        )
    short = m["cells"]["3 words"]
    print("\nMilvus Lite p50 / paperdex p50 (p99 in brackets), 3-word queries:")
    for c, k in PEER_CELLS:
        print(f"  {c:18} {short[c]['p50'] / e[k + '_p50_ms']:6.1f}x ({short[c]['p99'] / e[k + '_p99_ms']:.1f}x)")
    print(
        f"\npapers: embedded {e.get('papers', 0):,}, peer {m.get('papers', 0):,}; RSS embedded {e.get('rss_mb')} MB; "
        f"disk embedded {e.get('disk_bytes', 0) / 1e6:,.0f} MB, peer {m.get('disk_bytes', 0) / 1e6:,.0f} MB; "
        f"measured embedded {e.get('measured_at')}, peer {m.get('measured_at')}"
    )


def nq(v: dict) -> int:
    return v.get("queries", 200)


# --- measurements -----------------------------------------------------------------------------


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def exact_tops(vecs: np.ndarray, qs: np.ndarray, k: int = 10) -> np.ndarray:
    """Row numbers of the exact top k of each query, [len(qs), k], one pass over the rows."""
    qs = np.asarray(qs, dtype=np.float32)
    best_s = np.full((len(qs), 0), -9.0, dtype=np.float32)
    best_i = np.zeros((len(qs), 0), dtype=np.int64)
    for a in range(0, len(vecs), 100_000):
        s = qs @ np.asarray(vecs[a : a + 100_000], dtype=np.float32).T
        top = np.argpartition(-s, min(k, s.shape[1] - 1), axis=1)[:, :k]
        best_s = np.concatenate([best_s, np.take_along_axis(s, top, 1)], axis=1)
        best_i = np.concatenate([best_i, top + a], axis=1)
    order = np.argsort(-best_s, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(best_i, order, 1)


def measure(backend: str, size: str, nq: int, budget_s: float) -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, "blas")
    from paperdex.search import Filters

    key = f"{backend}/{size}"
    measured = commit()  # the code this process loads (before a commit elsewhere moves HEAD)
    qs, qv = queries(nq)
    load0 = load_avg()
    _, npy, ids_path = corpus(size)
    all_ids = ids_path.read_text().split()
    if backend == "embedded":
        from paperdex.backends import EmbeddedBackend
        from paperdex.index import lexical, vectors

        b = EmbeddedBackend(emb_dir(size))
        # measured as readers find them: both snapshots published for this store and code
        if lexical.load(b.store) is None or vectors.published(b.store) is None:
            raise SystemExit(f"{key}: no published lexical or vector snapshot: run the build step first")
    else:
        from paperdex.backends.milvus import MilvusBackend, MilvusSource
        from paperdex.index import lexical

        b = MilvusBackend(milvus_path(size))
        # measured as readers find it: the lexical snapshot published beside the collection
        if lexical.load(MilvusSource(b)) is None:
            raise SystemExit(f"{key}: no lexical snapshot published in {b.snapshot_dir}: run the build step first")
    t = time.perf_counter()
    b.search(qs[0], mode="hybrid", query_vector=qv[0], facets=False, literal=True)
    warm_s = time.perf_counter() - t
    cells: dict[str, list[float]] = {}
    cell_load: dict[str, float] = {}
    refused: dict[str, int] = {}
    for name, mode, cat in (
        ("lexical", "lexical", False),
        ("dense", "dense", False),
        ("hybrid", "hybrid", False),
        ("hybrid_cat", "hybrid", CAT),
        ("hybrid_loose", "hybrid", LOOSE),
    ):
        times: list[float] = []
        started = time.perf_counter()
        for q, v in zip(qs, qv, strict=True):
            t = time.perf_counter()
            try:
                b.search(
                    q,
                    mode=mode,
                    per_page=10,
                    facets=False,
                    literal=True,
                    query_vector=v,
                    highlight=False,
                    filters=Filters(category=cat) if cat else None,
                )
            except Exception as e:  # a refused query (Milvus's candidate limit) is counted
                refused[name] = refused.get(name, 0) + 1
                if refused[name] == 1:
                    log(f"{key} {name}: {e}")
                continue
            times.append((time.perf_counter() - t) * 1000)
            if time.perf_counter() - started > budget_s and len(times) >= 20:
                break
        cells[name] = times
        cell_load[name] = round(load_avg(), 2)  # the load beside each cell, at its end
        log(f"{key} {name}: p50 {statistics.median(times):.2f} ms p99 {pct(times, 99):.2f} ms over {len(times)}")
    if backend == "milvus":  # Milvus's own dense call, top 10, without the engine around it
        c = b.client
        times = []
        for v in qv:
            t = time.perf_counter()
            c.search(
                b.col,
                data=[np.asarray(v, dtype=np.float32)],
                anns_field="dense",
                limit=10,
                filter="has_vec == true",
                search_params={"metric_type": "IP"},
            )
            times.append((time.perf_counter() - t) * 1000)
        cells["raw_dense"] = times
        log(f"{key} raw_dense: p50 {statistics.median(times):.2f} ms p99 {pct(times, 99):.2f} ms")
    rss = rss_kb()  # serving memory: before the exact search below reads every vector
    # recall@10 of the dense side against exact float search over the corpus file's vectors,
    # on both backends: the embedded store's int8 rows and their search measured together
    nr = min(100, len(qv))
    rec = []
    if backend == "embedded":
        vi = b.searcher.index
        rowid_of = dict(b.store.conn.execute("SELECT id, rowid FROM papers").fetchall())
        tops = exact_tops(np.load(npy, mmap_mode="r"), qv[:nr])
        # a copy merged into another paper by its DOI has no row: a miss, as on Milvus
        exact = np.array([[rowid_of.get(all_ids[i], -1) for i in row] for row in tops])
        for v, want in zip(qv[:nr], exact, strict=True):
            got = {r for r, _ in vi.search(v, 10)}
            rec.append(len(got & set(want.tolist())) / 10)
    else:
        vecs = np.load(npy, mmap_mode="r")
        for v, want in zip(qv[:nr], exact_tops(vecs, qv[:nr]), strict=True):
            hits = b.client.search(
                b.col,
                data=[np.asarray(v, dtype=np.float32)],
                anns_field="dense",
                limit=10,
                filter="has_vec == true",
                search_params={"metric_type": "IP"},
                output_fields=["id"],
            )[0]
            got = {h["entity"]["id"] for h in hits}
            rec.append(len(got & {all_ids[i] for i in want}) / 10)
    server_rss = 0
    if backend == "milvus":
        from milvus_lite.server_manager import server_manager_instance

        for s in server_manager_instance._servers.values():
            server_rss += rss_kb(s._p.pid)
    load1 = load_avg()
    b.close()
    save_result(
        key,
        queries=len(qs),
        warm_first_query_s=round(warm_s, 2),
        **{f"{k}_p50_ms": round(statistics.median(v), 2) for k, v in cells.items() if v},
        **{f"{k}_p99_ms": round(pct(v, 99), 2) for k, v in cells.items() if v},
        **{f"{k}_n": len(v) for k, v in cells.items()},
        **{f"{k}_load": v for k, v in cell_load.items()},
        refused=refused,
        recall_at_10=round(float(np.mean(rec)), 3),
        rss_mb=round((rss + server_rss) / 1024),
        client_rss_mb=round(rss / 1024),
        server_rss_mb=round(server_rss / 1024),
        measure_load=[round(load0, 1), round(load1, 1)],
        measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        commit=measured,
    )


def commit() -> str:
    """The commit measured (with "+dirty" when paperdex/ differs from it in the working tree)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "paperdex"], cwd=ROOT, check=False)
    return head.stdout.strip() + ("+dirty" if dirty.returncode else "")


def agree(size: str, nq: int) -> None:
    """Whether both backends answer alike: the top 10 ids of `nq` bench queries per mode,
    embedded against Milvus. A differing list is a near-tie when the totals are equal and the
    scores are, place by place, within 1e-4: only papers of equal score changed places."""
    from paperdex.backends import EmbeddedBackend
    from paperdex.backends.milvus import MilvusBackend
    from paperdex.search import Filters

    measured = commit()
    qs, qv = queries(nq)
    e, m = EmbeddedBackend(emb_dir(size)), MilvusBackend(milvus_path(size))
    out: dict[str, dict] = {}
    for name, mode, cat in (
        ("lexical", "lexical", None),
        ("dense", "dense", None),
        ("hybrid", "hybrid", None),
        ("hybrid_cat", "hybrid", CAT),
        ("hybrid_loose", "hybrid", LOOSE),
    ):
        same = ties = differ = 0
        examples = []
        for q, v in zip(qs, qv, strict=True):
            kw = dict(mode=mode, per_page=10, facets=False, literal=True, query_vector=v, highlight=False)
            kw["filters"] = Filters(category=cat) if cat else None
            a, b = e.search(q, **kw), m.search(q, **kw)
            ia, ib = [h.paper.id for h in a.hits], [h.paper.id for h in b.hits]
            if ia == ib and a.total == b.total:
                same += 1
                continue
            # a near-tie: the same totals and, place by place, the same scores (within 1e-4):
            # only papers of equal score changed places (or the 10th with an equal 11th)
            pa, pb = [h.score for h in a.hits], [h.score for h in b.hits]
            near = (
                a.total == b.total
                and len(pa) == len(pb)
                and all(abs(x - y) <= 1e-4 for x, y in zip(pa, pb, strict=False))
            )
            if near:
                ties += 1
            else:
                differ += 1
                examples.append(
                    {"q": q, "embedded": ia, "milvus": ib, "totals": [a.total, b.total], "scores": [pa, pb]}
                )
        out[name] = {"identical": same, "near_ties": ties, "differ": differ, "examples": examples[:3]}
        log(f"agree/{size} {name}: {same} identical, {ties} near-ties, {differ} differ of {len(qs)}")
    e.close()
    m.close()
    save_result(
        f"agree/{size}",
        **out,
        queries=len(qs),
        commit=measured,
        measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    )


def effectiveness(size: str) -> None:
    """nDCG@10 and friends of both backends on the shared topic development sets (the
    corpus's own all-MiniLM-L6-v2 vectors; queries embedded by each backend)."""
    from paperdex.backends import EmbeddedBackend
    from paperdex.backends.milvus import MilvusBackend
    from paperdex.search.evaluate import evaluate, load_queries

    for backend in ("embedded", "milvus"):
        b = EmbeddedBackend(emb_dir(size)) if backend == "embedded" else MilvusBackend(milvus_path(size))
        out = {}
        for lang in ("en", "zh"):
            f = SHARED / f"eval-topics-{size}-{lang}-dev.jsonl"
            if not f.exists():
                continue
            for mode in ("hybrid", "lexical"):
                t = time.perf_counter()
                m = evaluate(b, load_queries(f), mode=mode)
                out[f"topics_{lang}_{mode}"] = m
                log(f"{backend}/{size} topics-{lang} {mode}: nDCG@10 {m['ndcg@10']} ({time.perf_counter() - t:.0f} s)")
        b.close()
        save_result(f"{backend}/{size}", effectiveness=out)


# --- report -----------------------------------------------------------------------------------


def report() -> None:
    r = load_results()
    rows = [
        "| backend | papers | ingest s | disk MB | RSS MB | lexical | dense | hybrid | hybrid + cat:cs.RO "
        "| hybrid + cat:cs | recall@10 | load (start, end) | commit |",
        "|" + " --- |" * 13,
    ]
    raw_rows = [
        "| papers | migrate s (with publish) | publish again s | collection MB | lexical snapshot MB "
        "| bare dense search top 10 |",
        "|" + " --- |" * 6,
    ]
    build_rows = [
        "| papers | ingest s | lexical snapshot s | lexical peak RSS MB | vector import s | publish s "
        "| vectors peak RSS MB | wall s | SQLite MB (vectors) | lexical MB | vectors on disk MB | load |",
        "|" + " --- |" * 12,
    ]

    def num(v: dict, k: str, scale: float = 1) -> str:
        return f"{v[k] / scale:,.0f}" if v.get(k) is not None else "–"

    for size in SIZES:
        if size == SMOKE:
            continue
        for backend in ("embedded", "milvus"):
            v = r.get(f"{backend}/{size}")
            if not v:
                continue

            def cell(name: str, v=v) -> str:
                a, b = v.get(f"{name}_p50_ms"), v.get(f"{name}_p99_ms")
                return f"{a:.1f} / {b:.1f}" if a is not None else "–"

            # embedded: ingest to both snapshots published; Milvus: the migrate
            ing = v.get("build_wall_s") or v.get("ingest_s", 0) + v.get("vectors_s", 0)
            rows.append(
                f"| {backend} | {v.get('papers', 0):,} | {ing:.0f} | {v.get('disk_bytes', 0) / 1e6:,.0f} "
                f"| {v.get('rss_mb', '–')} | {cell('lexical')} | {cell('dense')} | {cell('hybrid')} "
                f"| {cell('hybrid_cat')} | {cell('hybrid_loose')} | {v.get('recall_at_10', '–')} "
                f"| {v.get('measure_load', '–')} | {v.get('commit', '–')} |"
            )
            if backend == "embedded" and "lexical_s" in v:
                build_rows.append(
                    f"| {v.get('papers', 0):,} | {num(v, 'ingest_s')} | {num(v, 'lexical_s')} "
                    f"| {num(v, 'lexical_peak_rss_mb')} | {num(v, 'vectors_s')} | {num(v, 'graph_s')} "
                    f"| {num(v, 'vectors_peak_rss_mb')} | {num(v, 'build_wall_s')} "
                    f"| {num(v, 'disk_db_bytes', 1e6)} ({num(v, 'disk_db_vectors_bytes', 1e6)}) "
                    f"| {num(v, 'disk_lexical_bytes', 1e6)} | {num(v, 'disk_vectors_bytes', 1e6)} "
                    f"| {v.get('build_load', '–')} |"
                )
            if backend == "milvus" and "ingest_s" in v:
                raw_rows.append(
                    f"| {v.get('papers', 0):,} | {num(v, 'ingest_s')} | {v.get('publish_s', '–')} "
                    f"| {(v.get('disk_bytes', 0) - v.get('disk_lexical_bytes', 0)) / 1e6:,.0f} "
                    f"| {num(v, 'disk_lexical_bytes', 1e6)} | {cell('raw_dense')} |"
                )
    print("\n".join(rows))
    print()
    print("\n".join(build_rows))
    print()
    print("\n".join(raw_rows))
    for size in SIZES:
        for backend in ("embedded", "milvus"):
            eff = r.get(f"{backend}/{size}", {}).get("effectiveness")
            if eff:
                print(f"{backend}/{size} " + " ".join(f"{k} nDCG@10 {m['ndcg@10']}" for k, m in eff.items()))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = {s: n for s, n in SIZES.items() if s != SMOKE}
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.2), sharey=False)
    for ax, name in zip(axes, ("lexical", "dense", "hybrid"), strict=False):
        for backend, cell, style, color, label in (
            ("embedded", name, "o-", "tab:blue", "paperdex embedded"),
            ("milvus", name, "s--", "tab:green", "paperdex on Milvus Lite 2.5.1"),
            ("milvus", "raw_dense" if name == "dense" else "", "^:", "tab:gray", "Milvus Lite bare dense search"),
        ):
            xs, p50, p99 = [], [], []
            for size, n in sizes.items():
                v = r.get(f"{backend}/{size}", {})
                if f"{cell}_p50_ms" in v:
                    xs.append(n)
                    p50.append(v[f"{cell}_p50_ms"])
                    p99.append(v[f"{cell}_p99_ms"])
            if xs:
                ax.plot(xs, p50, style, color=color, label=f"{label} p50")
                ax.plot(xs, p99, style, color=color, alpha=0.3, label=f"{label} p99")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{name} (engine time, top 10)")
        ax.set_xlabel("papers")
        ax.set_ylabel("ms")
        ax.grid(True, which="both", alpha=0.3)
    axes[2].plot([1_000_000], [60], "r*", markersize=10, label="goal at 1M: p50 60 ms")
    axes[2].legend(fontsize=7, loc="upper left")
    # memory and disk of the embedded store
    ax = axes[3]
    for k, style, label, scale in (
        ("lexical_peak_rss_mb", "o-", "lexical build, peak RSS", 1024),
        ("vectors_peak_rss_mb", "s-", "vector import + publish, peak RSS", 1024),
        ("rss_mb", "^-", "serving process RSS after the queries", 1024),
        ("disk_bytes", "D--", "data directory on disk", 1e9),
    ):
        pts = [(n, r[f"embedded/{s}"][k] / scale) for s, n in sizes.items() if r.get(f"embedded/{s}", {}).get(k)]
        if pts:
            ax.plot(*zip(*pts, strict=True), style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("embedded store: memory and disk")
    ax.set_xlabel("papers")
    ax.set_ylabel("GB")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    png = ROOT / "docs" / "performance-scale.png"
    fig.savefig(png, dpi=110)
    print(f"\nplot: {png.relative_to(ROOT)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    steps = ["prepare", "build", "measure", "agree", "eval", "all", "report", "phase", "peer", "compare"]
    ap.add_argument("step", choices=steps)
    ap.add_argument("--dim", type=int, choices=[384, 768], default=384, help="384: MiniLM; 768: the default pair")
    ap.add_argument("--step", dest="phase", choices=["ingest", "lexical", "vectors"], help="of `phase` (internal)")
    ap.add_argument("--fresh", action="store_true", help="build: start from an empty store")
    ap.add_argument("--backend", choices=["embedded", "milvus"])
    ap.add_argument("--size", choices=list(SIZES))
    ap.add_argument("--sizes", default="10k,63k,250k,1m")
    ap.add_argument("--milvus-sizes", default="10k,63k,250k")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per latency cell at most")
    ap.add_argument("--no-measure", action="store_true")
    ap.add_argument("--peer-budget", type=float, default=60.0, help="peer/compare: seconds per Milvus cell at most")
    args = ap.parse_args()
    configure(args.dim)
    OUT.mkdir(parents=True, exist_ok=True)
    sizes = [s for s in args.sizes.split(",") if s]
    if args.step in ("peer", "compare"):
        (peer if args.step == "peer" else compare)(args.size, args.peer_budget, args.queries)
    elif args.step == "prepare":
        prepare(sizes)
    elif args.step == "build":
        if args.backend == "embedded":
            build_embedded(args.size, fresh=args.fresh)
        else:
            build_milvus(args.size)
    elif args.step == "phase":
        phase(args.phase, args.size)
    elif args.step == "measure":
        measure(args.backend, args.size, args.queries, args.budget)
    elif args.step == "agree":
        agree(args.size, args.queries)
    elif args.step == "eval":
        effectiveness(args.size)
    elif args.step == "report":
        report() if DIM == 384 else [peer_report(s) for s in SIZES]
    else:
        run_all(args, sizes)


def prepare(sizes: list[str]) -> None:
    queries()
    if DIM == 768:
        title_queries()
    for s in sizes:
        corpus(s)


def run_all(args: argparse.Namespace, sizes: list[str]) -> None:
    queries()
    msizes = [s for s in args.milvus_sizes.split(",") if s]
    for s in sizes:
        corpus(s)
        build_embedded(s)
        if s in msizes:
            build_milvus(s)
    if not args.no_measure:
        for s in sizes:
            for backend in ("embedded", "milvus"):
                if backend == "milvus" and s not in msizes:
                    continue
                # each in its own process: resident memory is that backend's alone
                subprocess.run(
                    [sys.executable, __file__, "--dim", str(DIM), "measure", "--backend", backend, "--size", s]
                    + ["--queries", str(args.queries), "--budget", str(args.budget)],
                    check=False,
                )
    report()


if __name__ == "__main__":
    main()

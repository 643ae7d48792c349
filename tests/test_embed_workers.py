"""`embed` runs the built-in models a batch per core (embed.bulk_embedder): the vectors must be
the ones one batch at a time made, and every paper written once, whatever finishes first."""

import threading
import time

import numpy as np

from paperdex.index import embed
from paperdex.paper import Paper


def _vectors(store) -> dict[str, bytes]:
    rows = store.conn.execute("SELECT p.id, v.vec FROM vectors v JOIN papers p ON p.rowid = v.paper").fetchall()
    return dict(rows)


def _papers(n: int) -> list[Paper]:
    return [
        Paper(id=f"p{i}", title=f"Paper {i} on topic {i % 7}", abstract="About robots. " * (i % 5 + 1))
        for i in range(n)
    ]


def test_workers_write_the_vectors_one_worker_writes(tmp_path):
    """The default pair on two workers against one: the same bytes for every paper (each batch
    holds the same papers, and a batch's vectors do not depend on the thread that ran it)."""
    from paperdex.store import Store

    got = {}
    for threads in (1, 2):
        store = Store(tmp_path / f"t{threads}")
        store.upsert(_papers(23))
        assert embed.embed_store(store, embed.DEFAULT_MODEL, batch_size=4, threads=threads) == 23
        got[threads] = _vectors(store)
        assert embed.pending_count(store) == 0
        store.close()
    assert got[1] == got[2] and len(got[1]) == 23


def test_batches_finishing_out_of_order_are_each_written_once(empty_store, monkeypatch):
    """A later batch finishing first is written first; nothing is embedded twice, and `limit`
    still counts papers."""
    empty_store.upsert(_papers(30))
    seen: list[str] = []
    lock = threading.Lock()

    class Slow:
        name, dim = "all-MiniLM-L6-v2", 384

        def embed_docs(self, texts):
            if "Paper 0 " in texts[0]:
                time.sleep(0.3)  # the first batch comes back last
            with lock:
                seen.extend(texts)
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    monkeypatch.setattr(embed, "get_embedder", lambda name, threads=None, **kw: Slow())
    assert embed.embed_store(empty_store, "all-MiniLM-L6-v2", batch_size=4, limit=22, threads=3) == 22
    assert len(seen) == len(set(seen)) == 22 and embed.pending_count(empty_store) == 8
    assert embed.embed_store(empty_store, batch_size=4, threads=3) == 8
    assert len(seen) == len(set(seen)) == 30


def test_bulk_embedder_runs_built_in_models_a_batch_per_core(monkeypatch):
    monkeypatch.setattr(embed, "cores", lambda: 6)
    assert embed.bulk_embedder(embed.DEFAULT_MODEL)[1] == 6
    assert embed.bulk_embedder("all-MiniLM-L6-v2", threads=2)[1] == 2
    asked = []
    monkeypatch.setattr(embed, "get_embedder", lambda name, threads=None, **kw: asked.append((name, threads)))
    assert embed.bulk_embedder("openai:text-embedding-3-small", threads=3)[1] == 1
    assert asked == [("openai:text-embedding-3-small", 3)]  # its engine's threads, one batch at a time

"""The search contract (docs/search.md) on Milvus, through pymilvus: a Milvus Lite file for one
machine, or a Milvus server (``http://host:19530``) for many. Search is the one engine's
(paperdex.search.engine); this module supplies its primitives (`MilvusCorpus`) over a collection
of papers and one of settings and counters, and the writer publishes the lexical snapshot beside
them, which readers map and never build. docs/scale-out.md says what lives where, how each
primitive is done on Milvus, and why.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from paperdex.index import lexical
from paperdex.index.vectors import unit
from paperdex.messages import message
from paperdex.paper import Paper, dois, is_stale_copy
from paperdex.search import Filters, Result, Searcher
from paperdex.search import query as Q
from paperdex.search.corpus import has_run, lex_index
from paperdex.store import FTS_COLUMNS, IngestSummary, StoreError, doi_id, fts_texts
from paperdex.text import has_cjk, tokens
from paperdex.text.names import in_one_author

_LITE_LOCK = threading.Lock()
_LITE_REFS: dict[str, int] = {}

MAX_TOPK = 16_384  # Milvus's largest query/search window
MAX_PHRASE_CHECK = 16_384  # papers an exact phrase is checked on at most
PK_BLOCK = 4096  # primary keys one filtered vector search names
INDEX_PAGE = 4096  # records read at a time to build the lexical snapshot
DEFAULT_DIM = 384  # a collection's when not told (`migrate --to` tells it the store's)
LEGACY_FIELD = "lex"  # held by collections made before the lexical snapshot (docs/scale-out.md)
# Every read's but the writer's counters (`get_state(strong=True)`): a Strong read waits for the
# server's next time tick, several times a search (docs/scale-out.md, "Consistency").
READ = "Session"


def _lit(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ascii_lower(s: str | None) -> str:
    """SQLite's LIKE folds ASCII letters only; so does this (the embedded rule)."""
    return (s or "").translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def _encode_doc(p: Paper) -> str:
    s = json.dumps(asdict(p), ensure_ascii=False, sort_keys=True)
    if len(s.encode()) <= 60_000:
        return s
    return "z:" + base64.b64encode(zlib.compress(s.encode(), 6)).decode()


def _decode_doc(s: str) -> Paper:
    if s.startswith("z:"):
        s = zlib.decompress(base64.b64decode(s[2:])).decode()
    return Paper(**json.loads(s))


def _row(pk: int, p: Paper, vec: np.ndarray | None, dim: int) -> dict:
    doi = " ".join(dois(p.id, p.extra or {}))  # every DOI it carries, as the store's paper_dois
    v = np.zeros(dim, dtype=np.float32) if vec is None else np.asarray(vec, dtype=np.float32)
    if v.shape != (dim,):
        raise StoreError(
            f"{p.id}: a vector of {v.size} dimensions for a collection of {dim}; "
            "copy to a new collection, or again with --restart"
        )
    return {
        "pk": int(pk),
        "id": p.id,
        "doi": doi[:500],
        "doc": _encode_doc(p),
        "date": lexical.date_int(p.date),
        "venue_lc": _ascii_lower(p.venue)[:2000],
        "area_lc": _ascii_lower(p.venue_area)[:2000],
        "content_hash": p.content_hash(),
        "text_hash": p.text_hash(),
        "updated": p.updated or "",
        "has_vec": vec is not None,
        "dense": v,
    }


# --- the backend --------------------------------------------------------------------------


class MilvusBackend:
    """Papers in a Milvus collection, searched under the contract of docs/search.md."""

    def __init__(
        self,
        uri: str | Path,
        *,
        collection: str = "papers",
        dim: int = DEFAULT_DIM,
        snapshots: str | None = None,
        remake: bool = False,
    ) -> None:
        """`remake`: drop and make again a collection made by an older paperdex (`migrate --to --restart`)."""
        from pymilvus import MilvusClient

        self.uri = str(uri)
        self.lite = not self.uri.startswith(("http://", "https://", "tcp://", "grpc://"))
        if self.lite:
            path = Path(self.uri).expanduser().absolute()
            path.parent.mkdir(parents=True, exist_ok=True)
            self.uri = str(path)
        self.client = MilvusClient(self.uri)
        self._closed = False
        with _LITE_LOCK:
            _LITE_REFS[self.uri] = _LITE_REFS.get(self.uri, 0) + 1
        self.col = collection
        self.meta_col = f"{collection}_meta"
        self.alias_col = f"{collection}_aliases"
        self.dim = dim
        self._vstate: tuple[float, str | None, int] | None = None  # (when read, model, vectors)
        if snapshots:
            where = Path(snapshots)
        elif self.lite:
            where = Path(self.uri + ".snapshots")
        else:  # a server's, in this user's cache
            host = "".join(c if c.isalnum() or c in ".-" else "_" for c in self.uri.split("://", 1)[-1])
            where = Path.home() / ".cache" / "paperdex" / "milvus" / host
        self.snapshot_dir = where.expanduser().absolute() / collection
        self._ensure(remake)
        self.corpus = MilvusCorpus(self)
        self._searchers = threading.local()

    # --- schema ---------------------------------------------------------------------------
    def _ensure(self, remake: bool = False) -> None:
        from pymilvus import DataType

        c = self.client
        if not c.has_collection(self.meta_col):
            s = c.create_schema()
            s.add_field("key", DataType.VARCHAR, is_primary=True, max_length=256)
            s.add_field("value", DataType.VARCHAR, max_length=65535)
            s.add_field("v", DataType.FLOAT_VECTOR, dim=2)
            ip = c.prepare_index_params()
            ip.add_index("v", index_type="FLAT", metric_type="L2")
            c.create_collection(self.meta_col, schema=s, index_params=ip, consistency_level="Strong")
        self._ensure_aliases()
        if c.has_collection(self.col):
            if LEGACY_FIELD not in {f["name"] for f in c.describe_collection(self.col)["fields"]}:
                self.dim = int(self.get_state("dim") or self.dim)
                c.load_collection(self.col)
                return
            if not remake:
                self.close()
                raise StoreError(
                    f"the collection {self.col} in {self.uri} was made by an older paperdex; "
                    "`paperdex migrate --to URI --restart` makes it again"
                )
            c.drop_collection(self.col)
        s = c.create_schema()
        s.add_field("pk", DataType.INT64, is_primary=True)
        s.add_field("id", DataType.VARCHAR, max_length=512)
        s.add_field("doi", DataType.VARCHAR, max_length=512)
        s.add_field("doc", DataType.VARCHAR, max_length=65535)
        # FLOAT_VECTOR, not FLOAT16: Milvus Lite scans f16 far slower (docs/scale-out.md)
        s.add_field("dense", DataType.FLOAT_VECTOR, dim=self.dim)
        s.add_field("has_vec", DataType.BOOL)
        s.add_field("date", DataType.INT64)
        s.add_field("venue_lc", DataType.VARCHAR, max_length=8192)
        s.add_field("area_lc", DataType.VARCHAR, max_length=8192)
        s.add_field("content_hash", DataType.VARCHAR, max_length=64)
        s.add_field("text_hash", DataType.VARCHAR, max_length=64)
        s.add_field("updated", DataType.VARCHAR, max_length=64)
        ip = c.prepare_index_params()
        # Milvus Lite 2.5 offers FLAT, IVF_FLAT and AUTOINDEX for dense vectors; FLAT is exact.
        # A server deployment may recreate this index as HNSW (docs/scale-out.md).
        ip.add_index("dense", index_type="FLAT", metric_type="IP")
        c.create_collection(self.col, schema=s, index_params=ip, consistency_level="Strong")
        self.set_state("dim", str(self.dim))

    def _ensure_aliases(self) -> None:
        """The ids merges moved, as the store's paper_aliases: `old` (an id a paper had, never a
        stored paper's), `paper` (the id it has now), and `doi`, the old id's DOI when it was
        `doi:…` (a pasted DOI finds the paper its record joined). Milvus needs a vector field: `v`."""
        from pymilvus import DataType

        c = self.client
        if c.has_collection(self.alias_col):
            return
        s = c.create_schema()
        s.add_field("old", DataType.VARCHAR, is_primary=True, max_length=512)
        s.add_field("paper", DataType.VARCHAR, max_length=512)
        s.add_field("doi", DataType.VARCHAR, max_length=512)
        s.add_field("v", DataType.FLOAT_VECTOR, dim=2)
        ip = c.prepare_index_params()
        ip.add_index("v", index_type="FLAT", metric_type="L2")
        c.create_collection(self.alias_col, schema=s, index_params=ip, consistency_level="Strong")

    def get_state(self, key: str, strong: bool = False) -> str | None:
        """A setting; `strong` for a writer's read-modify-write of a counter (next_pk, generation)."""
        got = self.client.query(
            self.meta_col,
            filter=f"key == {_lit(key)}",
            output_fields=["value"],
            consistency_level="Strong" if strong else READ,
        )
        return got[0]["value"] if got else None

    def set_state(self, key: str, value: str) -> None:
        self.client.upsert(self.meta_col, [{"key": key, "value": value, "v": [0.0, 0.0]}])

    def recreate(self, dim: int | None = None) -> None:
        """Make the collection again, empty (the meta collection's settings and checkpoints stay)."""
        self.dim = dim or self.dim
        self.client.drop_collection(self.col)
        self._ensure()

    @property
    def model(self) -> str | None:
        return self.get_state("model")

    def _vector_state(self) -> tuple[str | None, int]:
        """(model, papers with a vector), read at most once a second (our own writes reset it)."""
        now = time.monotonic()
        got = self._vstate
        if got is None or now - got[0] > 1.0:
            model = self.model
            got = self._vstate = (now, model, self.vector_count() if model else 0)
        return got[1], got[2]

    def close(self) -> None:
        """The last backend of a URI closes the connection (pymilvus shares one per URI) and, for a
        Lite file, stops its server process (milvus-lite runs one per file)."""
        if self._closed:
            return
        self._closed = True
        with _LITE_LOCK:
            _LITE_REFS[self.uri] -= 1
            if _LITE_REFS[self.uri]:
                return
            del _LITE_REFS[self.uri]
        try:
            self.client.close()
        finally:
            if self.lite:
                from milvus_lite.server_manager import server_manager_instance

                server_manager_instance.release_server(self.uri)

    def __enter__(self) -> MilvusBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- low-level reads ---------------------------------------------------------------------
    def _query(
        self, filter: str, output_fields: list[str], limit: int | None = None, strong: bool = False
    ) -> list[dict]:
        kw = {"consistency_level": "Strong" if strong else READ} | ({} if limit is None else {"limit": limit})
        return self.client.query(self.col, filter=filter, output_fields=output_fields, **kw)

    def _count(self, expr: str | None) -> int:
        got = self._query(filter=expr or "", output_fields=["count(*)"])
        return int(got[0]["count(*)"])

    def _rows(self, expr: str | None, fields: list[str], page: int = MAX_TOPK) -> Iterator[list[dict]]:
        """Every row matching expr, `page` rows at a time in pk order (paged by pk)."""
        last = -1
        while True:
            f = f"pk > {last}" if expr is None else f"({expr}) and pk > {last}"
            got = self._query(filter=f, output_fields=list({"pk", *fields}), limit=page)
            if not got:
                return
            got.sort(key=lambda r: r["pk"])
            yield got
            if len(got) < page:
                return
            last = got[-1]["pk"]

    def _where_in(self, key: str, values: list, fields: list[str], where: str = "") -> Iterator[dict]:
        """The rows whose `key` ("id" or "pk") is one of `values` (matching `where` too)."""
        step = 500 if key == "id" else 1000
        for i in range(0, len(values), step):
            listed = ", ".join(_lit(v) if key == "id" else str(int(v)) for v in values[i : i + step])
            yield from self._query(f"{key} in [{listed}]{where}", fields)

    def _docs(self, pks: list[int]) -> dict[int, Paper]:
        return {int(r["pk"]): _decode_doc(r["doc"]) for r in self._where_in("pk", pks, ["pk", "doc"])}

    def count(self) -> int:
        return self._count(None)

    def vector_count(self) -> int:
        return self._count("has_vec == true")

    def _first(self, filter: str, fields: list[str]) -> dict | None:
        got = self._query(filter, fields, limit=1)
        return got[0] if got else None

    def _named(self, pid: str, fields: list[str]) -> dict | None:
        """The row of the paper stored under `pid`, else under the id a merge moved `pid` to (the
        store's `_RESOLVED`)."""
        if (row := self._first(f"id == {_lit(pid)}", fields)) is None and (to := self._moved_to("old", pid)):
            row = self._first(f"id == {_lit(to)}", fields)
        return row

    def get(self, pid: str) -> Paper | None:
        """The paper `pid` names, by Store.get's rule: its id, an id a merge moved to it, or
        `doi:` and one of its DOIs."""
        if (row := self._named(pid, ["doc"])) is not None:
            return _decode_doc(row["doc"])
        return self.corpus.by_doi(doi) if (doi := doi_id(pid)) else None

    def rowid(self, pid: str) -> int | None:
        """The key of the paper `pid` names (`get`'s rule, Store.rowid's)."""
        if (row := self._named(pid, ["pk"])) is not None:
            return int(row["pk"])
        p = self.corpus.by_doi(doi) if (doi := doi_id(pid)) else None
        return None if p is None else self.pk(p.id)

    def pk(self, pid: str, strong: bool = False) -> int | None:
        """The key of the paper stored under exactly `pid` (what a write replaces or deletes)."""
        got = self._query(filter=f"id == {_lit(pid)}", output_fields=["pk"], limit=1, strong=strong)
        return int(got[0]["pk"]) if got else None

    # --- the ids merges moved (Store._move, paper_aliases) -------------------------------------
    def _moved_to(self, field: str, value: str) -> str | None:
        """The id the alias whose `field` ("old" or "doi") is `value` names."""
        got = self.client.query(
            self.alias_col, filter=f"{field} == {_lit(value)}", output_fields=["paper"], limit=1, consistency_level=READ
        )
        return got[0]["paper"] if got else None

    def aliases(self) -> dict[str, str]:
        """Every alias (old id -> the id it names now), as Store.aliases; paged by `old`."""
        out: dict[str, str] = {}
        where = 'old != ""'
        while True:
            got = self.client.query(
                self.alias_col, filter=where, output_fields=["paper"], limit=MAX_TOPK, consistency_level="Strong"
            )
            out.update((r["old"], r["paper"]) for r in got)
            if len(got) < MAX_TOPK:
                return out
            where = f"old > {_lit(max(r['old'] for r in got))}"

    def set_aliases(self, want: dict[str, str]) -> int:
        """Make the aliases `want` (`migrate --to`: the store's); how many were written or deleted."""
        have = self.aliases()
        put = {old: new for old, new in want.items() if have.get(old) != new}
        gone = [old for old in have if old not in want]
        self._put_aliases(put)
        self._drop_aliases(gone)
        return len(put) + len(gone)

    def _put_aliases(self, aliases: dict[str, str]) -> None:
        rows = [{"old": o, "paper": p, "doi": doi_id(o) or "", "v": [0.0, 0.0]} for o, p in aliases.items()]
        for i in range(0, len(rows), 500):
            self.client.upsert(self.alias_col, rows[i : i + 500])

    def _drop_aliases(self, olds: list[str]) -> None:
        for i in range(0, len(olds), 500):
            self.client.delete(self.alias_col, filter=f"old in [{', '.join(map(_lit, olds[i : i + 500]))}]")

    def _aliases_of(self, field: str, values: list[str]) -> dict[str, str]:
        """The aliases (old -> new) whose `field` ("old" or "paper") is one of `values`."""
        out: dict[str, str] = {}
        for i in range(0, len(values), 500):
            listed = ", ".join(map(_lit, values[i : i + 500]))
            got = self.client.query(
                self.alias_col, filter=f"{field} in [{listed}]", output_fields=["paper"], consistency_level="Strong"
            )
            out.update((r["old"], r["paper"]) for r in got)
        return out

    def _move(self, moved: dict[str, str], stored: set[str]) -> None:
        """Store._move on the collection, after the papers under their new ids are written (no
        reader finds the paper under neither): the rows under the old ids (`stored`) go, and each
        old id, and every id that named it, becomes an alias of its new id."""
        if stored:
            self.client.delete(self.col, filter=f"id in [{', '.join(map(_lit, sorted(stored)))}]")
            self._bump()
        follow = {old: moved[to] for old, to in self._aliases_of("paper", list(moved)).items()}
        news = set(moved.values())  # stored papers' ids: never an alias
        self._put_aliases({old: new for old, new in (follow | moved).items() if old not in news})
        self._drop_aliases(list(self._aliases_of("old", sorted(news))))

    # --- writes ------------------------------------------------------------------------------
    def _claim_model(self, model: str) -> None:
        current = self.model
        if current and current != model and self._query(filter="has_vec == true", output_fields=["pk"], limit=1):
            raise StoreError(f"this collection holds vectors from {current}; refusing to mix in {model}")
        if current != model:
            self.set_state("model", model)

    def upsert(
        self,
        papers: Iterable[Paper],
        vectors: dict[str, np.ndarray] | None = None,
        model: str | None = None,
        moved: dict[str, str] | None = None,
        batch_size: int = 1000,
    ) -> IngestSummary:
        """The embedded store's upsert rules (Backend.upsert); `moved` as Store.upsert's (`_move`)."""
        vectors = vectors or {}
        if vectors:
            if not model:
                raise ValueError("vectors need the name of the model that made them")
            self._claim_model(model)
        moved = {old: new for old, new in (moved or {}).items() if old != new}
        stored = {r["id"] for r in self._where_in("id", list(moved), ["id"])}  # the old ids a row is under
        total, written, rest_of = IngestSummary(), set[str](), iter(papers)
        while batch := list(itertools.islice(rest_of, batch_size)):
            total = total + self._upsert_batch(batch, vectors, written, {moved[old] for old in stored})
        if rest := {pid: v for pid, v in vectors.items() if pid not in written}:  # papers stored and unchanged
            docs = [(int(r["pk"]), _decode_doc(r["doc"])) for r in self._where_in("id", list(rest), ["pk", "doc"])]
            self.write_rows([(pk, p, rest[p.id]) for pk, p in docs])
        if moved:
            self._move(moved, stored)
        self._vstate = None
        self.publish()
        return total

    def _upsert_batch(
        self, batch: list[Paper], vectors: dict[str, np.ndarray], written: set[str], moved_in: set[str]
    ) -> IngestSummary:
        """One batch of `upsert`; adds the ids it wrote to `written`. A new id in `moved_in` is a
        stored paper under its new id (updated, as on the store); a new id loses its alias."""
        s = IngestSummary()
        latest = s.last_of_each(batch)
        fields = ["pk", "id", "content_hash", "text_hash", "updated", "has_vec", "dense"]
        old = {r["id"]: r for r in self._where_in("id", list(latest), fields)}
        if new_ids := [pid for pid in latest if pid not in old]:
            start = int(self.get_state("next_pk", strong=True) or 1)
            self.set_state("next_pk", str(start + len(new_ids)))
            self._drop_aliases(list(self._aliases_of("old", new_ids)))
            here = sum(pid in moved_in for pid in new_ids)
            s.added, s.updated = s.added - here, s.updated + here
        pks = {pid: start + i for i, pid in enumerate(new_ids)}
        items: list[tuple[int, Paper, np.ndarray | None]] = []
        for pid, p in latest.items():
            prev, vec = old.get(pid), vectors.get(pid)
            if prev is None:
                items.append((pks[pid], p, vec))
                s.added += 1
                continue
            same = prev["content_hash"] == p.content_hash()
            older = is_stale_copy(p, prev["updated"])
            if (same or older) and vec is None:
                s.unchanged += 1
                continue
            if vec is None and prev["has_vec"] and prev["text_hash"] == p.text_hash():
                vec = _vec_of(prev["dense"])
            s.unchanged += same or older
            s.updated += not (same or older)
            cur = self.get(pid) if older else None  # an older copy keeps the stored record
            items.append((prev["pk"], cur or p, vec))
        written.update(p.id for _, p, _ in items)
        self.write_rows(items)
        return s

    def write_rows(
        self, items: list[tuple[int, Paper, np.ndarray | None]], model: str | None = None, contiguous: bool = False
    ) -> None:
        """Write papers under given primary keys as they are (migration: pk = the store's rowid);
        `contiguous`: the items are every paper of their key range."""
        self._vstate = None
        if model and any(v is not None for _, _, v in items):
            self._claim_model(model)
        if not items:
            return
        rows = [_row(pk, p, v, self.dim) for pk, p, v in items]
        if contiguous:
            # the batch is every row of its pk range: clear the range (a resumed copy may have
            # written part of it) and insert, which costs Milvus far less than an upsert
            lo, hi = min(r["pk"] for r in rows), max(r["pk"] for r in rows)
            self.client.delete(self.col, filter=f"pk >= {lo} and pk <= {hi}")
            self.client.insert(self.col, rows)
        else:
            for i in range(0, len(rows), 500):
                self.client.upsert(self.col, rows[i : i + 500])
        self._bump()
        top = max(pk for pk, _, _ in items) + 1
        if top > int(self.get_state("next_pk", strong=True) or 1):
            self.set_state("next_pk", str(top))

    def delete(self, pid: str) -> bool:
        """Whether `pid` was there to delete: a writer's read-modify-write, so the read is Strong
        (under Session consistency a Milvus server once showed a paper its own delete had removed)."""
        self._vstate = None
        pk = self.pk(pid, strong=True)
        if pk is None:
            return False
        self.client.delete(self.col, filter=f"pk in [{pk}]")
        self._bump()
        self.publish()
        return True

    def copy_states(self) -> dict[int, tuple[str, bool, frozenset[str]]]:
        """pk -> (content hash, has a vector, its DOIs), as Store.copy_states: what `migrate --to` compares."""
        return {
            int(r["pk"]): (r["content_hash"], bool(r["has_vec"]), frozenset(r["doi"].split()))
            for got in self._rows(None, ["content_hash", "has_vec", "doi"])
            for r in got
        }

    def delete_rows(self, pks: list[int]) -> None:
        """Delete the papers under these primary keys (a copy losing what its store deleted)."""
        if not pks:
            return
        self._vstate = None
        for i in range(0, len(pks), 1000):
            self.client.delete(self.col, filter=f"pk in {pks[i : i + 1000]}")
        self._bump()

    def flush(self) -> None:
        self.client.flush(self.col)

    # --- the lexical snapshot: built from the collection, published beside it -------------------
    def generation(self) -> int:
        """Bumped by every write (what a published snapshot is keyed to)."""
        return int(self.get_state("generation") or 0)

    def _bump(self) -> None:
        self.set_state("generation", str(int(self.get_state("generation", strong=True) or 0) + 1))

    def store_id(self) -> str:
        """Made by the first publish: a recreated collection never adopts an old snapshot."""
        return self.get_state("store_id") or ""

    def publish(self) -> None:
        """Publish the lexical snapshot of what the collection holds now (unchanged texts carry their
        postings over). A Lite file is flushed first; a server is not: its reads see unsealed rows,
        and a flush per write is slow there and leaves a small segment each (docs/scale-out.md)."""
        if self.lite:
            self.flush()
        if not self.store_id():
            import uuid

            self.set_state("store_id", uuid.uuid4().hex)
        self.snapshot_dir.mkdir(parents=True, exist_ok=True)
        source = MilvusSource(self)
        lexical.publish(source, lexical.build(source, lexical.load(source)))

    # --- search: the one engine over this collection -------------------------------------------
    def searcher(self) -> Searcher:
        """This thread's searcher (it holds an embedding model; the snapshots are shared)."""
        s = getattr(self._searchers, "s", None)
        if s is None:
            s = self._searchers.s = Searcher(self.corpus)
        return s

    def search(self, q: str, **kw: Any) -> Result:
        return self.searcher().search(q, **kw)

    def facets(self, q: str, *, mode: str = "hybrid", filters: Filters | None = None) -> dict:
        return self.search(q, mode=mode, filters=filters, per_page=1, highlight=False).facets


class MilvusSource:
    """A collection as a lexical.Source (no read transaction: the writer publishes after writing)."""

    def __init__(self, b: MilvusBackend) -> None:
        self.b = b
        self.data_dir = b.snapshot_dir
        self.generation = b.generation
        self._sid = ""

    def store_id(self) -> str:
        if not self._sid:  # made once, by the first publish
            self._sid = self.b.store_id()
        return self._sid

    def read_snapshot(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def index_rows(self) -> Iterator[list[tuple[int, str, list[str], int]]]:
        """The categories come from the records, not an ARRAY field, which Milvus Lite returns
        superlinearly slowly (docs/scale-out.md)."""
        for got in self.b._rows(None, ["text_hash", "date", "doc"], INDEX_PAGE):
            yield [(int(r["pk"]), r["text_hash"], list(_decode_doc(r["doc"]).categories), int(r["date"])) for r in got]

    def index_texts(self, rowids: list[int]) -> dict[int, tuple[str, str, list[str]]]:
        return {pk: (p.title, p.abstract, list(p.authors)) for pk, p in self.b._docs(rowids).items()}


class MilvusVectors:
    """The dense side on Milvus: its exact (FLAT) inner-product search over unit vectors."""

    def __init__(self, b: MilvusBackend, model: str, n: int) -> None:
        self.b, self.model, self.n = b, model, n

    def __len__(self) -> int:
        return self.n

    def _search(self, q: np.ndarray, k: int, expr: str | None) -> list[tuple[int, float]]:
        got = self.b.client.search(
            self.b.col,
            data=[np.asarray(q, dtype=np.float32)],
            anns_field="dense",
            limit=max(1, min(k, MAX_TOPK)),
            filter="has_vec == true" if expr is None else f"(has_vec == true) and ({expr})",
            search_params={"metric_type": "IP"},
            consistency_level=READ,
        )[0]
        hits = [(int(h["id"]), float(h["distance"])) for h in got]
        hits.sort(key=lambda x: (-x[1], x[0]))  # equal cosines: the lower key, as embedded
        return hits[:k]

    def scan(
        self, q: np.ndarray, depth: int, pool: int, allowed: np.ndarray | None
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], np.ndarray]:
        q = unit(np.asarray(q, dtype=np.float32))
        nearest = self._search(q, max(depth, pool), None)
        if allowed is None:
            return nearest[:depth], nearest[:pool], q
        allowed = np.asarray(allowed, dtype=np.int64)
        if len(allowed) * 4 > self.n:  # a loose filter: the nearest overall, then the filter
            wide = self._search(q, pool * 8, None)
            ok = set(allowed[np.isin(allowed, [r for r, _ in wide])].tolist())
            inside = [h for h in wide if h[0] in ok]
            if len(inside) >= pool or len(wide) < pool * 8:
                return nearest[:depth], inside[:pool], q
        ranked: list[tuple[int, float]] = []
        for i in range(0, len(allowed), PK_BLOCK):  # a block of keys per search
            ranked.extend(self._search(q, pool, f"pk in {allowed[i : i + PK_BLOCK].tolist()}"))
        ranked.sort(key=lambda x: (-x[1], x[0]))
        return nearest[:depth], ranked[:pool], q

    def cosines_of(self, q: np.ndarray, rowids: np.ndarray) -> np.ndarray:
        """By a search restricted to these keys: Milvus scores them where the vectors are,
        instead of sending the vectors here (docs/scale-out.md)."""
        pks = [int(r) for r in rowids]
        got: dict[int, float] = {}
        for i in range(0, len(pks), PK_BLOCK):
            block = pks[i : i + PK_BLOCK]
            got.update(self._search(q, len(block), f"pk in {block}"))
        return np.array([got.get(r, np.nan) for r in pks], dtype=np.float32)

    def vector(self, rowid: int) -> np.ndarray | None:
        return self.vectors([rowid]).get(rowid)

    def vectors(self, rowids: list[int]) -> dict[int, np.ndarray]:
        """The unit vectors of those of `rowids` that have one, in one query."""
        rows = self.b._where_in("pk", rowids, ["pk", "dense"], " and has_vec == true")
        return {int(r["pk"]): unit(v) for r in rows if (v := _vec_of(r["dense"])) is not None}

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine); `allowed` (rowids) restricts it: `scan`'s second list."""
        return self.scan(q, 0, k, allowed)[1]


class MilvusCorpus:
    """A collection as the engine's corpus (paperdex.search.corpus.Corpus)."""

    def __init__(self, b: MilvusBackend) -> None:
        self.b, self.get, self.rowid = b, b.get, b.rowid
        self.source = MilvusSource(b)
        self._cache: dict[str, tuple[int, dict[int, str]]] = {}  # _values, per generation

    @property
    def model(self) -> str | None:
        return self.b._vector_state()[0]

    def lexical(self) -> lexical.LexIndex:
        return lex_index(self.source)

    def vectors(self) -> MilvusVectors | None:
        model, n = self.b._vector_state()
        return MilvusVectors(self.b, model, n) if model and n else None

    def papers(self, rowids: list[int]) -> dict[int, Paper]:
        return self.b._docs([int(r) for r in rowids])

    def by_doi(self, doi: str) -> Paper | None:
        """The paper with this DOI, by Store.paper_id_by_doi's rule (where two papers share a DOI
        the order differs: docs/scale-out.md): the one whose id is or was (an alias) `doi:DOI`;
        then by the `doi` field, its DOIs (paper.dois) joined by spaces, so a paper with one is
        found by equality; then an alias's DOI in any case; then a paper's second DOI, from the
        field read once a generation (`_values`: a server takes no infix LIKE)."""
        b = self.b
        row = b._named(f"doi:{doi}", ["doc"]) or b._first(f"doi == {_lit(doi)}", ["doc"])
        if row is None and (to := b._moved_to("doi", doi)):
            row = b._first(f"id == {_lit(to)}", ["doc"])
        if row is not None:
            return _decode_doc(row["doc"])
        pk = next((pk for pk, v in self._values("doi").items() if doi in v.split()), None)
        return None if pk is None else b._docs([pk]).get(pk)

    def field_texts(self, rowids: list[int], column: str) -> dict[int, str]:
        """As the store holds them: a list's items (the authors) joined by spaces."""
        docs = self.b._docs(rowids)
        return {pk: " ".join(v) if isinstance(v := getattr(p, column), list) else v for pk, p in docs.items()}

    def phrase_rowids(self, t: Q.Text, fts: str, candidates: Callable[[], np.ndarray]) -> list[int]:
        """The candidates whose field (or any FTS column) has the phrase's words in a row."""
        cand = candidates()
        if len(cand) > MAX_PHRASE_CHECK:
            raise Q.QueryError(message("milvus_phrase", n=len(cand), limit=MAX_PHRASE_CHECK))
        ws = [w for w in t.words if not has_cjk(w)]
        cols = [t.column] if t.column else FTS_COLUMNS
        docs = self.b._docs([int(r) for r in cand])
        if t.column == "authors":
            return sorted(pk for pk, p in docs.items() if in_one_author(p.authors, ws))
        texts = {pk: fts_texts(p) for pk, p in docs.items()}
        return sorted(pk for pk, tx in texts.items() if any(has_run(tokens(tx[c]), ws) for c in cols))

    def rowids_where(self, kind: str, value: str) -> list[int]:
        """`venue:` / `area:` (a substring of the ASCII-lower-cased field, as SQLite's LIKE on
        the embedded store) and `decision:` (OpenReview's, inside the record), matched here on
        the values `_values` read. Not a Milvus LIKE: a Milvus server refuses any pattern but a
        prefix, which Milvus Lite hid (docs/scale-out.md)."""
        if kind == "decision":
            return [pk for pk, d in self._values("decision").items() if d == value]
        needle = _ascii_lower(value)
        return [pk for pk, v in self._values(kind).items() if needle in v]

    def _values(self, kind: str) -> dict[int, str]:
        """pk -> the papers' venue, area, DOIs or decision (those that have one), read once per generation
        of the collection: venue and area are columns; a decision is read from every record (no
        field holds it), the first `decision:` query's cost after each write, as on the store."""
        gen = self.b.generation()  # before the rows: a write in between reads them again next time
        got = self._cache.get(kind)
        if got is not None and got[0] == gen:
            return got[1]
        values: dict[int, str] = {}
        if kind == "decision":
            for rows in self.b._rows(None, ["doc"]):
                for r in rows:
                    d = ((_decode_doc(r["doc"]).extra or {}).get("openreview") or {}).get("decision")
                    if isinstance(d, str):
                        values[int(r["pk"])] = d
        else:
            field = {"venue": "venue_lc", "area": "area_lc", "doi": "doi"}[kind]
            for rows in self.b._rows(f'{field} != ""', [field]):
                values.update((int(r["pk"]), r[field]) for r in rows)
        self._cache[kind] = (gen, values)
        return values


def _vec_of(v) -> np.ndarray | None:
    """A FLOAT_VECTOR as pymilvus returns it (a list of floats)."""
    return None if v is None else np.asarray(v, dtype=np.float32)


__all__ = ["MilvusBackend", "MilvusCorpus"]

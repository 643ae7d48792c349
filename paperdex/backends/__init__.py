"""Where papers live and how they are searched, behind one interface (:class:`Backend`): the
embedded data directory (:class:`EmbeddedBackend`, a thin adapter), or a Milvus collection in
a Milvus Lite file or on a server (:class:`paperdex.backends.milvus.MilvusBackend`). Both answer
``search`` under docs/search.md's contract; docs/scale-out.md says how Milvus's gaps are handled
and which URIs name a backend.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast
from urllib.parse import parse_qs, urlsplit

import numpy as np

from paperdex.index.publish import publish
from paperdex.messages import message
from paperdex.paper import Paper
from paperdex.search import Filters, Result, Searcher
from paperdex.search.corpus import Corpus
from paperdex.store import IngestSummary, Store, StoreError

if TYPE_CHECKING:
    from paperdex.backends.milvus import MilvusBackend


class Backend(Protocol):
    """Storage and search of papers. Vectors are optional per paper; a store holds the
    vectors of one model (``model``)."""

    @property
    def model(self) -> str | None: ...

    def upsert(
        self,
        papers: Iterable[Paper],
        vectors: dict[str, np.ndarray] | None = None,
        model: str | None = None,
        moved: dict[str, str] | None = None,
    ) -> IngestSummary:
        """Insert new papers, replace changed ones (a changed text loses its vector unless one is
        given), skip identical or older copies; attach the vectors (by paper id, of `model`).
        `moved`: old id -> new id of papers a merge moved (Store.upsert's): the old id's paper
        goes and the old id names the new one from then on (`get`, a pasted id or DOI, `id:`)."""
        ...

    def delete(self, pid: str) -> bool: ...
    def get(self, pid: str) -> Paper | None: ...
    def count(self) -> int: ...

    def search(self, q: str, **kw: Any) -> Result:
        """Searcher.search over this backend (its keyword arguments are written once, there)."""
        ...

    def facets(self, q: str, *, mode: str = "hybrid", filters: Filters | None = None) -> dict: ...
    def close(self) -> None: ...


class EmbeddedBackend:
    """The embedded store (SQLite + published lexical and vector snapshots) as a Backend."""

    def __init__(self, data_dir: str | Path | Store) -> None:
        self.store = data_dir if isinstance(data_dir, Store) else Store(data_dir)
        self.searcher = Searcher(self.store)

    @property
    def model(self) -> str | None:
        return self.store.model

    def upsert(self, papers, vectors=None, model=None, moved=None) -> IngestSummary:
        summary = self.store.upsert(papers, moved=moved)
        if vectors:
            if not model:
                raise ValueError("vectors need the name of the model that made them")
            rows = self.store.rowids_and_hashes_of(list(vectors))
            items = [(rows[p][0], rows[p][1], np.asarray(v)) for p, v in vectors.items() if p in rows]
            if items:
                self.store.add_vectors(model, items)
        publish(self.store)
        return summary

    def delete(self, pid: str) -> bool:
        if deleted := self.store.delete(pid):
            publish(self.store)
        return deleted

    def get(self, pid: str) -> Paper | None:
        return self.store.get(pid)

    def count(self) -> int:
        return self.store.count()

    def search(self, q: str, **kw: Any) -> Result:
        return self.searcher.search(q, **kw)

    def facets(self, q: str, *, mode: str = "hybrid", filters: Filters | None = None) -> dict:
        return self.searcher.search(q, mode=mode, filters=filters, per_page=1, highlight=False).facets

    def close(self) -> None:
        self.store.close()


_HOST_PORT = re.compile(r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\]):\d{1,5}")


def parse_uri(uri: str) -> tuple[str, str, dict[str, str]]:
    """(kind "embedded" or "milvus", a directory, Milvus Lite file or server URL, options)."""
    base, _, query = uri.partition("?")
    opts = {k: v[-1] for k, v in parse_qs(query).items()}
    if base.startswith("milvus://"):
        return "milvus", _milvus_target(base[len("milvus://") :]), opts
    if base.startswith(("http://", "https://")):
        return "milvus", base, opts
    if base.startswith("embedded://"):
        return "embedded", urlsplit(base).path or base[len("embedded://") :], opts
    if base.endswith(".db"):
        return "milvus", str(Path(base).expanduser()), opts
    return "embedded", str(Path(base).expanduser()), opts


def _milvus_target(rest: str) -> str:
    """What follows milvus://: a server URL, host:port (a server), else a Milvus Lite file."""
    if rest.startswith(("http://", "https://", "tcp://", "grpc://")):
        return rest
    if not rest:
        raise ValueError("milvus:// needs a Milvus Lite file path or a server URL after it")
    if _HOST_PORT.fullmatch(rest):
        return "http://" + rest
    return str(Path(rest).expanduser())


def open_backend(uri: str | None = None, *, data_dir: str | Path | None = None, **kw: Any) -> Backend:
    """The backend a URI names (default: $PAPERDEX_BACKEND, else the embedded store in `data_dir`)."""
    from paperdex.settings import read_env

    uri = uri or read_env("backend")
    if not uri:
        return EmbeddedBackend(Store(data_dir or read_env("data_dir")))
    kind, target, opts = parse_uri(uri)
    if kind == "embedded":
        return EmbeddedBackend(target)
    try:
        from pymilvus import MilvusClient  # noqa: F401 - only whether the milvus extra is installed
    except ImportError:
        raise StoreError(
            message("needs_extra", what="the Milvus backend", package="pymilvus and milvus-lite", extra="milvus")
        ) from None
    from paperdex.backends.milvus import MilvusBackend

    return MilvusBackend(target, collection=opts.get("collection", "papers"), snapshots=opts.get("snapshots"), **kw)


_CORPORA: dict[str, Any] = {}
_CORPORA_LOCK = threading.Lock()


def search_corpus(uri: str | None) -> Corpus | None:
    """What searches read when the settings name a backend: None for the embedded store, else
    the collection's corpus, opened once per process and shared (pymilvus is thread-safe)."""
    if not uri or parse_uri(uri)[0] == "embedded":
        return None
    with _CORPORA_LOCK:
        if uri not in _CORPORA:
            _CORPORA[uri] = cast("MilvusBackend", open_backend(uri)).corpus  # not embedded: a collection
        return _CORPORA[uri]


__all__ = ["Backend", "EmbeddedBackend", "open_backend", "parse_uri", "search_corpus"]

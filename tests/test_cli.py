import json

from click.testing import CliRunner

from paperdex.cli import cli
from tests.conftest import DATA, PAPERS


def run(*args, data_dir=None):
    base = ["--data-dir", str(data_dir)] if data_dir else []
    return CliRunner().invoke(cli, [*base, *map(str, args)], catch_exceptions=False)


def test_ingest_twice_then_search_json(tmp_path):
    d = tmp_path / "d"
    r = run(
        "ingest",
        "-q",
        PAPERS,
        "--vectors",
        DATA / "papers.minilm.f16.npy",
        "--ids",
        DATA / "papers.ids.txt",
        "--model",
        "all-MiniLM-L6-v2",
        data_dir=d,
    )
    assert r.exit_code == 0, r.output
    assert "added 314, updated 0, unchanged 0, rejected 0" in r.output
    assert "vectors: 314 attached" in r.output
    r = run("ingest", "-q", PAPERS, data_dir=d)
    assert "added 0, updated 0, unchanged 314" in r.output

    r = run("search", 'ti:"weight decay" cat:cs.LG', "--json", data_dir=d)
    hits = json.loads(r.output)
    assert {h["id"] for h in hits} == {"2504.17160", "2505.13738", "2506.14562"}
    assert all({"id", "title", "score"} <= h.keys() for h in hits)

    r = run("stats", "--json", data_dir=d)
    s = json.loads(r.output)
    assert (s["papers"], s["with_vectors"], s["model"]) == (314, 314, "all-MiniLM-L6-v2")
    # the vectors (int8 rows of 384 bytes in SQLite, their one copy) and the lexical postings
    assert 314 * 384 < s["vectors_bytes"] < 2 * 314 * 384 + 100_000 and s["lexical_bytes"] > 10_000

    r = run("search", "weight decay", "--explain", data_dir=d)
    assert r.exit_code == 0 and "bm25=" in r.output and "cos=" in r.output

    r = run("show", "2505.13738", data_dir=d)
    assert "Power Lines" in r.output and "sources: file" in r.output


def test_exit_codes(tmp_path):
    d = tmp_path / "d"
    run("ingest", "-q", PAPERS, data_dir=d)
    r = run("search", '"unclosed', data_dir=d)
    assert r.exit_code == 1 and "unbalanced quote" in r.output
    r = run("show", "0000.00000", data_dir=d)
    assert r.exit_code == 1 and "no paper" in r.output
    r = run("search", data_dir=d)
    assert r.exit_code == 2
    r = run("ingest", PAPERS, "--vectors", DATA / "papers.minilm.f16.npy", data_dir=d)
    assert r.exit_code == 2
    r = run("stats", data_dir=tmp_path / "nothing-here")
    assert r.exit_code == 1 and "paperdex ingest" in r.output
    r = run("ingest", tmp_path / "missing.jsonl", data_dir=d)
    assert r.exit_code == 1


def test_eval_json(tmp_path):
    d = tmp_path / "d"
    run("ingest", "-q", PAPERS, data_dir=d)
    q = tmp_path / "q.jsonl"
    recs = [json.loads(line) for line in PAPERS.read_text().splitlines()[:10]]
    q.write_text("".join(json.dumps({"query": r["title"], "relevant": [r["id"]]}) + "\n" for r in recs))
    r = run("eval", q, "--json", "--mode", "lexical", data_dir=d)
    m = json.loads(r.output)
    assert set(m) == {"recall@1", "recall@10", "recall@100", "mrr@10", "ndcg@10", "queries"}
    assert m["queries"] == 10 and m["recall@10"] == 1.0


def test_ingest_reports_bad_lines_with_location(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text(PAPERS.read_text().splitlines()[0] + "\n{oops\n")
    r = run("ingest", "-q", f, data_dir=tmp_path / "d")
    assert r.exit_code == 1  # something was rejected: a script must be able to tell
    assert f"{f}:2: invalid JSON" in r.output
    assert "added 1, updated 0, unchanged 0, rejected 1" in r.output

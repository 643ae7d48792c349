import json
import re

from click.testing import CliRunner

from paperdex.cli import cli
from tests.conftest import DATA, PAPERS, run_async


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
    hits = json.loads(r.output)["hits"]
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


def test_writers_refuse_a_directory_without_a_store(tmp_path):
    """A mistyped --data-dir: every writer but `ingest`, `demo` and `init` stops with one line
    and leaves nothing behind (it used to make a new empty store and report success on it)."""
    d = tmp_path / "typo"
    for args in (
        ["migrate"],
        ["token", "create"],
        ["embed", "-q"],
        ["export", "--all"],
        ["tag", "add", "robots", "2505.13738"],
        ["tag", "dismiss", "2505.13738"],
        ["saved", "add", "s", "robots"],
    ):
        r = run(*args, data_dir=d)
        assert r.exit_code == 1, (args, r.output)
        assert f"no paperdex data in {d}" in r.output, (args, r.output)
        assert not d.exists(), args
    r = run("init", data_dir=d)
    assert r.exit_code == 0 and "0 papers" in r.output
    r = run("token", "create", data_dir=d)
    assert r.exit_code == 0 and r.output.startswith("pdx_")


def test_saved_searches_are_checked_when_saved_and_a_broken_one_is_reported(tmp_path):
    import sqlite3

    d = tmp_path / "d"
    run("ingest", "-q", PAPERS, data_dir=d)
    r = run("saved", "add", "bad", '"unbalanced', data_dir=d)
    assert r.exit_code == 1 and "cannot save this search: unbalanced quote" in r.output
    r = run("saved", "add", "bad", "robots", "--from", "2025-13", data_dir=d)
    assert r.exit_code == 1 and "cannot save this search" in r.output
    assert run("saved", "add", "spec", "speculative decoding", data_dir=d).exit_code == 0
    r = run("saved", "add", "spec", "something else", data_dir=d)  # same name: refused, kept
    assert r.exit_code == 1 and "exists" in r.output and "--replace" in r.output
    assert "speculative decoding" in run("saved", "list", data_dir=d).output
    r = run("saved", "add", "spec", "diffusion", "--replace", data_dir=d)
    assert r.exit_code == 0 and "\tdiffusion" in run("saved", "list", data_dir=d).output

    # one stored before queries were checked (an older version wrote it), then new papers
    with sqlite3.connect(d / "paperdex.db") as db:
        db.execute(
            "INSERT INTO saved_searches (name, query, params, created, seen_rowid, seen_at) "
            "VALUES ('old', '\"unbalanced', '{}', '2025-01-01', 0, '2025-01-01')"
        )
    r = run("saved", "list", data_dir=d)
    assert r.exit_code == 0 and "cannot run: unbalanced quote" in r.output and "diffusion" in r.output
    r = run("saved", "list", "--json", data_dir=d)
    assert {s["name"]: s["error"] is not None for s in json.loads(r.output)} == {"old": True, "spec": False}
    r = run("saved", "new", "old", data_dir=d)
    assert r.exit_code == 1 and "no longer runs: unbalanced quote" in r.output and "Traceback" not in r.output
    r = run("digest", data_dir=d)
    assert r.exit_code == 0 and "no longer runs" in r.output


def test_digest_to_refuses_a_file_kind_it_does_not_write(tmp_path):
    d = tmp_path / "d"
    run("ingest", "-q", PAPERS, data_dir=d)
    r = run("digest", "--to", tmp_path / "digest.pdf", data_dir=d)
    assert r.exit_code == 2 and "not .pdf" in r.output
    assert not (tmp_path / "digest.pdf").exists()
    assert run("digest", "--to", tmp_path / "digest.txt", data_dir=d).exit_code == 0


def test_related_refuses_empty_text(tmp_path):
    d = tmp_path / "d"
    run("ingest", "-q", PAPERS, data_dir=d)
    for text in ("", "   \n"):
        r = CliRunner().invoke(cli, ["--data-dir", str(d), "related"], input=text)
        assert r.exit_code == 2 and "give the text" in r.output


def test_show_takes_what_search_takes(built_store_dir):
    for ref in (
        "2505.13738",
        "arXiv:2505.13738",
        "https://arxiv.org/abs/2505.13738v2",
        "https://arxiv.org/pdf/2505.13738",
    ):
        r = run("show", ref, data_dir=built_store_dir)
        assert r.exit_code == 0 and "Power Lines" in r.output, (ref, r.output)


def test_explain_reads_at_80_columns_and_in_a_pipe(built_store_dir):
    """CliRunner's output is not a terminal (a pipe): no table squeezing a title to a word a line."""
    r = run("search", "weight decay", "--explain", "-n", "3", data_dir=built_store_dir)
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert any("Power Lines: Scaling Laws for Weight Decay and Batch Size in LLM Pre-training" in x for x in lines)
    assert sum("lexical #" in x and "dense #" in x for x in lines) == 3
    assert all(len(x.split()) > 1 for x in lines if x.strip()), r.output  # no line of one word


def test_mcp_help_lists_every_tool(built_store_dir):

    from paperdex.mcp_server import build_server

    names = {t.name for t in run_async(build_server(built_store_dir).list_tools())}
    assert len(names) >= 9
    r = run("mcp", "--help")
    listed = " ".join(r.output.split())
    assert all(n in listed for n in names), (names, r.output)


def test_serve_on_a_busy_port_fails_before_saying_it_serves(built_store_dir):
    import socket
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        for workers in ("1", "2"):
            cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(built_store_dir), "serve"]
            r = subprocess.run(
                [*cmd, "--port", str(port), "--workers", workers, "--no-warm"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert r.returncode == 1, (workers, r.stdout, r.stderr)
            assert f"cannot listen on 127.0.0.1:{port}" in r.stderr
            assert "serving" not in r.stdout + r.stderr


def test_a_mistyped_option_is_an_error_not_query_words(built_store_dir):
    """`-video` excludes a word, but `--per-pg 5` is a mistyped option: searching for it as
    words would answer a different question without saying so."""
    r = run("search", "--per-pg", "5", "diffusion", data_dir=built_store_dir)
    assert r.exit_code == 2 and "No such option '--per-pg'" in r.output and "--per-page" in r.output
    r = run("search", "--per-page", "2", "--json", "diffusion", data_dir=built_store_dir)
    assert r.exit_code == 0 and len(json.loads(r.output)["hits"]) == 2  # the web's name for the page size works
    out = run("search", "-video", "diffusion", "--json", "-n", "50", data_dir=built_store_dir).output
    without = json.loads(out)["hits"]
    assert without and not any("video" in (h["title"] + h["abstract"]).lower() for h in without)  # `-video` excludes


def test_the_author_searched_for_is_not_cut_after_the_tenth(built_store_dir):
    # 2503.14485 has 12 authors, the twelfth Paul Debevec; the name typed family name first
    r = run("search", 'au:"Debevec Paul"', "--explain", data_dir=built_store_dir)
    assert r.exit_code == 0 and "2503.14485" in r.output
    assert "… Paul Debevec et al." in " ".join(r.output.split()), r.output


def test_search_json_is_the_apis_object_with_total_tiers_and_notices(built_store_dir):
    """A script wrapping the CLI reads what /api/search answers: the total, the tiers and why
    nothing matched ("did you mean", "not in this store"), not a bare list of hits."""
    from fastapi.testclient import TestClient

    from paperdex.web.app import create_app

    api = TestClient(create_app(built_store_dir, pool_size=1), base_url="http://localhost")
    for q in ("weight decay", "wieght decay", "9999.99999"):
        r = run("search", q, "--json", "-n", "5", data_dir=built_store_dir)
        assert r.exit_code == 0, r.output
        cli_json = json.loads(r.stdout)
        api_json = api.get("/api/search", params={"q": q, "per_page": 5}).json()
        assert {**cli_json, "took_ms": 0} == {**api_json, "took_ms": 0}, q
    assert cli_json["hits"] == [] and cli_json["notices"] == [
        "9999.99999 is not in this store (`paperdex ingest arxiv --id 9999.99999` adds it)"
    ]
    weight = json.loads(run("search", "wieght decay", "--json", data_dir=built_store_dir).stdout)
    assert "did you mean “weight decay”?" in weight["notices"] and weight["total"] == 3
    assert weight["tiers"][0] == {"tier": "match", "count": 3}


def test_search_past_the_last_page_says_so(built_store_dir):
    """Before: `--page 104` of a search of 86 pages printed "page 104/86", as if there were 104."""
    first = run("search", "learning", "--mode", "lexical", data_dir=built_store_dir)
    m = re.search(r"page 1/(\d+) ·", first.output)
    assert m, first.output
    pages = int(m[1])
    past = run("search", "learning", "--mode", "lexical", "--page", pages + 5, data_dir=built_store_dir)
    assert past.exit_code == 0 and f"page {pages + 5}, past the last, {pages} ·" in past.output, past.output
    assert f"page {pages + 5}/" not in past.output

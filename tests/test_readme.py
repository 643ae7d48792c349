"""The README's commands, run: every `paperdex` line of the ```sh blocks of "Using it" (with
"Discover", its subsection) runs in order, as a reader would type them, on a copy of the
bundled sample's store, and must succeed; some must show what the README promises (the weight
decay papers, the paper the examples name). A line that needs what a test cannot have here
(the network, an SMTP server, a model endpoint) or that starts a server is listed in SKIP with
the reason, and SKIP may name only lines the README has, so neither list goes stale.

The lines run in this process through click's runner (the models load once); the two shell
forms the README uses, `"$(cat FILE)"` and `< FILE`, are read here. Files the lines name
(papers.jsonl.gz, abstract.txt, library.json, the sample's queries) are made in the working
directory first, as a user would have them."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperdex.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "paperdex" / "data"

SKIP = {  # the start of a line -> why it is not run here
    ". .venv/bin/activate": "the shell's set-up: the test calls paperdex directly",
    "export PAPERDEX_HOME": "the test gives --data-dir",
    "paperdex ingest arxiv": "the network: tests/sources replays arXiv's recorded responses",
    "paperdex ingest openreview": "the network: tests/sources replays OpenReview's recorded responses",
    "paperdex ingest hf": "the network: tests/sources replays Hugging Face's recorded responses",
    "paperdex sync": "the network: tests/sources runs sync against recorded responses",
    "paperdex serve": "starts a server: tests/web runs it (tests/live_server.py)",
    "paperdex mcp": "starts a server on stdio: tests/web/test_mcp.py runs it",
    "paperdex digest --smtp": "an SMTP server: tests/test_digest.py runs one (aiosmtpd)",
    "PAPERDEX_LLM_URL=": "a model endpoint: tests/test_summaries.py runs a local one",
}
EXPECT = {  # a line's start -> what its output must hold
    "paperdex search 'ti:\"weight decay\" cat:cs.LG'": ["2505.13738", "Weight Decay"],
    "paperdex search '扩散模型 图像编辑' --explain": ["lexical #", "dense #"],
    "paperdex show 2505.13738": ["Power Lines: Scaling Laws for Weight Decay"],
    "paperdex export --format bibtex 'au:\"Yann LeCun\"'": ["@", "LeCun"],
    "paperdex eval paperdex/data/sample-queries-zh.jsonl --limit 5": ['"recall@10"'],
    "paperdex tag add robots 2505.13738 2503.14554": ["added to robots"],
    "paperdex tag dismiss 2503.17046": ["1 marked not interested"],
    "paperdex tag recommend robots": [" 1. "],
    "paperdex related": [" 1. "],
    "paperdex migrate": ["up to date"],
}


def readme_lines() -> list[str]:
    """The lines of the ```sh blocks between "## Using it" and the next top-level section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Using it")
    end = text.index("\n## ", start + 1)
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text[start:end], re.S):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def _argv(line: str, cwd: Path) -> tuple[list[str], str | None]:
    """A README line as arguments and standard input."""
    line = re.sub(r'"\$\(cat (\S+)\)"', lambda m: shlex.quote((cwd / m.group(1)).read_text()), line)
    words = shlex.split(line, comments=True)
    stdin = None
    if "<" in words:
        i = words.index("<")
        stdin = (cwd / words[i + 1]).read_text()
        del words[i : i + 2]
    assert words[0] == "paperdex", line
    return words[1:], stdin


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory) -> Path:
    """The store `make demo` builds (paperdex demo --no-serve), once."""
    d = tmp_path_factory.mktemp("sample") / "demo"
    r = CliRunner().invoke(cli, ["--data-dir", str(d), "demo", "--no-serve"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return d


def test_skip_names_only_lines_the_readme_has():
    lines = readme_lines()
    for start in [*SKIP, *EXPECT]:
        assert any(x.startswith(start) for x in lines), f"no README line starts with {start!r}"


def test_readme_commands_run_on_the_bundled_sample(sample_dir, tmp_path, monkeypatch):
    d = tmp_path / "store"
    shutil.copytree(sample_dir, d)
    work = tmp_path / "work"
    (work / "paperdex" / "data").mkdir(parents=True)
    shutil.copy(SAMPLE / "sample-queries-zh.jsonl", work / "paperdex" / "data")
    records = [json.loads(x) for x in gzip.open(SAMPLE / "sample.jsonl.gz", "rt", encoding="utf-8")][:5]
    with gzip.open(work / "papers.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    (work / "abstract.txt").write_text(  # a paragraph on learning robot skills, not a sample paper's
        "We study reinforcement learning on a physical robot arm, where the policy must act while "
        "it learns: actions are chosen asynchronously from the updates, and we compare the two on "
        "reaching and grasping tasks.\n",
        encoding="utf-8",
    )
    library = {
        "format": "paperdex-library",
        "version": 1,
        "tags": [{"name": "reading", "papers": ["2505.13738", "2504.17160"]}],
        "dismissed": [],
        "saved_searches": [{"name": "weight decay", "query": 'ti:"weight decay"', "params": {}}],
    }
    (work / "library.json").write_text(json.dumps(library), encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.delenv("PAPERDEX_HOME", raising=False)

    ran, skipped, took = [], [], []
    for line in readme_lines():
        reason = next((why for start, why in SKIP.items() if line.startswith(start)), None)
        if reason:
            skipped.append((line, reason))
            continue
        args, stdin = _argv(line, work)
        t = time.monotonic()
        r = CliRunner().invoke(cli, ["--data-dir", str(d), *args], input=stdin, catch_exceptions=False)
        took.append((time.monotonic() - t, line))
        assert r.exit_code == 0, (line, r.output)
        for start, wanted in EXPECT.items():
            if line.startswith(start):
                for w in wanted:
                    assert w in r.output, (line, w, r.output[-2000:])
        ran.append(line)
    for f in ("digest.html", "robots.bib"):
        assert (work / f).stat().st_size > 0, f
    assert "2505.13738" in (work / "robots.bib").read_text()
    assert len(ran) >= 20, ran
    print(f"ran {len(ran)} README lines; skipped {len(skipped)}:")
    for line, why in skipped:
        print(f"  {line[:60]} -- {why}")
    for secs, line in sorted(took, reverse=True)[:8]:  # where the test's time goes (printed, not asserted)
        print(f"  {secs:6.1f} s  {line[:70]}")


def test_related_works_for_chinese_and_mixed_text(sample_dir):
    """`related` with a Chinese paragraph (the sample's Chinese summaries of its own papers) finds
    the paper it describes; mixed Chinese and English text finds papers on its subject."""
    queries = [json.loads(x) for x in (SAMPLE / "sample-queries-zh.jsonl").read_text(encoding="utf-8").splitlines()]
    for q in queries[:4]:
        r = CliRunner().invoke(cli, ["--data-dir", str(sample_dir), "related", "--json", "-n", "5", q["query"]])
        assert r.exit_code == 0, r.output
        assert q["relevant"][0] in [h["id"] for h in json.loads(r.output)["hits"]], q
    mixed = "我们提出 a diffusion-based image editing method，通过 text instructions 控制图像的局部区域。"
    r = CliRunner().invoke(cli, ["--data-dir", str(sample_dir), "related", "--json", "-n", "5", mixed])
    titles = [h["title"].lower() for h in json.loads(r.output)["hits"]]
    assert titles and all("edit" in t for t in titles), titles

"""Machine summaries in a real browser: a Chinese reader's daily page (a TL;DR on each card,
marked machine-written) and paper page (the five parts, the model named), written by the real
`paperdex summarize` against the local OpenAI-compatible stand-in. Screenshots into
screenshots/summaries-*.png."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from live_server import in_thread
from playwright.sync_api import expect
from webstore import DAY_WITH_PAGES

from paperdex.cli import cli

sys.path.insert(0, str(Path(__file__).parents[1]))
from llm_stub import LLMStub  # noqa: E402

MODEL = "qwen2.5-7b-instruct"


@pytest.fixture(scope="module")
def summarised(e2e_dir, tmp_path_factory, monkeypatch_module):
    d = tmp_path_factory.mktemp("summaries") / "store"
    shutil.copytree(e2e_dir, d)
    day = DAY_WITH_PAGES  # a day of over 30 papers
    with LLMStub() as stub:
        monkeypatch_module.setenv("PAPERDEX_LLM_URL", stub.url)
        monkeypatch_module.setenv("PAPERDEX_LLM_MODEL", MODEL)
        monkeypatch_module.setenv("PAPERDEX_LLM_KEY", "sk-e2e-secret")
        res = CliRunner().invoke(cli, ["--data-dir", str(d), "summarize", "--day", day, "--concurrency", "2"])
        assert res.exit_code == 0, res.output
        assert "summarised" in res.output and len(stub.requests) >= 1
    from paperdex.web.app import create_app

    app = create_app(d, pool_size=1)
    with in_thread(app) as base:
        yield base, day
    app.state.pool.close()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_chinese_daily_and_paper_pages_show_marked_summaries(page, summarised, shots):
    base, day = summarised
    page.goto(f"{base}/daily?day={day}&lang=zh")
    tldr = page.get_by_test_id("tldr").first
    expect(tldr).to_be_visible()
    expect(tldr).to_contain_text("机器生成")
    expect(tldr).to_contain_text("本文提出")
    assert tldr.get_attribute("lang") == "zh"
    page.screenshot(path=str(shots / "summaries-daily-zh-1280.png"))
    # the abstract stays one click away under the TL;DR
    card = page.locator("article.card").filter(has=page.get_by_test_id("tldr")).first
    card.locator("h2 a").click()
    block = page.get_by_test_id("summary")
    expect(block).to_be_visible()
    expect(block).to_contain_text("研究动机")
    expect(block).to_contain_text(MODEL)
    expect(page.get_by_test_id("abstract")).to_be_visible()
    page.screenshot(path=str(shots / "summaries-paper-zh-1280.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(shots / "summaries-paper-zh-390.png"))
    # English readers get the English summary
    page.goto(page.url.split("?")[0] + "?lang=en")
    expect(page.get_by_test_id("summary")).to_contain_text("machine-written")
    expect(page.get_by_test_id("summary")).to_contain_text("TL;DR")

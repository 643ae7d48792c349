"""End-to-end fixtures: the real server (uvicorn on a free loopback port, in a thread) and
Debian's Chromium driven headless by Playwright. No browser is ever downloaded."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "web"))
sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/live_server.py
import webstore  # noqa: E402
from live_server import in_thread  # noqa: E402
from watched import watched_page  # noqa: E402

CHROMIUM = os.environ.get("PAPERDEX_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"


@pytest.fixture(scope="session")
def e2e_dir(built_store_dir, tmp_path_factory) -> Path:
    return webstore.build(built_store_dir, tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def server(e2e_dir) -> str:

    from paperdex.web.app import create_app

    with in_thread(create_app(e2e_dir, pool_size=2)) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh context per test (no cookies carried over), English by default, which fails
    the test if any dialog (an injected alert) opens, a script errors, or the console reports
    an error (a CSP violation, a missing asset)."""
    ctx, p = watched_page(browser, viewport={"width": 1280, "height": 900}, locale="en-US")
    yield p
    ctx.close()
    assert not p.events, p.events


@pytest.fixture(scope="session")
def shots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def nojs_page(browser):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False, locale="zh-CN")
    p = ctx.new_page()
    yield p
    ctx.close()

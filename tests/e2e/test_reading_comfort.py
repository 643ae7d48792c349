"""Issue 34 in a real Chromium, the parts a reader meets while typing and reading: a word or a
Chinese prefix typed in the search box offers words of the store (title words and phrases,
dictionary words), chosen with the keyboard; `\\(x^2\\)` in an abstract reads x² and
`\\(\\frac…\\)` is typeset by the local KaTeX; the dark page with the suggestion list open is
dark and passes axe. Screenshots (dark, 1280 and 390 px, English and Chinese) of the home page,
a results page with its suggestions and a paper page go to screenshots/."""

from __future__ import annotations

import json
import shutil

import pytest
from playwright.sync_api import expect

from paperdex.index.embed import embed_store
from paperdex.ingest import ingest_file
from paperdex.store import Store

LANGS = {"en": "en-US", "zh": "zh-CN"}
AXE = __import__("pathlib").Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
VIEWPORTS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}
MATH_ID = "2599.00301"
MATH = {
    "id": MATH_ID,
    "title": "Quadratic Losses Read Aloud",
    "authors": ["Ada Quill"],
    "abstract": "We fit \\(x^2\\) to the loss, bound its step by \\(\\frac{1}{\\sqrt{n}}\\) and sum "
    "\\[\\sum_{i=1}^{n} y_i^{2}\\] over the batch.",
    "categories": ["cs.LG"],
    "listed": "2026-08-04",
}
# the luminance of the body, the search box and the open suggestion list
DARK_JS = """() => [document.body, document.querySelector('.searchbox input'), document.getElementById('suggestions')]
  .filter(Boolean).map(e => getComputedStyle(e).backgroundColor.match(/[\\d.]+/g).slice(0, 3).map(Number))
  .map(([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255)"""


@pytest.fixture(scope="module")
def reading(e2e_dir, tmp_path_factory):
    """A server over a copy of the web store plus one paper with simple and typeset math."""
    from live_server import in_thread

    from paperdex.web.app import create_app

    d = tmp_path_factory.mktemp("reading") / "store"
    shutil.copytree(e2e_dir, d)
    src = d.parent / "math.jsonl"
    src.write_text(json.dumps(MATH) + "\n")
    with Store(d) as st:
        assert ingest_file(st, src).added == 1
        embed_store(st, "all-MiniLM-L6-v2")  # publishes the indexes
    with in_thread(create_app(d, pool_size=1)) as base:
        yield base


def _page(browser, lang: str, width: str = "1280", scheme: str = "light", **kw):
    ctx = browser.new_context(viewport=VIEWPORTS[width], locale=LANGS[lang], color_scheme=scheme, **kw)
    p = ctx.new_page()
    events: list[str] = []
    p.on("pageerror", lambda e: events.append(f"pageerror: {e}"))
    p.on("console", lambda m: events.append(f"console: {m.text}") if m.type == "error" else None)
    p.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
    return ctx, p, events


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_words_are_suggested_while_typing(browser, reading, shots, lang):
    ctx, p, events = _page(browser, lang)
    p.goto(reading + "/")
    box = p.get_by_role("searchbox")
    options = p.get_by_test_id("suggestions").get_by_role("option")
    box.click()
    box.press_sequentially("specul", delay=30)
    expect(options.first).to_contain_text("speculative")
    expect(options.first).to_contain_text({"en": "1 paper", "zh": "1 篇论文"}[lang])
    box.press("ArrowDown")
    box.press("Enter")  # chooses the word, not the search
    expect(box).to_have_value("speculative ")
    # a phrase after the word typed before it
    box.fill("")
    box.press_sequentially("diffusion mo", delay=30)
    expect(options.first).to_contain_text("diffusion models")
    # a Chinese prefix, committed as an input method does, offers a Chinese word with its reading
    box.fill("")
    p.keyboard.insert_text("扩散")
    expect(options.first).to_contain_text("扩散模型")
    expect(options.first).to_contain_text("diffusion models")
    p.screenshot(path=str(shots / f"reading-suggest-zh-word-{lang}-1280.png"))
    box.press("ArrowDown")
    box.press("Enter")
    expect(box).to_have_value("扩散模型 ")
    box.press("Enter")
    expect(p.locator("article.card").first).to_be_visible()
    ctx.close()
    assert not events, events


def test_simple_math_reads_as_text_and_katex_typesets_the_rest(browser, reading, shots):
    ctx, p, events = _page(browser, "en")
    p.goto(f"{reading}/paper/{MATH_ID}")
    abstract = p.get_by_test_id("abstract")
    expect(abstract).to_contain_text("We fit x² to the loss")  # \(x^2\) needs no typesetting
    # the fraction under a root and the sum are typeset by KaTeX into MathML
    expect(abstract.locator(".math.typeset math")).to_have_count(2)
    shown = abstract.inner_text()  # what is rendered (MathML keeps its TeX in a hidden annotation)
    assert "\\(" not in shown and "\\[" not in shown and "frac" not in shown, shown
    assert abstract.locator(".math.typeset math").first.locator("mfrac").count() == 1
    p.screenshot(path=str(shots / "reading-paper-math-1280.png"))
    ctx.close()
    assert not events, events


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_dark_pages_with_suggestions_open_pass_axe(browser, reading, shots, lang):
    if not AXE.exists():
        pytest.skip("axe-core is not installed: npm ci --prefix tests/e2e/axe")
    found = {}
    for width in VIEWPORTS:
        ctx, p, events = _page(browser, lang, width, scheme="dark", bypass_csp=True)
        for name, path in (("home", "/"), ("results", "/?q=diffusion+models"), ("paper", f"/paper/{MATH_ID}")):
            p.goto(reading + path)
            if name == "results":  # the suggestion list open over the results
                box = p.get_by_role("searchbox")
                box.fill("")
                box.press_sequentially("large lang", delay=20)
                expect(p.get_by_test_id("suggestions").get_by_role("option").first).to_be_visible()
                lum = p.evaluate(DARK_JS)
                assert all(x < 0.25 for x in lum), (width, lum)
            else:
                assert p.evaluate(DARK_JS)[0] < 0.25, (width, name)
            p.add_script_tag(path=str(AXE))
            result = p.evaluate("axe.run(document, {resultTypes: ['violations']})")
            v = [(x["id"], [n["target"] for n in x["nodes"][:3]]) for x in result["violations"]]
            if v:
                found[(width, name)] = v
            p.screenshot(path=str(shots / f"reading-dark-{name}-{lang}-{width}.png"))
        ctx.close()
        assert not events, events
    assert not found, found

"""Issue 34 in a real Chromium: \\(…\\) math typeset by the local KaTeX (and a hostile span that
stays text), a dark page for `prefers-color-scheme: dark` that axe finds no contrast violation
in, the first paper above the fold on desktop and phone, and the save box's visible label.
Writes screenshots (light and dark, 1280 and 390 px, English and Chinese) into screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from webstore import COMFORT_DAY, COMFORT_MATH_ID, COMFORT_MERGED_ID, build_comfort

from paperdex.discover import library as L
from paperdex.store import Store

LANGS = {"en": "en-US", "zh": "zh-CN"}
AXE = __import__("pathlib").Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def _events(p) -> list[str]:
    events: list[str] = []
    p.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
    p.on("pageerror", lambda e: events.append(f"pageerror: {e}"))
    p.on("console", lambda m: events.append(f"console: {m.text}") if m.type == "error" else None)
    return events


@pytest.fixture(scope="module")
def comfort(e2e_dir, tmp_path_factory):
    """A server over the web store plus comfort.jsonl (webstore.build_comfort), and a token."""
    from live_server import in_thread

    from paperdex.web.app import create_app

    d = build_comfort(e2e_dir, tmp_path_factory.getbasetemp())
    with Store(d) as st:
        token = L.create_token(st, "comfort")
    with in_thread(create_app(d, pool_size=1)) as base:
        yield base, token


def _open(browser, viewport, lang="en", scheme="light", **kw):
    ctx = browser.new_context(viewport=viewport, locale=LANGS[lang], color_scheme=scheme, **kw)
    p = ctx.new_page()
    p.events = _events(p)
    return ctx, p


def _top(p, selector: str) -> float:
    """Where the first element matching `selector` starts, in CSS px from the top of the page."""
    return p.locator(selector).first.evaluate("e => e.getBoundingClientRect().top + window.scrollY")


def test_backslash_paren_math_is_typeset(browser, comfort, shots):
    base, _ = comfort
    ctx, p = _open(browser, DESKTOP)
    p.goto(f"{base}/paper/{COMFORT_MATH_ID}")
    title = p.locator("h1.paper-title")
    expect(title.locator(".math.typeset math")).to_have_count(1)
    expect(title).not_to_contain_text("\\(")
    abstract = p.get_by_test_id("abstract")
    expect(abstract.locator(".math.typeset math")).to_have_count(2)  # \(…\) and \[…\]
    expect(abstract).to_contain_text("<img src=x onerror=alert(1)>")  # shown as text, never run
    assert p.locator("main img").count() == 0
    p.screenshot(path=str(shots / "comfort-paper-math-1280.png"))
    ctx.close()
    assert not p.events, p.events


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_first_paper_above_the_fold(browser, comfort, shots, lang):
    base, _ = comfort
    found = {}
    for name, viewport in (("1280", DESKTOP), ("390", PHONE)):
        ctx, p = _open(browser, viewport, lang)
        for path, sel in (
            ("/", "article.card"),
            ("/?q=diffusion+models+for+image+editing", "article.card"),
            (f"/daily?day={COMFORT_DAY}", "article.card"),
            (f"/daily?day={COMFORT_DAY}&layout=compact", "details.row"),
        ):
            p.goto(base + path)
            found[(name, path)] = _top(p, sel)
            slug = path.strip("/?").split("&")[0].replace("=", "-").replace("?", "-")[:20] or "home"
            p.screenshot(path=str(shots / f"comfort-{slug}-{lang}-{name}.png"))
        ctx.close()
        assert not p.events, p.events
    print(lang, {k: round(v) for k, v in found.items()})
    for (name, path), y in found.items():
        fold = (DESKTOP if name == "1280" else PHONE)["height"]
        # the first paper starts in the top 45% of a desktop screen, and on a phone's first screen
        assert y < (0.45 * fold if name == "1280" else 0.8 * fold), (name, path, round(y))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_dark_mode_is_dark_and_readable(browser, comfort, shots, lang):
    if not AXE.exists():
        pytest.skip("axe-core is not installed: npm ci --prefix tests/e2e/axe")
    base, _ = comfort
    found = {}
    for name, viewport in (("1280", DESKTOP), ("390", PHONE)):
        ctx, p = _open(browser, viewport, lang, scheme="dark", bypass_csp=True)
        for path in ("/", "/?q=robot", f"/paper/{COMFORT_MERGED_ID}", f"/daily?day={COMFORT_DAY}",
                     f"/daily?day={COMFORT_DAY}&layout=compact", "/library"):  # fmt: skip
            p.goto(base + path)
            # the page and its cards are dark: their background's luminance is low
            lum = p.evaluate(
                """() => [document.body, document.querySelector('.card, .paper, .searchbox input')].filter(Boolean)
                     .map(e => getComputedStyle(e).backgroundColor.match(/[\\d.]+/g).slice(0, 3).map(Number))
                     .map(([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255)"""
            )
            assert all(x < 0.25 for x in lum), (path, lum)
            if name == "1280" and path.startswith("/daily") and "compact" in path:
                p.locator("details.row summary").first.click()  # an opened line's card too
            p.add_script_tag(path=str(AXE))
            result = p.evaluate("axe.run(document, {resultTypes: ['violations']})")
            v = [(x["id"], [n["target"] for n in x["nodes"][:3]]) for x in result["violations"]]
            if v:
                found[(name, path)] = v
            if path in ("/", f"/paper/{COMFORT_MERGED_ID}", f"/daily?day={COMFORT_DAY}"):
                slug = path.strip("/?").split("?")[0].replace("/", "-") or "home"
                p.screenshot(path=str(shots / f"comfort-dark-{slug}-{lang}-{name}.png"))
        ctx.close()
    assert not found, found


def test_save_box_has_a_visible_label(browser, comfort):
    base, token = comfort
    ctx, p = _open(browser, DESKTOP)
    p.goto(base + "/library")
    p.get_by_test_id("token").fill(token)
    p.get_by_test_id("login-form").get_by_role("button").click()
    p.goto(f"{base}/paper/{COMFORT_MERGED_ID}")
    p.get_by_test_id("save-link").first.click()
    pop = p.get_by_test_id("save-pop")
    label = pop.locator("label")
    expect(label).to_be_visible()
    expect(label).to_contain_text("Tag")
    expect(pop.get_by_label("Tag")).to_be_focused()  # the label names the box it sits by
    ctx.close()
    assert not p.events, p.events

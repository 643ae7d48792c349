"""Paper text printed to a terminal carries no escape sequences or other control characters:
a title holding ESC[2J must not clear the reader's screen (or retitle the window, or hide text
behind a bidi override)."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.paper import Paper
from paperdex.store import Store

CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
EVIL = Paper(
    id="2599.00077",
    title="Quokka \x1b[2J\x1b]0;pwned\x07 screen \x9b31m clearing",
    authors=["Eve \x1b[1mBold\x1b[0m", "Mallory \u202eevil"],
    abstract="Line one about quokka.\nLine two \x1b[31mred\x1b[0m and a bell \x07 and CR \r end.",
    categories=["cs.LG"],
    comment="comment \x1b[8m hidden",
    listed="2025-03-19",
    extra={"note": "extra \x1b[5m blink \x9b"},
)


def run(d, *args):
    return CliRunner().invoke(cli, ["--data-dir", str(d), *args], catch_exceptions=False)


def test_show_and_search_print_no_control_characters(tmp_path):
    d = tmp_path / "d"
    with Store(d) as s:
        s.upsert([EVIL])  # straight into the store: a record from before validation, or a source
    out = run(d, "show", "2599.00077").output
    assert not CONTROLS.search(out), repr(CONTROLS.findall(out))
    assert "Quokka [2J]0;pwned screen 31m clearing" in out
    assert "Line one about quokka.\nLine two" in out  # an abstract keeps its lines
    for args in (["search", "quokka", "--mode", "lexical"], ["search", "quokka", "--mode", "lexical", "--explain"]):
        r = run(d, *args)
        assert r.exit_code == 0 and "Quokka" in r.output
        assert not CONTROLS.search(r.output), repr(CONTROLS.findall(r.output))


def test_json_output_escapes_them_and_stays_valid(tmp_path):
    d = tmp_path / "d"
    with Store(d) as s:
        s.upsert([EVIL, Paper(id="9901.00033", title="t", extra={"code_stars": float("nan")})])
    out = run(d, "show", "2599.00077", "--json").output
    assert not CONTROLS.search(out)
    assert json.loads(out)["title"] == EVIL.title  # escaped, not lost
    out = run(d, "search", "quokka", "--mode", "lexical", "--json").output
    assert not CONTROLS.search(out) and json.loads(out)["hits"][0]["id"] == "2599.00077"
    out = run(d, "show", "9901.00033", "--json").output  # a NaN stored before validation existed
    assert json.loads(out, parse_constant=lambda c: 1 / 0)["extra"]["code_stars"] is None

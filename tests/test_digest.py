"""Feeds (valid per feedparser, linking to paper pages) and the daily digest, sent to a local
SMTP server (aiosmtpd on 127.0.0.1) and written to files."""

from __future__ import annotations

import email
import re
import sys
from html import unescape
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.discover import digest as D
from paperdex.discover import library as L
from paperdex.index.publish import publish

sys.path.insert(0, str(Path(__file__).parent))  # tests/live_server.py
from live_server import smtp_inbox, wait_for  # noqa: E402


def _robots(store) -> list[str]:
    rows = store.conn.execute(
        "SELECT p.id FROM papers p JOIN paper_categories c ON c.paper = p.rowid WHERE c.category = 'cs.RO' "
        "ORDER BY p.rowid LIMIT 8"
    )
    return [r[0] for r in rows]


@pytest.mark.parametrize("fmt", D.FORMATS)
def test_feed_is_valid_and_links_to_paper_pages(store, fmt):
    papers = [store.get(i) for i in _robots(store)]
    papers[0].title = "Tricky <b>title</b> & \x01 ]]> $\\alpha$"  # escaped, control character gone
    body = D.render_feed(
        fmt, "t", "http://h/feeds/x." + fmt, "http://h/x", [D.Item(p, "why") for p in papers], "http://h"
    )
    f = feedparser.parse(body)
    assert not f.bozo, f.bozo_exception
    assert f.version == ("rss20" if fmt == "rss" else "atom10")
    assert len(f.entries) == len(papers)
    assert f.entries[1].link == f"http://h/paper/{papers[1].id}"
    t = f.entries[0].title_detail  # what a reader shows: the text of it, when feedparser reads HTML
    shown = unescape(re.sub(r"<[^>]+>", "", t.value)) if "html" in t.type else t.value
    assert "<b>" in shown  # text, not markup: the reader shows it as typed


def test_digest_by_smtp_and_to_files(store, tmp_path):
    L.add_to_tag(store, "robots", _robots(store))
    # the newest day's papers: make one of them about robots so the tag has something to say
    day = store.conn.execute("SELECT max(date) FROM papers").fetchone()[0]
    d = D.build(store, None, "http://example.test")
    assert d.day == day and d.day_total >= 1
    assert d.sections and all(s.items for s in d.sections)
    text = D.render_text(d)
    html = D.render_html(d)
    assert "http://example.test/paper/" in text and 'href="http://example.test/paper/' in html

    with smtp_inbox() as (port, got):
        r = CliRunner().invoke(
            cli,
            [
                "--data-dir",
                str(store.data_dir),
                "digest",
                "--smtp",
                f"127.0.0.1:{port}",
                "--mail-to",
                "me@example.test",
                "--to",
                str(tmp_path / "d.eml"),
                "--base-url",
                "http://example.test",
            ],
        )
        assert r.exit_code == 0, r.output
        wait_for(got)
    assert len(got) == 1
    m = got[0]
    assert m["To"] == "me@example.test" and m["Subject"].startswith("paperdex digest for")
    parts = {p.get_content_type(): p.get_payload(decode=True).decode() for p in m.walk() if not p.is_multipart()}
    assert set(parts) == {"text/plain", "text/html"}
    assert "http://example.test/paper/" in parts["text/plain"]
    saved = email.message_from_bytes((tmp_path / "d.eml").read_bytes())
    assert saved["Subject"] == m["Subject"]
    for suffix in ("html", "txt"):
        r = CliRunner().invoke(
            cli, ["--data-dir", str(store.data_dir), "digest", "--to", str(tmp_path / f"d.{suffix}")]
        )
        assert r.exit_code == 0 and (tmp_path / f"d.{suffix}").read_text().strip()
    r = CliRunner().invoke(cli, ["--data-dir", str(store.data_dir), "digest", "--smtp", "nonsense"])
    assert r.exit_code == 1 and "host:port" in r.output


def test_digest_counts_a_saved_search(store):
    from paperdex.paper import Paper

    L.save_search(store, "diffusion", "diffusion")
    store.upsert([Paper(id="2999.00009", title="A diffusion paper", abstract="Diffusion.", listed="2030-01-02")])
    publish(store)
    d = D.build(store)
    assert d.day == "2030-01-02"
    sec = [s for s in d.sections if s.kind == "saved"]
    assert sec and sec[0].count == 1 and sec[0].items[0].paper.id == "2999.00009"


def test_cli_tag_token_saved(store):
    run = CliRunner().invoke
    base = ["--data-dir", str(store.data_dir)]
    ids = _robots(store)
    assert run(cli, [*base, "tag", "add", "r", *ids[:5]]).exit_code == 0
    r = run(cli, [*base, "tag", "list"])
    assert r.output.strip() == "r\t5"
    r = run(cli, [*base, "tag", "recommend", "r", "-n", "3"])
    assert r.exit_code == 0 and r.output.count("\n") >= 3
    assert run(cli, [*base, "tag", "add", "r", "nope.0000"]).exit_code == 1
    r = run(cli, [*base, "token", "create", "--name", "ci"])
    assert r.exit_code == 0 and r.output.strip().startswith(L.TOKEN_PREFIX)
    assert L.check_token(store, r.output.strip().splitlines()[0])
    assert run(cli, [*base, "saved", "add", "diff", "diffusion"]).exit_code == 0
    r = run(cli, [*base, "saved", "list"])
    assert "diff" in r.output and "0 new" in r.output


def test_digest_day_and_counts_are_checked_as_the_web_checks_them(store):
    """`digest --day garbage` / `2026-13-01` / `2026-6-3` printed an empty digest saying "Nothing
    new today" with exit 0 (a cron job mailed it every day); `-n 0` / `-n -1` were taken (a
    negative slice: sections without items); `related -n 0` named `k`. Now errors, exit ≠ 0."""
    run = CliRunner().invoke
    base = ["--data-dir", str(store.data_dir)]
    for day, why in (
        ("garbage", "day must be a date YYYY-MM-DD, got 'garbage'"),
        ("2026-6-3", "day must be a date YYYY-MM-DD, got '2026-6-3'"),
        ("2026-13-01", "day is not a real date: '2026-13-01'"),
    ):
        r = run(cli, [*base, "digest", "--day", day])
        assert r.exit_code == 1 and why in r.output and "Nothing new" not in r.output, day
    r = run(cli, [*base, "tag", "recommend", "x", "--day", "garbage"])
    assert r.exit_code == 1 and "got 'garbage'" in r.output
    for n in ("0", "-1"):
        r = run(cli, [*base, "digest", "-n", n])
        assert r.exit_code == 2 and "-n/--per-section: an integer from 1 to 200" in r.output, n
    r = run(cli, [*base, "related", "some text", "-n", "0"])
    assert r.exit_code == 2 and "-n/--limit: an integer from 1 to 100" in r.output
    r = run(cli, [*base, "digest", "--day", "2020-01-01"])  # a past day without papers: said of that day
    assert r.exit_code == 0 and r.output.endswith("Nothing new on 2020-01-01.\n")
    r = run(cli, [*base, "saved", "list"])
    assert r.exit_code == 0 and "no saved searches yet: paperdex saved add NAME QUERY" in r.output
    assert run(cli, [*base, "saved", "add", "cv", "", "--category", "cs.CV"]).exit_code == 0
    assert run(cli, [*base, "saved", "list"]).output.endswith("\tcategory:cs.CV\n")  # what a filter-only one watches


def test_a_file_that_cannot_be_written_is_one_line(store, tmp_path):
    """`digest --to` and `tag export -o` into a missing directory ended in a FileNotFoundError
    traceback; now one line naming the file, as `export -o` says it, and nothing is written."""
    base = ["--data-dir", str(store.data_dir)]
    for args, target in (
        (["digest", "--to"], tmp_path / "missing" / "d.html"),
        (["tag", "export", "-o"], tmp_path / "missing" / "library.json"),
    ):
        r = CliRunner().invoke(cli, [*base, *args, str(target)])
        assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.exception  # not a traceback
        assert r.output == f"Error: cannot write {target}: No such file or directory\n"
    assert list(tmp_path.iterdir()) == [tmp_path / "copy"]  # the store's copy (conftest): nothing else

"""The library: tags, "not interested", saved searches, tokens, export and import."""

from __future__ import annotations

import json

import numpy as np
import pytest

from paperdex.discover import library as L
from paperdex.index.publish import publish
from paperdex.index.vectors import unit
from paperdex.paper import Paper
from paperdex.store import SCHEMA_VERSION, Store, StoreError


def _ids(store: Store, n: int) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT id FROM papers ORDER BY rowid LIMIT ?", (n,))]


def test_tags_add_remove_rename_delete(store):
    a, b, c = _ids(store, 3)
    assert L.add_to_tag(store, "robots", [a, b]) == 2
    assert L.add_to_tag(store, "Robots", [b, c]) == 1  # names are case-insensitive; b was there
    assert [t.name for t in L.tags(store)] == ["robots"]
    assert L.get_tag(store, "ROBOTS").count == 3
    assert set(L.tag_papers(store, "robots")) == {a, b, c}
    assert L.tags_of(store, a) == ["robots"]
    assert L.remove_from_tag(store, "robots", [a]) == 1
    L.rename_tag(store, "robots", "manipulation")
    assert set(L.tag_papers(store, "manipulation")) == {b, c}
    with pytest.raises(L.LibraryError):
        L.get_tag(store, "robots")
    assert L.delete_tag(store, "manipulation")
    assert L.tags(store) == []


def test_unknown_papers_and_bad_names_are_refused(store):
    with pytest.raises(L.LibraryError, match="not in this store"):
        L.add_to_tag(store, "x", ["9999.99999"])
    for bad in ("", "   ", "a/b", "x" * 65, "bad\x1bname"):
        with pytest.raises(L.LibraryError):
            L.add_to_tag(store, bad, _ids(store, 1))
    # an arXiv: prefix and a version suffix find the stored paper
    pid = _ids(store, 1)[0]
    if "." in pid:
        assert L.add_to_tag(store, "t", [f"arXiv:{pid}v2"]) == 1
        assert L.tag_papers(store, "t") == [pid]


def test_dismiss_and_saving_takes_it_back(store):
    a, b = _ids(store, 2)
    assert L.dismiss(store, [a, b]) == 2
    assert set(L.dismissed(store)) == {a, b}
    L.add_to_tag(store, "keep", [a])
    assert L.dismissed(store) == [b]
    assert L.undismiss(store, [b]) == 1 and L.dismissed(store) == []


def test_readonly_store_reads_and_refuses_writes(store, tmp_path):
    L.add_to_tag(store, "t", _ids(store, 1))
    ro = Store(store.data_dir, readonly=True)
    assert [t.name for t in L.tags(ro)] == ["t"]
    with pytest.raises(L.LibraryError, match="read-only"):
        L.add_to_tag(ro, "t", _ids(store, 2))
    ro.close()


def test_old_schema_is_refused_by_a_reader_and_a_writer_adds_the_library(store):
    """A read-only opener of a store from before the library is told to migrate it."""
    c = store.conn
    for t in ("tag_papers", "tags", "dismissed", "saved_searches", "tokens"):
        c.execute(f"DROP TABLE {t}")
    rows = c.execute("SELECT paper, vec FROM vectors").fetchall()  # version 3 held float16
    c.executemany(
        "UPDATE vectors SET vec = ? WHERE paper = ?",
        [(unit(store.vectors_from_blobs([v])).astype(np.float16).tobytes(), p) for p, v in rows],
    )
    c.execute("PRAGMA user_version = 3")
    c.commit()
    with pytest.raises(StoreError, match="schema version 3, older than this paperdex reads"):
        Store(store.data_dir, readonly=True)
    # a writer brings it up to date
    with Store(store.data_dir) as w:
        assert w.schema_version() == SCHEMA_VERSION
        assert L.tags(w) == [] and L.dismissed(w) == [] and L.saved_searches(w) == []
        assert L.check_token(w, "pdx_x") is None
        L.add_to_tag(w, "t", _ids(w, 1))


def test_tokens_are_stored_hashed(store):
    tok = L.create_token(store, "laptop")
    assert tok.startswith(L.TOKEN_PREFIX)
    raw = store.conn.execute("SELECT * FROM tokens").fetchall()
    assert len(raw) == 1 and tok not in json.dumps([tuple(r) for r in raw])
    assert L.check_token(store, tok)["name"] == "laptop"
    assert L.check_token(store, tok + "x") is None and L.check_token(store, "") is None
    assert [t["name"] for t in L.tokens(store)] == ["laptop"]
    assert L.revoke_token(store, "laptop") == 1
    assert L.check_token(store, tok) is None


def test_saved_search_counts_new_papers(store, searcher):
    from paperdex.search import Searcher

    s = L.save_search(store, "diffusion", "diffusion", {"mode": "lexical", "lang": "en"})
    assert s.params == {"lang": "en", "mode": "lexical"}
    srch = Searcher(store)
    assert L.new_matches(srch, s).count == 0
    new = [
        Paper(
            id="2999.00001", title="Diffusion models for new things", abstract="A diffusion model.", listed="2026-12-01"
        ),
        Paper(id="2999.00002", title="Unrelated robots", abstract="Robot arms.", listed="2026-12-01"),
        # an old paper ingested late (a backlog) is new too
        Paper(id="2999.00003", title="Old diffusion paper", abstract="Diffusion.", listed="2020-01-01"),
    ]
    store.upsert(new)
    publish(store)
    nm = L.new_matches(srch, L.get_saved(store, "diffusion"))
    assert nm.count == 2 and {p.id for p in nm.papers} == {"2999.00001", "2999.00003"}
    L.mark_seen(store, "diffusion")
    assert L.new_matches(srch, L.get_saved(store, "diffusion")).count == 0
    with pytest.raises(L.LibraryError):
        L.save_search(store, "bad", "x", {"mode": "psychic"})
    with pytest.raises(L.LibraryError):
        L.save_search(store, "empty", "  ")


def test_export_import_json_and_bibtex(store, tmp_path):
    a, b, c = _ids(store, 3)
    L.add_to_tag(store, "one", [a, b])
    L.add_to_tag(store, "two", [c])
    L.dismiss(store, [c])  # (saving c later would take it back; here it stays dismissed only)
    L.save_search(store, "s", "diffusion", {"category": "cs.CV"})
    data = L.export_json(store)
    assert data["format"] == L.FORMAT and {t["name"] for t in data["tags"]} == {"one", "two"}
    data["tags"][0]["papers"].append("2101.00000")  # a paper this machine lacks is kept
    other = Store(tmp_path / "other")
    other.upsert([store.get(x) for x in (a, b, c)])
    got = L.import_json(other, json.loads(json.dumps(data)))
    assert got["tags"] == 2 and got["saved_searches"] == 1
    assert set(L.tag_papers(other, "one")) >= {a, b}
    assert L.get_saved(other, "s").params == {"category": "cs.CV"}
    with pytest.raises(L.LibraryError):
        L.import_json(other, {"format": "something-else"})
    broken = {"format": L.FORMAT, "saved_searches": [{"name": "old", "query": 'a "b'}]}  # no longer parses
    refused = L.import_json(other, broken)["refused"]
    why = 'unbalanced quote: this " has no closing " (at character 3)'
    assert refused == [f"saved search 'old': cannot save this search: {why}"]
    assert refused[0].in_lang("zh").startswith("已保存的搜索 'old'：无法保存这个搜索：")

    bib = L.export_bibtex(store, "one")
    assert bib.count("@") == 2
    fresh = Store(tmp_path / "fresh")
    res = L.import_bibtex(fresh, bib, "imported")
    assert res["entries"] == 2 and res["ingested"] == 2 and res["added"] == 2
    assert len(L.tag_papers(fresh, "imported")) == 2
    other.close()
    fresh.close()


@pytest.mark.parametrize("key", ["9223372036854775808", "9" * 5000, "²"])
def test_a_number_no_row_can_carry_is_not_found_from_the_cli_too(store, key):
    """The web refuses such ids before they reach the library; the CLI and MCP reach it
    directly: past 64 bits the SQLite look-up overflowed (OverflowError: a traceback)."""
    from click.testing import CliRunner

    from paperdex.cli import cli

    for args in (["saved", "new", key], ["token", "revoke", key]):
        r = CliRunner().invoke(cli, ["--data-dir", str(store.data_dir), *args])
        assert r.exit_code == 1 and r.exception is None or isinstance(r.exception, SystemExit), r.output
        assert "no saved search" in r.output or "no token" in r.output
    with pytest.raises(L.LibraryError):
        L.get_saved(store, key)


def test_remove_and_undo_take_the_ids_add_takes(store):
    """`tag add X 2505.22179v2` stored 2505.22179, but `tag remove X 2505.22179v2` and
    `dismiss --undo 2505.22179v3` said "0 removed" / "0 unmarked" (exit 0) and changed nothing;
    an id the tag does not hold said "0 removed" too. Now one id rule, and a miss is an error."""
    from click.testing import CliRunner

    from paperdex.cli import cli

    a, b = _ids(store, 2)
    run = CliRunner().invoke
    base = ["--data-dir", str(store.data_dir)]
    assert run(cli, [*base, "tag", "add", "t", f"{a}v2", b]).output == "2 added to t\n"
    r = run(cli, [*base, "tag", "remove", "t", f"arXiv:{a}v1"])
    assert r.exit_code == 0 and r.output == "1 removed\n" and L.tag_papers(store, "t") == [b]
    r = run(cli, [*base, "tag", "remove", "t", f"{a}v1", b])  # a is no longer in it: nothing removed
    assert r.exit_code == 1 and f"the tag 't' does not hold {a}; nothing was removed" in r.output
    assert L.tag_papers(store, "t") == [b]
    assert run(cli, [*base, "tag", "dismiss", f"{a}v1"]).output == "1 marked not interested\n"
    r = run(cli, [*base, "tag", "dismiss", "--undo", f"{a}v3"])
    assert r.exit_code == 0 and r.output == "1 unmarked\n" and L.dismissed(store) == []
    r = run(cli, [*base, "tag", "dismiss", "--undo", a])
    assert r.exit_code == 1 and f"not marked not interested: {a}" in r.output and "Traceback" not in r.output


def test_saved_filters_are_checked_as_a_search_checks_them_and_dot_names_refused(store):
    """`saved add x q --category 'nonsense!!'` and the API's "lang": "fr" were saved, a search
    that matched nothing forever and whose links were a 400; `tag add .. ID` made a tag whose
    link /tag/.. a browser opens as the home page."""
    from click.testing import CliRunner

    from paperdex.cli import cli

    run = CliRunner().invoke
    base = ["--data-dir", str(store.data_dir)]
    r = run(cli, [*base, "saved", "add", "badcat", "x", "--category", "nonsense!!"])
    assert r.exit_code == 1
    assert "cannot save this search: cat: expects a category such as cs.LG, an archive such as cs" in r.output
    assert "got 'nonsense!!'" in r.output
    r = run(cli, [*base, "saved", "add", "anon", "x", "--author", "-"])
    assert r.exit_code == 1 and "an author needs a name with a letter" in r.output
    with pytest.raises(L.LibraryError, match="lang: one of en, zh"):
        L.save_search(store, "x2", "ok", {"lang": "fr"})
    assert L.saved_searches(store) == []
    for name in (".", ".."):
        r = run(cli, [*base, "tag", "add", name, _ids(store, 1)[0]])
        assert r.exit_code == 1 and "a tag name cannot be . or .." in r.output
    assert L.tags(store) == [] and L.add_to_tag(store, "...", _ids(store, 1)) == 1  # only . and .. are paths


def _library(**parts) -> dict:
    return {"format": L.FORMAT, "version": 1, **parts}


def _nothing_written(store: Store) -> bool:
    return L.tags(store) == [] and L.dismissed(store) == [] and L.saved_searches(store) == []


def test_an_import_repeating_an_id_the_store_lacks_imports_it_once_and_all_of_the_file(store, tmp_path):
    """`tag import` of a file whose tag repeated an id this store lacks died with a traceback
    (sqlite3.IntegrityError: UNIQUE constraint failed: tag_papers.tag, tag_papers.paper), the tags
    before it written, that tag left empty and the saved searches after it never imported."""
    from click.testing import CliRunner

    from paperdex.cli import cli

    a = _ids(store, 1)[0]
    data = _library(
        tags=[{"name": "first", "papers": [a]}, {"name": "second", "papers": ["gone-1", "gone-1", f"{a}", a]}],
        saved_searches=[{"name": "s", "query": "diffusion", "params": {}}],
    )
    f = tmp_path / "lib.json"
    f.write_text(json.dumps(data))
    r = CliRunner().invoke(cli, ["--data-dir", str(store.data_dir), "tag", "import", str(f)])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    assert json.loads(r.output) == {"tags": 2, "papers": 3, "dismissed": 0, "saved_searches": 1}
    assert L.tag_papers(store, "first") == [a] and set(L.tag_papers(store, "second")) == {"gone-1", a}
    assert L.get_saved(store, "s").query == "diffusion"
    f.write_text(json.dumps({**data, "tags": [{"name": "third", "papers": [a]}], "dismissed": a}))
    r = CliRunner().invoke(cli, ["--data-dir", str(store.data_dir), "tag", "import", str(f)])
    assert r.exit_code == 1 and "Traceback" not in r.output and len(r.output.splitlines()) == 1, r.output
    assert f'the library file\'s dismissed: must be a list, got "{a}"; nothing was imported' in r.output
    assert [t.name for t in L.tags(store)] == ["first", "second"]


BAD_FIELDS = [  # a body, the field the refusal names, and what it says of it
    ({"tags": [{"name": "t", "papers": "notalist"}]}, "tags[0].papers", 'must be a list, got "notalist"'),
    ({"tags": [{"name": "t", "papers": "abc"}]}, "tags[0].papers", 'must be a list, got "abc"'),
    ({"tags": [{"name": "t", "papers": ["2505.01917", 1, 2]}]}, "tags[0].papers[1]", "must be text, got 1"),
    ({"tags": [{"name": "ok", "papers": []}, {"name": "t", "papers": ["../etc"]}]}, "tags[1].papers[0]", "'..'"),
    ({"tags": [{"name": "t", "papers": []}], "dismissed": "2505.01917"}, "dismissed", "must be a list"),
    ({"tags": [{"name": "t", "papers": []}], "version": "1"}, "version", 'must be a whole number, got "1"'),
    ({"tags": [{"name": "a/b", "papers": []}]}, "tags[0].name", "a tag name cannot be . or .."),
    ({"tags": [{"name": "t", "papers": [], "created": "yesterday"}]}, "tags[0].created", "2026-01-31T12:00:00Z"),
    ({"saved_searches": [{"name": "s", "query": "x"}], "tags": [{"name": "t"}]}, "tags[0].papers", "is missing"),
]


@pytest.mark.parametrize(("body", "field", "says"), BAD_FIELDS)
def test_an_import_with_a_bad_field_names_it_and_writes_nothing(store, body, field, says):
    """`"papers": "notalist"` was read letter by letter (a 500: the letter t twice), "abc" kept
    as the ids a, b and c, numbers and `../etc` kept as ids, a `dismissed` string ignored and a
    `"version": "1"` taken; each tag was written before the next was read."""
    with pytest.raises(L.LibraryError) as e:
        L.import_json(store, _library(**body))
    assert e.value.message.startswith(f"the library file's {field}: ") and says in e.value.message
    assert e.value.message.endswith("; nothing was imported") and e.value.status == 400
    assert e.value.message.in_lang("zh").startswith(f"文库文件的 {field}：")
    assert _nothing_written(store)


def test_an_import_keeps_the_marks_and_times_of_papers_this_store_lacks(store, tmp_path):
    """A library imported on a new machine before its first sync lost its "not interested" marks
    (`"dismissed": 0`), while its tags kept the ids; each tag and saved search was dated the
    import, not its creation."""
    a, b = _ids(store, 2)
    L.add_to_tag(store, "robots", [a])
    L.dismiss(store, [b])
    L.save_search(store, "s", "diffusion")
    data = L.export_json(store)
    data["tags"][0]["created"] = "2020-01-02T03:04:05Z"
    data["saved_searches"][0]["created"] = "2021-02-03T04:05:06Z"
    fresh = Store(tmp_path / "fresh")
    try:
        got = L.import_json(fresh, data)
        assert got == {"tags": 1, "papers": 1, "dismissed": 1, "saved_searches": 1}
        assert L.dismissed(fresh) == [b] and L.tag_papers(fresh, "robots") == [a]
        assert L.get_tag(fresh, "robots").created == "2020-01-02T03:04:05Z"
        assert L.get_saved(fresh, "s").created == "2021-02-03T04:05:06Z"
        again = L.export_json(fresh)
        assert again["dismissed"] == [b] and again["tags"][0]["papers"] == [a]
        fresh.upsert([store.get(b)])  # synced later: the mark holds for the paper
        assert L.undismiss(fresh, [b]) == 1
    finally:
        fresh.close()

"""`paperdex export` on the fixture store: a query exports what `paperdex search` says matches
(not the related papers after them, not a silent first 200), ids follow `show`'s rule, and
every mistake is one line on stderr."""

from __future__ import annotations

import re
import resource
import subprocess
import sys

from click.testing import CliRunner

from paperdex.cli import cli


def run(data_dir, *args):
    return CliRunner().invoke(cli, ["--data-dir", str(data_dir), *map(str, args)], catch_exceptions=False)


def keys(out: str) -> list[str]:
    return re.findall(r"^@\w+\{([^,]+),", out, re.M)


def eprints(out: str) -> list[str]:
    return re.findall(r"^  eprint +=\s*\{([^}]+)\}", out, re.M)


def search_ids(data_dir, q: str) -> tuple[int, list[str]]:
    """(total, ids of the matched papers in their order) as the service's search pages them."""
    from paperdex import service
    from paperdex.settings import Settings
    from paperdex.store import Store

    st = Settings.from_env(data_dir=data_dir)
    with Store(data_dir, readonly=True) as store:
        pool = service.Local(store, st.backend, 60, st.embedding, st.zh_dict)
        ids: list[str] = []
        for page in range(1, 100):
            res = service.search(pool, service.SearchParams(q=q, page=page, per_page=100), facets=False)
            ids += [h.paper.id for h in res.hits if h.tier != "related"]
            if len(ids) >= res.total or len(res.hits) < 100:
                return res.total, ids[: res.total]
    raise AssertionError("more than 99 pages")


def test_a_query_exports_its_matched_papers_not_the_related_ones(built_store_dir):
    """'weight decay': 3 papers match and 22 more are listed as related; the .bib holds the 3."""
    total, ids = search_ids(built_store_dir, "weight decay")
    assert total == 3
    r = run(built_store_dir, "export", "weight decay")
    assert r.exit_code == 0, r.output
    assert eprints(r.stdout) == ids  # the search's order
    assert r.stderr == ""  # nothing was cut


def test_a_query_is_not_cut_at_200_and_a_cut_is_said(built_store_dir):
    total, ids = search_ids(built_store_dir, "model")
    assert total == 265
    r = run(built_store_dir, "export", "model", "-n", 10_000)
    assert r.exit_code == 0 and eprints(r.stdout) == ids  # was the first 200
    r = run(built_store_dir, "export", "model", "-n", 20)
    assert eprints(r.stdout) == ids[:20]
    assert "exported 20 of the 265 papers that match; `-n 265` exports them all" in r.stderr


def test_the_limit_is_checked_and_notices_are_shown(built_store_dir):
    for n in (0, -5, 10_001):
        r = run(built_store_dir, "export", "model", "-n", n)
        assert r.exit_code == 1 and r.stdout == "", n  # -n 0 and -n -5 exported one entry
        assert "limit must be between 1 and 10000" in r.stderr
    r = run(built_store_dir, "export", "qwxzv plorbnik")
    assert r.exit_code == 1 and r.stdout == ""
    assert "no paper contains" in r.stderr and "nothing to export" in r.stderr


def test_ids_follow_shows_rule_and_an_unknown_one_is_named(built_store_dir):
    r = run(built_store_dir, "export", "2505.13738v2", "arXiv:2505.13738", "https://arxiv.org/abs/2504.17160v1")
    assert r.exit_code == 0, r.output
    assert eprints(r.stdout) == ["2505.13738", "2504.17160"]  # each paper once
    r = run(built_store_dir, "export", "2505.13738", "nope")  # was a search for "2505.13738 nope"
    assert r.exit_code == 1 and r.stdout == "" and "not in this store: nope" in r.stderr
    r = run(built_store_dir, "export", "2505.13738", "9999.99999", "250513738")
    assert r.exit_code == 1 and "not in this store: 9999.99999, 250513738" in r.stderr


def test_an_unwritable_output_is_one_line(built_store_dir, tmp_path):
    r = run(built_store_dir, "export", "2505.13738", "-o", tmp_path / "missing" / "x.bib")
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert r.stderr.strip() == f"Error: cannot write {tmp_path / 'missing' / 'x.bib'}: No such file or directory"
    r = run(built_store_dir, "export", "2505.13738", "-o", tmp_path / "x.bib")
    assert r.exit_code == 0 and r.stderr.strip() == f"wrote 1 entry to {tmp_path / 'x.bib'}"
    assert keys((tmp_path / "x.bib").read_text()) == ["bergsma2025power"]


def test_an_output_that_cannot_be_written_is_said_before_the_search(built_store_dir, tmp_path):
    """`export model -o missing/x.bib` said "note: exported 100 of the 265 papers that match;
    `-n 265` exports them all", then that it could not write: nothing had been exported. Now
    the one error, found before the search runs."""
    target = tmp_path / "missing" / "x.bib"
    r = run(built_store_dir, "export", "model", "-o", target)
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == f"Error: cannot write {target}: No such file or directory\n"
    assert not target.parent.exists()


def _export_with_small_files(data_dir, out, limit: int = 100_000) -> subprocess.CompletedProcess:
    """`paperdex export model -n 200 -o OUT` where no file may grow past `limit` bytes: its
    write fails part way, as on a full disk."""

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(data_dir), "export", "model", "-n", "200"]
    return subprocess.run([*cmd, "-o", str(out)], preexec_fn=small_files, capture_output=True, text=True, timeout=300)


def test_a_write_that_fails_leaves_no_partial_file(built_store_dir, tmp_path):
    """A write cut short (a file-size limit here, a full disk in life) left the export's first
    100 KB as the file, over the .bib that was there. Now that .bib is as it was, a new file is
    not made, and no part of the export is left beside them."""
    mine = tmp_path / "refs.bib"
    mine.write_text("@misc{mine, title = {Kept}}\n")
    r = _export_with_small_files(built_store_dir, mine)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1] == f"Error: cannot write {mine}: File too large"
    assert mine.read_text() == "@misc{mine, title = {Kept}}\n"
    r = _export_with_small_files(built_store_dir, tmp_path / "new.bib")
    assert r.returncode == 1 and r.stderr.splitlines()[-1].startswith("Error: cannot write")
    assert [p.name for p in tmp_path.iterdir()] == ["refs.bib"]


def test_a_pipe_and_a_symlink_are_written_as_before(built_store_dir, tmp_path):
    """-o /dev/stdout still writes to the pipe it names, and a symlink stays a link to the file
    it names, which gets the export (a new file is written beside it and renamed over it)."""
    cmd = [sys.executable, "-m", "paperdex", "--data-dir", str(built_store_dir), "export", "2505.13738"]
    r = subprocess.run([*cmd, "-o", "/dev/stdout"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and keys(r.stdout) == ["bergsma2025power"], r.stderr
    (tmp_path / "refs.bib").write_text("old\n")
    (tmp_path / "link.bib").symlink_to(tmp_path / "refs.bib")
    r = run(built_store_dir, "export", "2505.13738", "-o", tmp_path / "link.bib")
    assert r.exit_code == 0 and (tmp_path / "link.bib").is_symlink()
    assert keys((tmp_path / "refs.bib").read_text()) == ["bergsma2025power"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bib", "refs.bib"]

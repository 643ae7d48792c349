"""`paperdex export` on the fixture store: a query exports what `paperdex search` says matches
(not the related papers after them, not a silent first 200), ids follow `show`'s rule, and
every mistake is one line on stderr."""

from __future__ import annotations

import re

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

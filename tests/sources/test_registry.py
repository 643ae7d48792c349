"""Sources register themselves: one module declares a source's name, CLI options, sources.toml
section and keys, merge ranks, sync plan and job; ingest, sync, load_config and the merge read
the registry."""

from __future__ import annotations

from datetime import date

import click
import httpx
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.paper import Paper
from paperdex.sources import registry
from paperdex.sources import sync as sources_sync
from paperdex.sources.merge import merge_papers
from paperdex.store import Store

from .conftest import FakeClock, Router, fixture, param, xml


def test_the_builtin_sources_are_registered_in_run_order():
    assert registry.network_names() == ("arxiv", "openreview", "hf")
    assert sources_sync.NETWORK_SOURCES == ("arxiv", "openreview", "hf")
    assert {s.name for s in registry.file_sources()} == {"bibtex"}
    assert set(registry.ranks()) == {"arxiv", "arxiv-rss", "file", "openreview", "hf", "bibtex", "seed", "comment"}
    assert registry.sections() == {
        "arxiv": registry.get("arxiv"),
        "openreview": registry.get("openreview"),
        "huggingface": registry.get("hf"),
        "hf": registry.get("hf"),
    }
    for part in ("[arxiv]", "[openreview]", "[huggingface]"):
        assert part in sources_sync.EXAMPLE_CONFIG


def test_two_sources_cannot_claim_one_option_or_section():
    with pytest.raises(ValueError, match="both take venue"):
        registry.register(
            registry.Source(name="dup", ranks={}, run=lambda *a: ([], []), options=(click.Option(["--venue"]),))
        )
    with pytest.raises(ValueError, match=r"both claim \[hf\]"):
        registry.register(registry.Source(name="dup", ranks={}, run=lambda *a: ([], []), sections=("hf",)))
    assert "dup" not in registry.load()


@pytest.fixture
def toy(monkeypatch):
    """A new source, declared in one place as a module would: no other file edited."""
    monkeypatch.setattr(registry, "_SOURCES", dict(registry.load()))
    monkeypatch.setattr(registry, "_RANKS", dict(registry.ranks()))
    calls: list[dict] = []

    def run(store, client, opts, section, today):
        calls.append({"opts": opts, "section": section, "client": client})
        return [Paper(id="toy:1", title="A toy paper about widgets", authors=["Ann Lee"], sources=["toy"])], []

    src = registry.register(
        registry.Source(
            name="toy",
            sections=("toy",),
            config_keys=frozenset({"shelves", "url"}),
            options=(click.Option(["--shelf"], help="toy: a shelf."),),
            ranks={"toy": {"title": 99}},
            plan=lambda section, store, today: [(f"toy {s}", {"shelf": s}) for s in section.get("shelves", [])],
            run=run,
            client=lambda section: "toy-client",
            uses_http=False,
            done=lambda store, opts: store.set_state("toy:last", opts["shelf"]),
        )
    )
    return src, calls


def test_a_registered_source_is_configured_planned_synced_and_ranked(toy, tmp_path):
    _, calls = toy
    d = tmp_path / "data"
    d.mkdir()
    (d / "sources.toml").write_text('[toy]\nshelves = ["a", "b"]\nurl = "http://127.0.0.1:1/"\n')
    cfg = sources_sync.load_config(d)
    with Store(d) as s:
        assert [label for _, label, _ in sources_sync.plan(cfg, s, date(2026, 6, 1))] == ["toy a", "toy b"]
        lines: list[str] = []
        total, failures = sources_sync.sync_sources(s, cfg, echo=lines.append, only=["toy"])
        assert failures == [] and total.added == 1 and lines[0].startswith("toy a: 1 added")
        assert [c["opts"]["shelf"] for c in calls] == ["a", "b"] and calls[0]["client"] == "toy-client"
        assert s.get_state("toy:last") == "b"
    (d / "sources.toml").write_text("[toy]\nshelf = 1\n")
    with pytest.raises(ValueError, match=r"unknown key\(s\) shelf in \[toy\]; known: shelves, url"):
        sources_sync.load_config(d)
    (d / "sources.toml").write_text('[toy]\nurl = "ftp://x"\n')
    with pytest.raises(ValueError, match=r"\[toy\] url must be an http\(s\) URL"):
        sources_sync.load_config(d)
    base = Paper(id="toy:1", title="Old title", sources=["openreview"])
    assert merge_papers(base, Paper(id="toy:1", title="New title", sources=["toy"])).title == "New title"


def test_unknown_sections_name_the_registered_ones(tmp_path):
    (tmp_path / "sources.toml").write_text("[semantic-scholar]\n")
    with pytest.raises(ValueError, match="known: arxiv, openreview, huggingface"):
        sources_sync.load_config(tmp_path)


def test_cli_ingest_arxiv_id_reaches_the_api(tmp_path, monkeypatch):
    """`ingest arxiv --id` (the source's own option) next to `ingest FILE --ids` (the vectors')."""
    clock = FakeClock()
    router = Router().add(
        lambda q: param(q, "id_list") == "2606.14795,2605.31457", xml(fixture("arxiv", "api_id_list.atom"))
    )
    monkeypatch.setattr(
        sources_sync,
        "http_factory",
        lambda source, section: sources_sync.HttpClient(
            transport=httpx.MockTransport(router), clock=clock, sleep=clock.sleep
        ),
    )
    r = CliRunner().invoke(
        cli, ["--data-dir", str(tmp_path), "ingest", "arxiv", "--id", "2606.14795", "--id", "2605.31457"]
    )
    assert r.exit_code == 0, r.output
    assert "added 2, updated 0, unchanged 0, rejected 0" in r.output


def test_cli_refuses_an_option_of_another_source(tmp_path):
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "ingest", "arxiv", "--venue", "ICLR.cc/2025/Conference"])
    assert r.exit_code == 2 and "--venue is an option of `ingest openreview`, not of `ingest arxiv`" in r.output
    f = tmp_path / "x.jsonl"
    f.write_text("")
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "ingest", str(f), "--date", "2026-06-01"])
    assert r.exit_code == 2 and "--date is an option of `ingest hf`, not of files" in r.output

"""One BibTeX writer: the JSON API, the MCP tool and `paperdex export` give one paper the same
entry, and that entry survives LaTeX, TeX specials and hostile braces."""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import replace

import click
from click.testing import CliRunner
from fastapi.testclient import TestClient

from paperdex.cli.sources import export
from paperdex.paper import Paper
from paperdex.settings import Settings
from paperdex.sources import bibtex
from paperdex.sources.merge import ingest_with_merge
from paperdex.store import Store

PAPERS = [
    Paper(
        id="2501.00001",
        title=r"$\beta$-{VAE} for R&D: 50% fewer \textbf{bits}",
        authors=['Lo{\\"\\i}c Matthey', "Ada Lovelace"],
        abstract=r"We cut \emph{cost} by 95\% } and add {x = $\mathbb{R}^n$ # 1",
        categories=["cs.LG", "stat.ML"],
        published="2025-01-02",
        code_url="javascript:alert(1)",
        sources=["arxiv"],
    ),
    Paper(
        id="openreview:Ab12_x",
        title="Clipping Without Heavy Tails: the $\\ell_2$ case",
        authors=["Aleksandr Shestakov"],
        abstract="Gradient clipping & friends.",
        venue="ICML 2026 poster",
        venue_area="Optimization · Stochastic",
        code_url="https://github.com/a/b",
        sources=["openreview"],
    ),
]


def _store(tmp_path) -> Store:
    s = Store(tmp_path / "data")
    ingest_with_merge(s, PAPERS)
    return s


def _export(data_dir, *ids: str) -> str:
    @click.group()
    @click.pass_context
    def g(ctx):
        ctx.obj = {"settings": Settings.from_env(data_dir=data_dir)}

    g.add_command(export)
    res = CliRunner().invoke(g, ["export", *ids])
    assert res.exit_code == 0, res.output
    return res.output


def keys_of(out: str) -> list[str]:
    return re.findall(r"^@\w+\{([^,]+),", out, re.M)


def _mcp_bibtex(data_dir, pid: str) -> str:
    from mcp import Client

    from paperdex.mcp_server import build_server

    async def go() -> str:
        async with Client(build_server(data_dir)) as c:
            r = await c.call_tool("get_paper", {"id": pid})
            assert not r.is_error
            return r.structured_content["bibtex"]

    out: dict = {}
    t = threading.Thread(target=lambda: out.update(v=asyncio.run(go())))  # a loop of its own
    t.start()
    t.join(120)
    return out["v"]


def test_api_mcp_and_export_give_the_same_entry(tmp_path):
    from paperdex.web.app import create_app

    _store(tmp_path).close()
    data = tmp_path / "data"
    client = TestClient(create_app(data, pool_size=1), base_url="http://localhost")
    for p in PAPERS:
        api = client.get(f"/api/papers/{p.id}").json()["bibtex"]
        assert api == _mcp_bibtex(data, p.id)
        assert _export(data, p.id) == api + "\n"
    first = client.get("/api/papers/2501.00001").json()["bibtex"]
    assert first.startswith("@article{matthey2025beta,\n")
    # TeX kept, specials escaped
    assert r"title        = {{$\beta$-{VAE} for R\&D: 50\% fewer \textbf{bits}}}," in first
    assert "journal      = {arXiv preprint arXiv:2501.00001}" in first
    assert 'author       = {Lo{\\"\\i}c Matthey and Ada Lovelace}' in first
    assert r"95\% \textbraceright{} and add \textbraceleft{}x = $\mathbb{R}^n$ \# 1" in first
    assert "javascript" not in first and "code " not in first
    second = client.get("/api/papers/openreview:Ab12_x").json()["bibtex"]
    assert second.startswith("@inproceedings{openreview:Ab12_x,\n")
    assert (
        "booktitle    = {ICML 2026}" in second
        and "venue        = {ICML 2026 poster}" in second
        and "code         = {https://github.com/a/b}" in second
    )


def test_entry_parses_back_to_the_same_text():
    for p in PAPERS:
        res = bibtex.parse_bibtex(bibtex.entry(p))
        assert res.errors == []
        (q,) = res.papers
        assert (q.id, q.abstract, q.venue, q.venue_area, q.categories) == (
            p.id,
            p.abstract.replace("95\\%", "95%"),  # an escaped % is stored as a plain one
            p.venue,
            p.venue_area,
            p.categories,
        )
        assert q.title == p.title.replace("{VAE}", "VAE")  # case-protecting braces are not kept


def test_stray_braces_cannot_write_fields():
    p = Paper(id="2501.00002", title="a} , note = {pwned", abstract="x}, author = {evil", authors=["A B"])
    res = bibtex.parse_bibtex(bibtex.entry(p))
    assert res.errors == []
    (q,) = res.papers
    assert q.authors == ["A B"] and q.comment is None
    assert (q.title, q.abstract) == (p.title, p.abstract)


def test_keys_are_unique_within_a_file():
    a = Paper(id="2501.00003", title="Deep nets", authors=["Ann Lee"], published="2025-01-03")
    b = Paper(id="2501.00004", title="Deep nets again", authors=["Bo Lee"], published="2025-01-04")
    text = bibtex.to_bibtex([a, b])
    assert "@article{lee2025deep," in text and "@article{lee2025deepa," in text
    assert text.count("\n\n@") == 1 and text.endswith("}\n")


# arXiv metadata the full 63k-paper export held: bare _ ^ $ in plain-text titles, an escaped
# brace inside \texttt{...}, an author ending in \\ (2504.02863, 2503.23447, 2606.22798, 2512.04219)
PLAIN_TEXT = [
    Paper(
        id="2504.02863",
        title="GS_DravidianLangTech@2025: CA^2ST, $\\ell_2$ and $x^2$ kept, for $500",
        authors=["Young-Jun_Lee", "Sathyanarayanan N. Aakur\\\\"],
        abstract="See \\texttt{\\textbackslash boxed\\{} and agentic_security; $$a_b$$ \\(c^d\\) costs $5.",
        published="2025-04-02",
        sources=["arxiv"],
    ),
]


def test_bare_tex_characters_are_escaped_outside_math_and_every_entry_parses(tmp_path):
    """pdflatex stopped with "Missing $ inserted" at a bare _ ^ or a lone $ of a title; the
    escaped brace and the trailing \\\\ made bibtexparser drop the entry."""
    import bibtexparser

    with Store(tmp_path / "data") as s:
        ingest_with_merge(s, PLAIN_TEXT)
    out = _export(tmp_path / "data", "2504.02863")
    assert (
        r"title        = {{GS\_DravidianLangTech@2025: CA\textasciicircum{}2ST, $\ell_2$ and $x^2$ kept,"
        r" for \$500}}," in out
    )
    assert r"author       = {Young-Jun\_Lee and Sathyanarayanan N. Aakur}," in out
    assert (
        r"abstract     = {See \texttt{\textbackslash boxed\textbraceleft{}} and agentic\_security;"
        r" $$a_b$$ \(c^d\) costs \$5.}" in out
    )
    lib = bibtexparser.parse_string(out)
    assert not lib.failed_blocks and len(lib.entries) == 1
    (q,) = bibtex.parse_bibtex(out).papers  # and read back as the text it was
    assert (q.title, q.authors[0]) == (PLAIN_TEXT[0].title, "Young-Jun_Lee")


def test_cite_keys_spell_accented_names_and_skip_tex(tmp_path):
    """Keys are what a user types: fernndezhernndez2025need, kcher, mller and zhu2025mathtt
    (2504.17160, 2503.15457) were the letters left after dropping the rest."""
    papers = [
        Paper(id="2504.17160", title="OUI Need to Talk About Weight Decay", authors=["Alberto Fernández-Hernández"]),
        Paper(id="2505.00001", title="NoPE at scale", authors=["Anna Köcher"]),
        Paper(id="2505.00002", title="Straße networks", authors=["Jan Müller"]),
        Paper(id="2505.00003", title="Straße networks", authors=["Jan Müller"]),
        Paper(id="2503.15457", title="Di$\\mathtt{[M]}$O: Distilling Masked Diffusion", authors=["Yuanzhi Zhu"]),
        Paper(id="2505.00004", title="$\\beta$-VAE, again", authors=["Łukasz Ødegård"]),
    ]
    with Store(tmp_path / "data") as s:
        ingest_with_merge(s, [replace(p, published="2025-05-01", sources=["arxiv"]) for p in papers])
    out = _export(tmp_path / "data", *(p.id for p in papers))
    assert keys_of(out) == [
        "fernandezhernandez2025need",
        "kocher2025nope",
        "muller2025strasse",
        "muller2025strassea",  # still unique within the file
        "zhu2025distilling",
        "odegard2025beta",
    ]


# Zotero's NeurIPS @inproceedings and arXiv @misc of one paper (they merge into 1706.03762),
# and a journal article with its volume and pages
ZOTERO = r"""
@inproceedings{vaswani_attention_2017,
  title = {Attention is {All} you {Need}}, volume = {30}, publisher = {Curran Associates, Inc.},
  booktitle = {Advances in {Neural} {Information} {Processing} {Systems}},
  author = {Vaswani, Ashish and Shazeer, Noam}, year = {2017},
}
@misc{vaswani_attention_2023,
  title = {Attention {Is} {All} {You} {Need}}, url = {http://arxiv.org/abs/1706.03762},
  publisher = {arXiv}, author = {Vaswani, Ashish and Shazeer, Noam}, month = aug, year = {2023},
}
@article{schoelkopf_kernel_1998,
  title = {Nonlinear {Component} {Analysis} as a {Kernel} {Eigenvalue} {Problem}},
  volume = {10}, number = {5}, journal = {Neural Computation}, pages = {1299--1319},
  author = {Sch{\"o}lkopf, Bernhard and Smola, Alexander}, month = jul, year = {1998},
}
"""


def test_export_writes_back_volume_and_pages_and_a_type_that_fits_its_venue(tmp_path):
    """A .bib from one's library came back without volume/pages/number, and the merged
    arXiv @misc + NeurIPS @inproceedings as a @misc with a booktitle (no style prints it)."""
    with Store(tmp_path / "data") as s:
        ingest_with_merge(s, bibtex.parse_bibtex(ZOTERO).papers)
    out = _export(tmp_path / "data", "1706.03762", "bib:schoelkopf_kernel_1998")
    neurips, kernel = out.split("\n\n")
    assert neurips.startswith("@inproceedings{vaswani_attention_2023,\n")
    assert "booktitle    = {Advances in Neural Information Processing Systems}" in neurips
    assert "volume       = {30}" in neurips and "publisher" not in neurips  # Zotero's publisher = {arXiv} is none
    assert kernel.startswith("@article{schoelkopf_kernel_1998,\n")
    for line in ("journal      = {Neural Computation}", "volume       = {10}", "number       = {5}"):
        assert line in kernel
    assert "pages        = {1299--1319}" in kernel
    back = {p.id: p.slot("bibtex") for p in bibtex.parse_bibtex(out).papers}  # and they read back
    assert (back["bib:schoelkopf_kernel_1998"]["pages"], back["1706.03762"]["volume"]) == ("1299--1319", "30")

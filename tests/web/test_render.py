"""LaTeX made legible and escaping done right, unit by unit."""

from __future__ import annotations

from paperdex.paper import Paper
from paperdex.search import stems_of as _stems
from paperdex.web import render


def test_math_and_markup_become_readable_text():
    assert render.plain_tex(r"$\beta$-VAE") == "β-VAE"
    assert render.plain_tex(r"$\mathcal{O}(n^2)$ on $\mathbb{R}^{d}$") == "O(n²) on ℝ^d"
    assert render.plain_tex(r"\textbf{Fast} and **bold**, 10\% off") == "Fast and bold, 10% off"
    assert render.plain_tex(r"$\frac{1}{2}$ and $x_{i}$") == "1/2 and xᵢ"
    assert render.plain_tex("costs \\$5, not $5") == "costs $5, not $5"


def test_escaping_with_highlight_and_formatting():
    out = str(render.tex_html(r"<b>x</b> \textbf{attention} is all", _stems(("attention",))))
    assert out == "&lt;b&gt;x&lt;/b&gt; <strong><mark>attention</mark></strong> is all"


def test_private_markers_in_data_cannot_inject_tags():
    out = str(render.tex_html("a\ue002b\ue003 <i>"))
    assert "<strong>" not in out and "&lt;i&gt;" in out


def test_snippet_keeps_tags_balanced():
    text = "filler words " * 40 + r"\textbf{zebra finch song " + "more " * 80 + "}"
    out = str(render.snippet_html(text, _stems(("zebra",)), width=120))
    assert out.count("<strong>") == out.count("</strong>") and "<mark>zebra</mark>" in out


def test_authors_and_links():
    p = Paper(id="2501.00001", title="t", authors=[f"A{i}" for i in range(12)], code_url="javascript:alert(1)")
    assert render.authors_line(p, "et al.").endswith("A9 et al.")
    assert render.authors_line(p, "等").endswith("A9等")
    assert "code" not in render.safe_links(p) and render.safe_links(p)["pdf"] == "https://arxiv.org/pdf/2501.00001"


def test_bibtex():
    p = Paper(
        id="2501.00001", title=r"Fast $\beta$ {Nets}", authors=["Ada Lovelace", "Alan Turing"], listed="2025-01-02"
    )
    b = render.bibtex(p)
    assert b.startswith("@article{lovelace2025fast,")
    assert "author       = {Ada Lovelace and Alan Turing}" in b and "title        = {Fast β Nets}" in b

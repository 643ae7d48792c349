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
    assert render.authors_line(p, "等").endswith("A8, A9 等")
    assert "code" not in render.safe_links(p) and render.safe_links(p)["pdf"] == "https://arxiv.org/pdf/2501.00001"


def test_bibtex():
    """The page's BibTeX is the one writer's (sources/bibtex.entry, tested in tests/sources), the
    entry to cite: without the export's bookkeeping (listed, published = {unknown})."""
    from paperdex.sources.bibtex import entry

    p = Paper(
        id="2501.00001", title=r"Fast $\beta$ {Nets}", authors=["Ada Lovelace", "Alan Turing"], listed="2025-01-02"
    )
    cited, exported = render.bibtex(p), entry(p)
    assert cited.startswith("@article{lovelace2025fast,")
    assert "listed" in exported and "published" in exported
    assert "listed" not in cited and "published" not in cited and "unknown" not in cited
    assert [line for line in exported.splitlines() if not line.lstrip().startswith(("listed", "published"))] == (
        cited.splitlines()
    )


def test_math_fallback_reads_like_math():
    """The text a reader without JavaScript sees (the issue's leaks: widetildeO, frac1T, citep)."""
    assert render.plain_tex(r"$\tilde O(\sqrt{T})$") == "Õ(√T)"
    assert render.plain_tex(r"$\widetilde{O}(\sqrt{H^5SAT})$") == "Õ(√(H⁵SAT))"
    assert render.plain_tex(r"$\tilde{O}(\frac{1}{T^{1/3}})$") == "Õ(1/(T^(1/3)))"
    assert render.plain_tex(r"as shown \citep{smith2020}, and {\eta} is") == "as shown, and η is"
    assert render.plain_tex(r"$\|x\|_2$ and $\hat{\theta}_t$ in $\{0, 1\}$") == "‖x‖₂ and θ̂_t in {0, 1}"


def test_math_carries_its_tex_for_katex():
    out = str(render.tex_html(r"regret $\tilde O(\sqrt{T})$ and $\frac{a<b}{2}$, for $\beta$ and $n^2$"))
    assert '<span class="math" data-tex="\\tilde O(\\sqrt{T})">Õ(√T)</span>' in out
    assert 'data-tex="\\frac{a&lt;b}{2}"' in out  # the attribute is escaped like any text
    # math its text form says exactly is not typeset (a page with only such math loads no KaTeX)
    assert '<span class="math">β</span>' in out and '<span class="math">n²</span>' in out


def test_theta_text_subscript_reads_as_text():
    assert render.plain_tex(r"$\Theta_\text{post}$ and $L_{\text{KL}}$, $W^{\top}$") == "Θ_post and L_KL, W^⊤"


def test_urls_in_abstracts_become_safe_links():
    text = "Code: https://github.com/a/b_c~d. Also javascript:alert(1) and (see http://x.org/p)."
    out = str(render.tex_html(text, _stems(("github",))))
    assert '<a class="extlink" href="https://github.com/a/b_c~d" rel="noopener nofollow">' in out
    assert "<mark>github</mark>" in out and out.count("<a ") == 2 and 'href="http://x.org/p"' in out
    assert "javascript:alert(1)" in out and 'href="javascript' not in out
    # a snippet never links (it sits in the <summary> that opens the abstract)
    assert "<a " not in str(render.snippet_html(text, _stems(("code",))))


def test_authors_shown_names_the_searched_author_past_the_tenth():
    from paperdex.paper import Paper

    p = Paper(id="x", title="t", abstract="a", authors=[f"A{i} Z" for i in range(1, 13)])
    twelfth = render.authors_shown(p, [["a12", "z"]])
    assert twelfth["authors_later"] == ["A12 Z"] and twelfth["authors_gap"] and twelfth["authors_more"]  # A11 cut
    eleventh = render.authors_shown(p, [["a11", "z"]])
    assert eleventh["authors_later"] == ["A11 Z"] and not eleventh["authors_gap"]  # right after the tenth: no "…"
    assert render.brief(p, [["a11", "z"]])["authors"][9:] == ["A10 Z", "A11 Z", "et al."]
    assert render.authors_shown(p, [])["authors_later"] == [] and render.brief(p)["authors"][-1] == "et al."


def test_a_card_lists_first_the_categories_a_prefix_asked_for():
    """A hit of cat:cs.C* listed its categories as the record has them (cs.AI before the cs.CV
    it was found by): the card's order reads the cat: rule itself, prefix included; an ACM
    class is in no archive."""
    cats = ["cs.AI", "C.3; C.4", "cs.CV", "cs.CL"]
    assert render.ordered_categories(cats, render.query_categories("robots cat:cs.C*", None)) == [
        "cs.CV",
        "cs.CL",
        "cs.AI",
        "C.3; C.4",
    ]
    assert render.ordered_categories(cats, ["c*"]) == ["cs.AI", "cs.CV", "cs.CL", "C.3; C.4"]

"""Turning paper text into safe, readable HTML (the legible text itself comes from
paperdex.text.latex: :func:`parse_tex`).

Paper text is data, never markup: everything goes through :func:`html.escape` here, and the
only tags that come out are the ones this module writes (``<mark>``, ``<strong>``, ``<em>``,
``<span class="math" data-tex="…">``, ``<a rel="noopener nofollow">`` for http(s) URLs). Math is
written as readable text (``$\\beta$-VAE`` reads ``β-VAE``), what a reader without JavaScript
sees, and as its TeX source in ``data-tex``, which the local KaTeX (``static/katex``) typesets.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from markupsafe import Markup

from paperdex.paper import Paper, category_asked
from paperdex.search import Hit, mark, snippet
from paperdex.search import query as Q
from paperdex.search.planning import zh_alt
from paperdex.text import has_cjk, index_words, stem
from paperdex.text.latex import (
    BOLD_OFF,
    BOLD_ON,
    EM_OFF,
    EM_ON,
    LINK_OFF,
    LINK_ON,
    MARKERS,
    MATH_OFF,
    MATH_ON,
    REF_BASE,
    clean_tex,
    parse_tex,
    plain_tex,
    safe_url,
)
from paperdex.text.names import matched as matched_authors
from paperdex.web import assets
from paperdex.web.links import quoted, safe_paper

# the markers that open a run (its kind, its tag) and those that close one; a link's tag has its URL
_OPEN = {
    MATH_ON: ("math", '<span class="math">'),
    BOLD_ON: ("b", "<strong>"),
    EM_ON: ("em", "<em>"),
    LINK_ON: ("link", ""),
}
_CLOSE = {MATH_OFF: "math", BOLD_OFF: "b", EM_OFF: "em", LINK_OFF: "link"}
_CLOSE_TAG = {"math": "</span>", "b": "</strong>", "em": "</em>", "link": "</a>"}

_MARKER_SPLIT = re.compile("([\ue000-\ue0ff])")
# TeX whose text form cannot say it: a fraction, a root, an accent, a stacked or grouped
# script, a matrix. Everything else ($\beta$, $O(n)$, $10\times$, $x_i$, $n^2$) reads the same as
# text, so it is not typeset and a page with only such math does not load KaTeX at all.
_TYPESET = re.compile(
    r"\\(?:[dt]?frac|sqrt|binom|over|begin|hat|widehat|tilde|widetilde|bar|overline|underline|vec|dot|ddot|"
    r"overbrace|underbrace|stackrel|overset|underset|xrightarrow|xleftarrow|left|mathcal|mathfrak|mathscr|boldsymbol|"
    r"sum|prod|int|oint|lim|bigcup|bigcap)(?![A-Za-z])"
    r"|[\^_]\s*\{[^{}]*[\^_{]"
)
# What a record's `sources` are called on the paper page; "file" and "seed" (a JSONL import, the
# bundled sample) say nothing to a reader.
SOURCE_NAMES = {
    "arxiv": "arXiv", "arxiv-rss": "arXiv", "openreview": "OpenReview", "hf": "Hugging Face",
    "comment": "arXiv", "bibtex": "BibTeX",
}  # fmt: skip


def segments_html(segments: list[tuple[str, bool]], maths: tuple[str, ...] = (), urls: tuple[str, ...] = ()) -> Markup:
    """Escape (segment, is_match) runs, wrap matches in <mark>, and turn the formatting markers
    into balanced tags (a snippet window can cut a bold, math or link run in half). `maths` and
    `urls` are the text's TeX sources and URLs from :func:`parse_tex`, which the markers name."""
    pieces = [(x, hit) for text, hit in segments for x in ([text] if hit else _MARKER_SPLIT.split(text)) if x or hit]
    out: list[str] = []
    stack: list[str] = []
    i = 0
    while i < len(pieces):
        piece, hit = pieces[i]
        i += 1
        if hit:
            out.append(f"<mark>{html.escape(MARKERS.sub('', piece))}</mark>")
            continue
        kind, opening = _OPEN.get(piece) or (_CLOSE.get(piece), None)
        if kind is None:
            if len(piece) > 1 or not ("\ue000" <= piece <= "\ue0ff"):
                out.append(html.escape(piece))
        elif opening is None:
            while kind in stack:  # close inner runs too, keeping tags nested
                k = stack.pop()
                out.append(_CLOSE_TAG[k])
                if k == kind:
                    break
        else:
            ref = None
            if i < len(pieces) and not pieces[i][1] and len(pieces[i][0]) == 1 and ord(pieces[i][0]) >= REF_BASE:
                ref = ord(pieces[i][0]) - REF_BASE
                i += 1
            tag = None if kind in stack else _open_tag(kind, opening, ref, maths, urls)
            if tag is not None:
                out.append(tag)
                stack.append(kind)
    while stack:
        out.append(_CLOSE_TAG[stack.pop()])
    return Markup("".join(out))


def _open_tag(kind: str, opening: str, ref: int | None, maths: tuple[str, ...], urls: tuple[str, ...]) -> str | None:
    """The tag opening a run; its TeX or URL is the `ref`-th of the text's. None for a link
    whose URL was cut off (a snippet's window): its text stays plain."""
    if kind == "math":
        tex = maths[ref] if ref is not None and ref < len(maths) else None
        return f'<span class="math" data-tex="{html.escape(tex)}">' if tex and _TYPESET.search(tex) else opening
    if kind == "link":
        url = safe_url(urls[ref]) if ref is not None and ref < len(urls) else None
        return None if url is None else f'<a class="extlink" href="{html.escape(url)}" rel="noopener nofollow">'
    return opening


def tex_html(text: str, stems: frozenset[str] = frozenset(), links: bool = True) -> Markup:
    """Whole text as safe HTML, query words highlighted; `links`: False inside a link (a card title)."""
    clean, maths, urls = parse_tex(text)
    return segments_html(mark(clean, stems), maths, urls if links else ())


def snippet_html(text: str, stems: frozenset[str], width: int = 320) -> Markup:
    """The best window of an abstract as safe HTML; no links: a click on it opens the abstract."""
    clean, maths, _ = parse_tex(text)
    return segments_html(snippet(clean, stems, width), maths)


def author_names(p: Paper, cut: int = 10) -> tuple[list[str], bool]:
    """The first `cut` authors, and whether there are more (then: "et al." / "等")."""
    return p.authors[:cut], len(p.authors) > cut or p.authors_truncated


def authors_shown(p: Paper, phrases: list[list[str]], cut: int = 10) -> dict[str, Any]:
    """A card's authors: the first `cut`, then the ones an `au:` search matched past them (after
    "…": the name searched for is never hidden behind "et al."), the matched ones marked."""
    first, more = author_names(p, cut)
    hit = matched_authors(p.authors, phrases)
    later = [a for a in hit if a not in first]
    return {
        "authors": first,
        "authors_later": later,
        "authors_gap": bool(later) and p.authors.index(later[0]) > cut,  # "…": names skipped before them
        "authors_matched": hit,
        "authors_more": more and len(p.authors) > len(first) + len(later) or p.authors_truncated,
    }


def authors_line(p: Paper, etal: str, cut: int = 10, phrases: list[list[str]] | None = None) -> str:
    """First `cut` authors, then "et al." (or "等": "A, B, … J 等", as Chinese venue search writes
    it); with an `au:` search's `phrases`, the names it matched past them (`authors_shown`)."""
    a = authors_shown(p, phrases or [], cut)
    line = ", ".join(a["authors"])
    if a["authors_later"]:
        line += ", " + "… " * a["authors_gap"] + ", ".join(a["authors_later"])
    return f"{line} {etal}" if a["authors_more"] else line


def brief(p: Paper, phrases: list[list[str]] | None = None) -> dict[str, Any]:
    """A paper in a list of the JSON API or an MCP tool: its id, plain title, first authors (and,
    after "…", those an `au:` search for `phrases` matched past them: `authors_shown`)."""
    a = authors_shown(p, phrases or [])
    later = ["…"] * a["authors_gap"] + a["authors_later"]
    return {
        "id": p.id,
        "title": plain_tex(p.title),
        "authors": a["authors"] + later + (["et al."] if a["authors_more"] else []),
        "date": p.date,
        "categories": p.categories,
    }


def ranks(h: Any) -> dict[str, Any]:
    """A hit's "why" in a JSON answer: its rank on each side, its score."""
    return {"lexical_rank": h.lexical_rank, "dense_rank": h.dense_rank, "score": round(h.score, 6)}


def marked_html(segments: list[tuple[str, bool]]) -> str:
    """Escaped HTML with <mark> around matches: paper text is never trusted as markup."""
    return "".join(f"<mark>{html.escape(s)}</mark>" if hit else html.escape(s) for s, hit in segments)


def hit_json(h: Hit) -> dict[str, Any]:
    """A search hit as /api/search and the CLI's --json give it, snippet and title as escaped HTML."""
    return {**h.to_dict(), "snippet_html": marked_html(h.snippet), "title_html": marked_html(h.title_marked)}


def paged_dict(pool: Any, found: Any, rows: str, **more: Any) -> dict[str, Any]:
    """One page of a search (rows "hits") or a listing ("papers") as the API, the .json views and
    `paperdex search --json` give it: total, tiers, notices, its page count, links filtered as
    the pages do, machine summaries, and `more`; one shape, so a script reads one format."""
    from paperdex.discover import summaries

    d = {**found.to_dict(), **more}
    d["pages"] = found.pages
    d[rows] = summaries.attach_json(pool, [safe_paper(x) for x in d[rows]])
    return d


def safe_links(p: Paper) -> dict[str, str]:
    return {k: v for k, v in ((k, safe_url(v)) for k, v in p.links().items()) if v}


def sources_shown(p: Paper) -> list[str]:
    """The sources worth a line on the paper page: only when the record was merged from two or
    more of them, which says where its venue, decision or upvotes come from; one is noise."""
    names = list(dict.fromkeys(SOURCE_NAMES[s] for s in p.sources if s in SOURCE_NAMES))
    return names if len(names) > 1 else []


def bibtex(p: Paper) -> str:
    """The paper's BibTeX entry to cite, by the one writer `paperdex export` uses too (without
    the export's bookkeeping fields)."""
    from paperdex.sources.bibtex import entry

    return entry(p, cite=True)


# --- what a card shows ---------------------------------------------------------------------------
# One view model for every card of every page, drawn by one macro (macros.html, paper_card), so a
# line added to a card appears everywhere.
PRESENTATIONS = ("oral", "spotlight", "poster", "highlight")
DECISIONS = Q.DECISIONS  # the decisions a card names, as the `decision:` filter takes them


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def signals(p: Paper) -> dict[str, Any]:
    """What the sources (Hugging Face, GitHub, OpenReview) know about a paper beyond its text."""
    hf, orv = p.slot("hf"), p.slot("openreview")
    code = safe_url(p.code_url) or safe_url(hf.get("github_repo"))
    stars = _int(p.extra.get("code_stars"))
    if stars is None:
        stars = _int(hf.get("github_stars"))
    # 1234 -> 1.2k, as GitHub and Hugging Face print counts
    stars_shown = f"{stars / 1000:.1f}k".replace(".0k", "k") if stars and stars >= 1000 else str(stars)
    return {
        "upvotes": _int(hf.get("upvotes")),
        "comments": _int(hf.get("comments")),
        "hf_url": safe_url(hf.get("url")),
        "project": safe_url(hf.get("project_page")),
        "code": code,
        "stars": stars_shown if code and stars else None,
        "stars_n": stars,
        "organization": hf.get("organization") if isinstance(hf.get("organization"), str) else None,
        "decision": orv.get("decision") if orv.get("decision") in DECISIONS else None,
        "presentation": orv.get("presentation") if orv.get("presentation") in PRESENTATIONS else None,
    }


def ordered_categories(cats: list[str], wanted: list[str]) -> list[str]:
    """A paper's categories with those a search asked for first."""
    return sorted(cats, key=lambda c: not any(category_asked(c, w) for w in wanted))


def asked_categories(nodes: Iterable[Any]) -> list[str]:
    """The categories a search asked for (cat: clauses, in AND or OR, not those it leaves out):
    a card lists these first, so a hit found by cat:cs.LG shows cs.LG, not only its primary."""
    out: list[str] = []
    for n in nodes:
        if isinstance(n, Q.Filter) and n.kind == "cat":
            out.append(str(n.value).lower())
        elif isinstance(n, Q.Bool):
            out += asked_categories(n.children)
    return out


def query_categories(q: str, category: str | None) -> list[str]:
    """asked_categories of a query and a category filter as a link carries them (the paper page's)."""
    try:
        nodes = Q.parse(q).children
    except Q.QueryError:
        nodes = []
    return asked_categories(nodes) + ([category.lower()] if category else [])


def why_words(hit: Any, plan: Any) -> dict[str, Any]:
    """Why this matched, in plain words: how many of the query's concepts the title (and the
    abstract) holds, whether the meaning was close, the English a Chinese query was read as."""
    p = hit.paper
    concepts = plan.rank_concepts(plan.concepts) if plan is not None else []
    title = {stem(w) for w in index_words(clean_tex(p.title))}  # Chinese as bigrams, as the index
    abstract = {stem(w) for w in index_words(clean_tex(p.abstract))}

    def holds(words: set[str], c: Any) -> bool:
        return any(alt and all(s in words for s in alt) for alt in [*c.alts, zh_alt(c)])

    words = hit.lexical_rank is not None
    text = plan.dense_text if plan is not None and has_cjk(plan.q) else None
    read_as = text if text and not has_cjk(text) else None
    return {
        "n": len(concepts),
        "in_title": sum(holds(title, c) for c in concepts) if words else 0,
        "in_text": sum(holds(title | abstract, c) for c in concepts) if words else 0,
        "words": words,
        "meaning": hit.dense_rank is not None,
        "read_as": read_as,
        "lexical_rank": hit.lexical_rank,
        "lexical_score": hit.lexical_score,
        "dense_rank": hit.dense_rank,
        "dense_score": hit.dense_score,
        "score": hit.score,
    }


def card(
    p: Paper,
    hit: Any = None,
    *,
    highlight: frozenset[str] = frozenset(),
    wanted: list[str] | None = None,
    plan: Any = None,
    explain: bool = False,
) -> dict[str, Any]:
    """Everything a card shows, with paper text already escaped. `highlight`: the stems to mark;
    `wanted`: categories listed first; `plan` and `explain` give the card its "why this matched"."""
    links = safe_links(p)
    sig = signals(p)
    if sig["code"]:
        links["code"] = sig["code"]
    return {
        "id": p.id,
        "title_html": tex_html(p.title, highlight, links=False),
        "title_text": plain_tex(p.title),
        "venue": p.venue,
        "area": p.venue_area,
        "categories": ordered_categories(p.categories, wanted or []),
        **authors_shown(p, plan.author_phrases if plan is not None else []),
        "date": p.date or "",
        "snippet_html": snippet_html(p.abstract, highlight),
        "abstract_html": tex_html(p.abstract, highlight),
        "long": len(p.abstract) > 320,
        "links": links,
        "comment_html": tex_html(p.comment) if p.comment else None,
        **sig,
        "why": why_words(hit, plan) if hit is not None and explain else None,
        "note": None,  # a line a page adds under the title (the tag a recommendation is for)
        "in_tags": [],  # the user's tags holding the paper, when the page knows them
        "sources": sources_shown(p),
    }


# --- queries written back from their tree ---------------------------------------------------------
# A hint or a suggestion is a query the user can click; it is written from the parsed tree, never
# cut out of the typed text, and kept only if it parses again.
_COLUMN_FIELD = {"title": "ti", "authors": "au", "abstract": "abs"}


def unparse(node: Any, top: bool = True) -> str:
    """A query-language text for a parsed node: parse(unparse(tree)) means what tree means."""
    if isinstance(node, Q.Text):
        field = _COLUMN_FIELD.get(node.column or "", "")
        body = node.raw.strip() or " ".join(node.words)
        if node.phrase:
            body = '"' + body.replace('"', " ").strip() + '"'
        return f"{field}:{body}" if field else body
    if isinstance(node, Q.Filter) and isinstance(node.value, tuple):  # a date range
        start, end = node.value
        return f"date:{start}" if start == end else f"date:{start}..{end}"
    if isinstance(node, Q.Filter):
        return quoted(node.kind, str(node.value)) if node.kind in ("venue", "area") else f"{node.kind}:{node.value}"
    if isinstance(node, Q.Not):
        inner = unparse(node.child, top=False)
        return f"-{inner}" if not isinstance(node.child, Q.Bool) else f"-({unparse(node.child)})"
    if isinstance(node, Q.Bool):
        sep = " OR " if node.op == "OR" else " "
        text = sep.join(unparse(c, top=False) for c in node.children)
        return text if top or node.op == "AND" and len(node.children) < 2 else f"({text})"
    return ""


def parses(q: str) -> bool:
    try:
        Q.parse(q)
    except Q.QueryError:
        return False
    return bool(q.strip())


def fewer_hints(q: str, limit: int = 3) -> list[tuple[str, str]]:
    """For a query with no hits, (a part, the query without it) that parses; filters first (the usual cause)."""
    try:
        tree = Q.parse(q)
    except Q.QueryError:
        return []
    parts = tree.children
    if len(parts) < 2:
        return []
    order = sorted(range(len(parts)), key=lambda i: (not isinstance(parts[i], Q.Filter), -i))
    out: list[tuple[str, str]] = []
    for i in order:
        kept = [c for j, c in enumerate(parts) if j != i]
        if all(isinstance(c, Q.Not) for c in kept):  # exclusions alone find nothing
            continue
        rest = unparse(Q.Bool("AND", kept))
        if parses(rest) and rest not in (r for _, r in out):
            out.append((unparse(parts[i], top=False), rest))
        if len(out) == limit:
            break
    return out


# MathML output: no stylesheet, no fonts. `blocking="render"`: the first frame waits for the
# typesetting (app.js), so a line that math makes longer does not move the page after it shows.
KATEX_HEAD = f'<script src="{assets.url("katex/katex.min.js")}" defer blocking="render"></script>'
APP_JS = f'<script src="{assets.url("app.js")}" defer>'
APP_JS_BLOCKING = f'<script src="{assets.url("app.js")}" defer blocking="render">'


def with_katex(page: str) -> str:
    """The page with KaTeX in its head when it shows math that needs it (typeset before the page
    is first shown, so math does not jump), else without: a page without such math skips it."""
    if 'class="math" data-tex=' not in page:
        return page.replace("<!--katex-->", "", 1)
    return page.replace("<!--katex-->", KATEX_HEAD, 1).replace(APP_JS, APP_JS_BLOCKING, 1)

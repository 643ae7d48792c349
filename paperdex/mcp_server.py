"""An MCP server giving AI agents the search and the library of the web UI: its tools call the
service functions behind the JSON API, minus HTML (plain-text snippets, LaTeX made legible)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from paperdex import service
from paperdex.discover import library, recommend, summaries
from paperdex.paper import Paper
from paperdex.search import Hit
from paperdex.service import SearcherPool, SearchParams, ServiceError
from paperdex.settings import Settings
from paperdex.store import Store, StoreError
from paperdex.web import render

INSTRUCTIONS = (
    "paperdex searches a local collection of research papers (mostly arXiv cs.*). Use `search` with "
    'plain words or the query language: "exact phrase", ti:/au:/abs: fields, cat:cs.LG, '
    "date:2025-01..2025-06, AND/OR/NOT, -exclude. Chinese queries work too. Then `get_paper` for the "
    "full abstract and `similar_papers` for related work."
)


# What the tools' parameters say to an agent (their schemas carry the bounds and the choices)
QUERY = (
    'words or the query language: "exact phrase", ti:/au:/abs: fields, cat:cs.LG, date:2025-01..2025-06, '
    "OR, -exclude, word* prefixes; Chinese works; a pasted arXiv id or DOI looks the paper up"
)
MODE = "hybrid: words and meaning (the default); lexical: words only; dense: meaning only"
PAPER_ID = "a paper's id: an arXiv id (2510.05491, with or without a version or arXiv:), or its arXiv URL"
RELATED_TEXT = (
    f"an abstract or a paragraph; the first {recommend.MAX_TEXT:,} characters are read (a notice says so);"
    " an arXiv id or URL alone stands for that paper's title and abstract"
)


def _brief(p: Paper, phrases: list[list[str]] | None = None) -> dict[str, Any]:
    return {**render.brief(p, phrases), "venue": p.venue, "venue_area": p.venue_area, "links": render.safe_links(p)}


def _hit(h: Hit, phrases: list[list[str]] | None = None) -> dict[str, Any]:
    snip = render.plain_tex("".join(s for s, _ in h.snippet)) if h.snippet else None
    return {**_brief(h.paper, phrases), "snippet": snip, "why": render.ranks(h)}


def build_server(data_dir: str | Path, pool: SearcherPool | None = None) -> MCPServer:
    """An MCP server over one data directory (not started)."""
    pool = pool or SearcherPool(data_dir, size=1)
    server = MCPServer("paperdex", instructions=INSTRUCTIONS)

    def tool(fn):
        """A tool whose refusals (the agent must fix them) are tool errors, not logged crashes."""

        @functools.wraps(fn)
        def call(*args: Any, **kw: Any) -> Any:
            try:
                return fn(*args, **kw)
            except (ServiceError, library.LibraryError) as e:
                raise ToolError(e.message) from None

        return server.tool()(call)

    @tool
    def search(
        query: Annotated[str, Field(description=QUERY, max_length=service.MAX_QUERY)],
        limit: Annotated[int, Field(description="hits per page", ge=1, le=service.MAX_PER_PAGE)] = 10,
        page: Annotated[
            int, Field(description="1-based page; `pages` in the answer is the last", ge=1, le=service.MAX_PAGE)
        ] = 1,
        sort: Annotated[Literal["relevance", "newest"], Field(description="relevance, or newest first")] = "relevance",
        mode: Annotated[Literal["hybrid", "lexical", "dense"], Field(description=MODE)] = "hybrid",
        category: Annotated[str | None, Field(description="an arXiv category or archive: cs.LG, cs")] = None,
        date_from: Annotated[str | None, Field(description="first day: YYYY, YYYY-MM or YYYY-MM-DD")] = None,
        date_to: Annotated[
            str | None, Field(description="last day: YYYY, YYYY-MM (the whole month) or YYYY-MM-DD")
        ] = None,
    ) -> dict[str, Any]:
        """Search papers. `query` uses the paperdex query language (words, "phrases", ti:, au:,
        cat:cs.CV, date:2025..2026, OR, -not); sort is relevance or newest; mode is hybrid,
        lexical or dense. Returns total (the papers that match), tiers (the lists in order: "match"
        then "related", or one "ranked" list for a question) and hits (id, title, authors, date,
        snippet, links, why, tier)."""
        params = SearchParams(
            q=query,
            mode=mode,
            sort=sort,
            page=page,
            per_page=limit,
            category=category,
            date_from=date_from,
            date_to=date_to,
        )
        res = service.search(pool, params, facets=False)
        head = {k: getattr(res, k) for k in ("query", "total", "page", "pages", "notices", "read_as")}
        tiers = [{"tier": t, "count": n} for t, n in res.tiers]  # each hit's "tier" names its list
        named = res.plan.author_phrases if res.plan is not None else []  # au: names shown past the tenth
        return {**head, "tiers": tiers, "hits": [{**_hit(h, named), "tier": h.tier} for h in res.hits]}

    @tool
    def get_paper(id: Annotated[str, Field(description=PAPER_ID)]) -> dict[str, Any]:
        """One paper by id (e.g. an arXiv id like 2510.05491): full metadata, abstract, BibTeX."""
        p = service.get_paper(pool, id)
        d = {**_brief(p), "authors": p.authors, "abstract": render.plain_tex(p.abstract), "comment": p.comment}
        d["bibtex"] = render.bibtex(p)
        return summaries.attach_json(pool, [d])[0]  # machine summaries, when the optional layer made any

    @tool
    def similar_papers(
        id: Annotated[str, Field(description=PAPER_ID)],
        k: Annotated[int, Field(description="how many", ge=1, le=service.MAX_SIMILAR)] = 10,
    ) -> dict[str, Any]:
        """The k papers closest in meaning to paper `id` (nearest neighbours by embedding)."""
        paper, hits = service.similar(pool, id, k)
        return {"id": paper.id, "title": render.plain_tex(paper.title), "similar": [_hit(h) for h in hits]}

    @tool
    def list_tags() -> dict[str, Any]:
        """The user's tags (collections of saved papers) with how many papers each holds."""
        with pool.reader() as st:
            return {"tags": [t.to_dict() for t in library.tags(st)]}

    @tool
    def add_to_tag(
        tag: Annotated[str, Field(description="the tag's name; a new name makes the tag")],
        ids: Annotated[list[str], Field(description="papers to save: " + PAPER_ID, min_length=1)],
    ) -> dict[str, Any]:
        """Save papers (arXiv ids such as 2510.05491) into a tag; the tag is made if new."""
        try:
            st = Store(pool.data_dir)
        except StoreError as e:
            raise ToolError(f"cannot write the library: {e}") from None
        with st:
            added = library.add_to_tag(st, tag, ids)
            return {"added": added, **library.get_tag(st, tag).to_dict()}

    @tool
    def recommendations(
        tag: Annotated[str, Field(description="a tag's name (list_tags)")],
        k: Annotated[int, Field(description="how many", ge=1, le=service.MAX_K)] = 10,
    ) -> dict[str, Any]:
        """Papers the user has not seen, ranked by a model of the tag's papers, each with why
        (the tag's papers nearest to it, the words that weigh most)."""
        recs = service.recommend(pool, tag, k)
        return {
            "tag": recs.tag,
            "notices": recs.notices,
            "recommendations": [
                {**_brief(r.paper), "score": round(r.score, 4), "why": r.reason.to_dict() if r.reason else None}
                for r in recs.items
            ],
        }

    @tool
    def saved_searches() -> dict[str, Any]:
        """The user's saved searches, each with how many papers it matches that are new since
        the last visit."""
        return {"saved_searches": [{**ss.to_dict(), "new": nm and nm.count} for ss, nm in service.saved_searches(pool)]}

    @tool
    def saved_search_new(
        name: Annotated[str, Field(description="a saved search's name or id (saved_searches)")],
        limit: Annotated[int, Field(description="papers listed (0: the count alone)", ge=0, le=service.MAX_K)] = 10,
    ) -> dict[str, Any]:
        """The papers new since the last visit that a saved search (by name or id) matches."""
        nm = service.new_matches(pool, name, limit)
        return {**nm.saved.to_dict(), "new": nm.count, "papers": [_brief(p) for p in nm.papers]}

    @tool
    def related_work(
        text: Annotated[str, Field(description=RELATED_TEXT)],
        k: Annotated[int, Field(description="how many", ge=1, le=service.MAX_RELATED)] = 10,
    ) -> dict[str, Any]:
        """Papers related to a pasted abstract or paragraph: its meaning (embedding) and its key
        terms, fused."""
        res = service.related(pool, text, k)  # the web's path: bounded text, the time budget
        return {"key_terms": res.key_terms, "notices": res.notices, "hits": [_hit(h) for h in res.hits]}

    return server


def run(settings: Settings) -> None:
    """Serve on stdio until the client closes the pipe."""
    build_server(settings.data_dir, SearcherPool.of(settings, settings.data_dir, size=1)).run("stdio")

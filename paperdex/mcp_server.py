"""An MCP server (official `mcp` SDK) giving AI agents the same search the web UI has.

Tools: ``search`` (the full query language and filters), ``get_paper`` and ``similar_papers``.
They call the service functions behind the JSON API (:mod:`paperdex.service`), so an agent
sees exactly what ``/api/search`` returns, minus HTML: snippets come as plain text with LaTeX
made legible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from . import service
from .paper import Paper
from .search import Hit
from .service import SearcherPool, SearchParams, ServiceError
from .web import render

INSTRUCTIONS = (
    "paperdex searches a local collection of research papers (mostly arXiv cs.*). Use `search` with "
    'plain words or the query language: "exact phrase", ti:/au:/abs: fields, cat:cs.LG, '
    "date:2025-01..2025-06, AND/OR/NOT, -exclude. Chinese queries work too. Then `get_paper` for the "
    "full abstract and `similar_papers` for related work."
)


def _brief(p: Paper) -> dict[str, Any]:
    return {
        "id": p.id,
        "title": render.plain_tex(p.title),
        "authors": p.authors[:10] + (["et al."] if len(p.authors) > 10 or p.authors_truncated else []),
        "date": p.date,
        "categories": p.categories,
        "venue": p.venue,
        "venue_area": p.venue_area,
        "links": render.safe_links(p),
    }


def _hit(h: Hit) -> dict[str, Any]:
    d = _brief(h.paper)
    d["snippet"] = render.plain_tex("".join(s for s, _ in h.snippet)) if h.snippet else None
    d["why"] = {"lexical_rank": h.lexical_rank, "dense_rank": h.dense_rank, "score": round(h.score, 6)}
    return d


def build_server(data_dir: str | Path, pool: SearcherPool | None = None) -> MCPServer:
    """An MCP server over one data directory (not started)."""
    pool = pool or SearcherPool(data_dir, size=1)
    server = MCPServer("paperdex", instructions=INSTRUCTIONS)

    def fail(e: ServiceError) -> ToolError:
        """A request the agent must fix: reported as a tool error, not logged as a crash."""
        return ToolError(e.message)

    @server.tool()
    def search(
        query: str,
        limit: int = 10,
        page: int = 1,
        sort: str = "relevance",
        mode: str = "hybrid",
        category: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
    ) -> dict[str, Any]:
        """Search papers. `query` uses the paperdex query language (words, "phrases", ti:, au:,
        cat:cs.CV, date:2025..2026, OR, -not); sort is relevance or newest; mode is hybrid,
        lexical or dense. Returns total, hits (id, title, authors, date, snippet, links, why)."""
        params = SearchParams(query, mode, sort, page, limit, category, date_from, date_to)
        try:
            res = service.search(pool, params, facets=False)
        except ServiceError as e:
            raise fail(e) from None
        return {
            "query": res.query,
            "total": res.total,
            "page": res.page,
            "pages": res.pages,
            "notices": res.notices,
            "hits": [_hit(h) for h in res.hits],
        }

    @server.tool()
    def get_paper(id: str) -> dict[str, Any]:
        """One paper by id (e.g. an arXiv id like 2510.05491): full metadata, abstract, BibTeX."""
        try:
            p = service.get_paper(pool, id)
        except ServiceError as e:
            raise fail(e) from None
        d = _brief(p)
        d.update(
            authors=p.authors,
            abstract=render.plain_tex(p.abstract),
            comment=p.comment,
            bibtex=render.bibtex(p),
        )
        return d

    @server.tool()
    def similar_papers(id: str, k: int = 10) -> dict[str, Any]:
        """The k papers closest in meaning to paper `id` (nearest neighbours by embedding)."""
        try:
            paper, hits = service.similar(pool, id, k)
        except ServiceError as e:
            raise fail(e) from None
        return {"id": paper.id, "title": render.plain_tex(paper.title), "similar": [_hit(h) for h in hits]}

    return server


def run(data_dir: str | Path) -> None:
    """Serve on stdio until the client closes the pipe."""
    build_server(data_dir).run("stdio")


if __name__ == "__main__":  # python -m paperdex.mcp_server DATA_DIR
    import sys

    from .store import default_data_dir

    run(sys.argv[1] if len(sys.argv) > 1 else default_data_dir())

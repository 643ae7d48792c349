"""One paper's page (/paper/{id}); its JSON twin is the API's /api/papers/{id}."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from paperdex import service
from paperdex.web import render
from paperdex.web.views.base import page, pool_of, state_of

router = APIRouter()


@router.get("/paper/{pid:path}", response_class=HTMLResponse, include_in_schema=False)
def paper_page(request: Request, pid: str, q: str = "", category: str | None = None) -> Response:
    """One paper; the search or daily state it was opened from rides along, so "Back" returns to the same page."""
    paper, hits = service.similar(pool_of(request), pid, 8)
    back = state_of(request)
    src = back.pop("src", "")
    back_url = ("/daily" if src == "daily" else "/") + (f"?{urlencode(back)}" if back else "")
    back_url += "#p-" + paper.id.replace("/", "-")  # back to the card it was opened from
    c = render.card(paper, wanted=render.query_categories(q, category))
    similar = [render.card(h.paper) for h in hits]
    return page(
        request,
        "paper.html",
        paper=paper,
        c=c,
        similar=similar,
        bibtex=render.bibtex(paper),
        q=q,
        back_url=back_url,
        back_daily=src == "daily",
    )

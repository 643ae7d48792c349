"""`POST /api/papers/{id}/summary`: one paper's summaries from the configured language model,
now; a write, so it takes a token. 503: no model; 502: it cannot be used (never saying the key)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from paperdex import service
from paperdex.discover import summaries as S
from paperdex.messages import message
from paperdex.service import ServiceError
from paperdex.web.views.auth import require_writer, writer
from paperdex.web.views.base import pool_of

router = APIRouter()


@router.post("/api/papers/{pid:path}/summary", include_in_schema=False)
def summarize_now(request: Request, pid: str, force: bool = False, lang: str = "en,zh") -> JSONResponse:
    """Write the paper's machine summaries with the server's language model (unless current
    ones exist, or `force`), and return them as `GET /api/papers/{id}` does."""
    require_writer(request)
    langs = tuple(dict.fromkeys(x.strip() for x in lang.split(",") if x.strip()))
    if not langs or set(langs) - set(S.LANGS):
        raise ServiceError(400, message("summary_langs", langs=", ".join(S.LANGS)))
    try:
        cfg = S.LLMConfig.from_settings(request.app.state.settings)  # set by create_app
    except ValueError as e:
        raise ServiceError(503, message("llm_settings", reason=str(e))) from None
    if cfg is None:
        raise ServiceError(503, message("no_llm"))
    paper = service.get_paper(pool_of(request), pid)  # 404 for an unknown id
    with writer(request, library=False) as st:
        p = st.get(paper.id) or paper
        rep = S.run(st, [p], cfg, langs=langs, force=force)
        if rep.stopped:
            raise ServiceError(502, message("llm_unusable", reason=rep.stopped))
        if rep.over_budget:
            raise ServiceError(429, message("summary_budget"))
        if rep.failed:
            raise ServiceError(502, message("llm_not_summary", reason=rep.errors[0]))
        have = st.summaries([p.id]).get(p.id, {})
    return JSONResponse({"id": p.id, "summaries": S.public(have), "written": rep.done, "tokens": rep.tokens})

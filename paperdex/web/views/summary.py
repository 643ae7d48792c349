"""`POST /api/papers/{id}/summary`: one paper's summaries from the configured language model,
now; a write, so it takes a token. 503: no model; 502: it cannot be used (never saying the key)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from paperdex import service
from paperdex.discover import summaries as S
from paperdex.messages import message
from paperdex.service import ServiceError
from paperdex.web import schemas
from paperdex.web.views.auth import require_writer, writer
from paperdex.web.views.base import pool_of

router = APIRouter()


ERRORS: dict[int | str, dict[str, Any]] = {
    400: schemas.BAD_REQUEST,
    401: schemas.NEEDS_TOKEN,
    403: schemas.NOT_ALLOWED,
    404: schemas.NOT_FOUND,
    429: schemas.SUMMARY_BUDGET,
    502: schemas.LLM_FAILED,
    503: schemas.NO_LLM,
}


@router.post(
    "/api/papers/{pid:path}/summary",
    tags=["library"],
    summary="Summarize a paper now",
    response_class=JSONResponse,
    responses={200: {"model": schemas.SummaryOut, "description": "Its summaries"}, **ERRORS},
)
def summarize_now(
    request: Request,
    pid: str,
    force: Annotated[bool, Query(description="Write them again, though current ones exist")] = False,
    lang: Annotated[str, Query(description="The languages, comma-separated: en, zh")] = "en,zh",
) -> JSONResponse:
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

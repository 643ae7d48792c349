"""schemathesis against /openapi.json: generated requests for every operation, both ones the
spec allows and ones that break its bounds, must never get a server error, and every answer
must match the spec (status code, content type, body schema, headers).

schemathesis' own pytest plugin does not run under pytest 9 (it reads a private node id), so
the strategies are driven by Hypothesis directly, with a bounded number of examples."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi import checks as oa_checks

HOST = {"Host": "localhost"}
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@pytest.fixture(scope="module")
def operations(app):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers=HOST)
    ops = [r.ok() for r in schema.get_all_operations()]
    # every /api route (test_strict_api walks them): the writes without a token are each a 401
    assert len(ops) == 24
    return ops


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_matches_its_spec(operations, mode):
    for op in operations:

        @SETTINGS
        @given(case=op.as_strategy(generation_mode=mode))
        def check(case):
            case.call_and_validate(
                headers=HOST,
                # This check wants every string matching `from`'s YYYY-MM-DD pattern accepted;
                # 2025-13-45 matches it and is rightly a 400, which the spec documents.
                excluded_checks=[oa_checks.positive_data_acceptance],
            )

        try:
            check()
        except Unsatisfiable:
            assert mode == GenerationMode.NEGATIVE and _nothing_invalid(op), op.path


def _nothing_invalid(op) -> bool:
    """Whether an operation has no request that breaks its spec: no body, and parameters only
    that are any string (a paper id, a tag's name) or none (GET /api/tags)."""
    raw = op.definition.raw
    words = ("title", "description", "default")
    free = [{k: v for k, v in p["schema"].items() if k not in words} for p in raw.get("parameters", [])]
    return "requestBody" not in raw and all(f == {"type": "string"} for f in free)


def test_the_checks_can_fail(app):
    """The harness is not vacuous: an answer that breaks the spec is caught."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers=HOST)
    op = next(r.ok() for r in schema.get_all_operations() if r.ok().path == "/api/days")
    case = op.Case(query={"limit": 5})
    response = case.call(headers=HOST)
    assert response.status_code == 200
    response.status_code = 500
    with pytest.raises(FailureGroup) as e:
        case.validate_response(response)
    assert "Server error" in str(e.value)


# --- the routes behind a token, and pages: path parameters and JSON bodies (issue 37) -------------
# /openapi.json documents the library's routes, but without a token its writes are each a 401, and
# the pages are not in it; this spec describes those that take a path parameter or a JSON body, so
# that schemathesis generates both with a token, the bodies with arbitrary nested values where the
# endpoint takes any JSON. No answer may be a server error.

_ID = {"type": "string"}
# a saved search by name or id: ids past SQLite's 64-bit integers too (they were an OverflowError)
_KEY = {"anyOf": [_ID, {"type": "integer", "minimum": 2**62}]}
_PATH = [{"name": "key", "in": "path", "required": True, "schema": _KEY}]
_NAME = [{"name": "name", "in": "path", "required": True, "schema": _ID}]
_PID = [{"name": "pid", "in": "path", "required": True, "schema": _ID}]
_ANY = {}  # any JSON value, nested as deep as the generator goes
_INT = {"type": "integer"}
_LIMIT = {"name": "limit", "in": "query", "schema": _INT}
_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "k": {"anyOf": [_INT, _ANY]},
                    "category": _ANY,
                    "from": _ANY,
                    "to": _ANY,
                    "ids": {"type": "array", "items": _ANY},
                    "params": {"type": "object", "additionalProperties": _ANY},
                    "tags": {"type": "array", "items": {"type": "object", "additionalProperties": _ANY}},
                },
                "additionalProperties": _ANY,
            }
        }
    },
}
_ANSWER = {"default": {"description": "an answer, or the one error shape"}}


def _op(params=(), body=None):
    op: dict = {"parameters": list(params), "responses": _ANSWER}
    if body:
        op["requestBody"] = body
    return op


HIDDEN = {
    "openapi": "3.0.3",
    "info": {"title": "paperdex library routes", "version": "test"},
    "paths": {
        "/api/saved/{key}/new": {"get": _op([*_PATH, _LIMIT])},
        "/api/saved/{key}/seen": {"post": _op(_PATH)},
        "/saved/{key}": {"get": _op(_PATH)},
        "/feeds/saved/{key}.rss": {"get": _op(_PATH)},
        "/api/tags/{name}": {"get": _op(_NAME), "delete": _op(_NAME)},
        "/api/tags/{name}/recommendations": {
            "get": _op(
                [*_NAME, {"name": "k", "in": "query", "schema": _INT}, {"name": "page", "in": "query", "schema": _INT}]
            )
        },
        "/api/tags/{name}/papers": {"post": _op(_NAME, _BODY)},
        "/api/tags/{name}/papers/{pid}": {"delete": _op([*_NAME, *_PID])},
        "/api/papers/{pid}/summary": {"post": _op(_PID)},
        "/api/related": {"post": _op(body=_BODY)},
        "/api/dismissed": {"post": _op(body=_BODY)},
        "/api/saved": {"post": _op(body=_BODY)},
        "/api/library/import": {"post": _op(body=_BODY)},
    },
}


@pytest.fixture
def library_app(store):
    """The app over a private store, with a token every generated request carries (writes
    are reached, not refused at the door) and a saved search, behind a shim that serves the
    spec above."""
    from starlette.responses import JSONResponse

    from paperdex.discover import library as L
    from paperdex.web.app import create_app

    token = L.create_token(store, "schemathesis")
    L.save_search(store, "robots", "robot", {})
    inner = create_app(store.data_dir, pool_size=1)

    async def app(scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/hidden-openapi.json":
            return await JSONResponse(HIDDEN)(scope, receive, send)
        return await inner(scope, receive, send)

    return app, {**HOST, "Authorization": f"Bearer {token}"}


def _never_fails(op, headers: dict[str, str], mode):
    """Hypothesis over one operation's generated requests: no server error, and from the API
    the one error shape. The one 5xx allowed is the summary route's 503, by design here: this
    server has no language model configured."""

    @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(case=op.as_strategy(generation_mode=mode))
    def check(case):
        response = case.call(headers=headers)
        assert response.status_code < 500 or "no language model configured" in response.text, (
            op.path,
            response.status_code,
            response.text[:300],
        )
        if response.status_code >= 400 and op.path.startswith("/api/"):
            error = response.json()["error"]
            assert error["status"] == response.status_code and error["message"], (op.path, error)

    return check


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_library_routes_never_fail(library_app, mode):
    app, headers = library_app
    schema = schemathesis.openapi.from_asgi("/hidden-openapi.json", app, headers=HOST)
    ops = [r.ok() for r in schema.get_all_operations()]
    assert len(ops) == 14
    for op in ops:
        try:
            _never_fails(op, headers, mode)()
        except Unsatisfiable:
            assert mode == GenerationMode.NEGATIVE, op.path  # a string path parameter has no invalid value

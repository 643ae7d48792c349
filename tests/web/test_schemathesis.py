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
    assert len(ops) == 5
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
            # a path parameter that is any string (a paper id) has no invalid value to generate
            assert mode == GenerationMode.NEGATIVE and op.path == "/api/papers/{pid}", op.path


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

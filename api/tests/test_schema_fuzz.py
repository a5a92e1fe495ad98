"""The API fuzzed from its own OpenAPI schema (schemathesis) as a learner with a
run_submit token: no 5xx on any operation, whatever the path, query and body.

Bounded and derandomized so make test is repeatable and quick (FUZZ_API_EXAMPLES
per operation; more by hand: FUZZ_API_EXAMPLES=200). Half the drawn slugs are
replaced by the real rung's, so the endpoints past the 404 are fuzzed too. No job
reaches a worker: on-commit callbacks do not run in the test's transaction.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from api import tokens
from api.constants import Scope
from api.management.commands.api_schema import SCHEMA_FILE

EXAMPLES = int(os.environ.get("FUZZ_API_EXAMPLES", "12"))
RUNG = "kv-cache-size"

schema = schemathesis.openapi.from_dict(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
schema.app = get_wsgi_application()


@pytest.fixture
def secret(catalog, learner) -> Iterator[str]:
    # The WSGI handler closes the database connection around each request, as
    # Django's own test client keeps it from doing: the test's transaction lives on.
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield tokens.create_token(user=learner, name="fuzz", scope=Scope.RUN_SUBMIT, days=1).secret
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_operation_answers_a_server_error(case, secret, db):
    if case.path_parameters and "slug" in case.path_parameters and len(str(case.path_parameters["slug"])) % 2 == 0:
        case.path_parameters["slug"] = RUNG
    response = case.call(headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code < 500, (case.method, case.formatted_path, case.path_parameters, case.query, case.body, response.text[:500])

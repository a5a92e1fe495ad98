"""Structured logs (issue 61, item 5): JSON lines with the bound ids, and a
request id that is always a plain token. That a Submit's web line and the
real worker's lines share its ids is checked with its metrics, on one worker
and one Submit (frontend/tests/test_metrics.py)."""

from __future__ import annotations

import json
import logging

import pytest

from core.logs import JsonLines, bound_ids, ids_bound

REQUEST_ID = "trace-submit-0001"


def test_a_line_is_one_json_object_with_the_bound_ids_and_nothing_leaks_after():
    with ids_bound(request_id="r-12345678", user_id=7):
        record = logging.getLogger("dojo.test").makeRecord("dojo.test", logging.INFO, __file__, 1, 'said "%s"', ("hi",), None)
    line = json.loads(JsonLines().format(record))
    assert (line["message"], line["request_id"], line["user_id"], line["level"]) == ('said "hi"', "r-12345678", "7", "INFO")
    assert bound_ids() == {}


@pytest.mark.django_db
def test_a_request_id_that_is_not_a_plain_token_is_replaced(client):
    assert client.get("/healthz", HTTP_X_REQUEST_ID=REQUEST_ID)["X-Request-ID"] == REQUEST_ID
    made = client.get("/healthz", HTTP_X_REQUEST_ID="a b\nforged")["X-Request-ID"]
    assert made != "a b\nforged" and len(made) == 16

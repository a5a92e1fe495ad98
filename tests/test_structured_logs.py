"""Structured logs (issue 61, item 5): a Submit's line in the web's log and
the worker's lines while it grades carry the same request, user and
submission ids, so one submission is followed from the request to the sandbox."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from core.logs import JsonLines, bound_ids, ids_bound
from grader.constants import Status
from grader.models import Submission
from tests.faults.test_faults import wait_for

KV = Path(__file__).resolve().parents[1] / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
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


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_a_submits_web_line_and_worker_lines_share_its_ids(kv_rung, learner, client, worker_factory, caplog):
    worker = worker_factory().start()  # LOG_FORMAT defaults to json
    client.force_login(learner)
    with caplog.at_level(logging.INFO, logger="grader.services"):
        response = client.post("/rungs/kv-cache-size/submit", {"code": (KV / "reference.py").read_text(), "version": kv_rung.current_version.number}, HTTP_X_REQUEST_ID=REQUEST_ID)
    assert response.status_code == 202 and response["X-Request-ID"] == REQUEST_ID
    pk = str(response.json()["id"])
    web = [json.loads(JsonLines().format(record)) for record in caplog.records if getattr(record, "submission_id", None) == pk]
    assert web, [record.getMessage() for record in caplog.records]
    assert {(line["request_id"], line["user_id"]) for line in web} == {(REQUEST_ID, str(learner.pk))}

    wait_for(lambda: Submission.objects.get(pk=pk).status == Status.DONE, 120, "the Submit to be graded", worker.log)

    def graded_lines() -> list[dict[str, str]]:
        lines = []
        for text in worker.log_path.read_text(errors="replace").splitlines():
            if text.startswith("{"):
                line = json.loads(text)
                if line.get("submission_id") == pk:
                    lines.append(line)
        return lines

    lines = wait_for(lambda: [line for line in graded_lines() if "graded" in line["message"]] and graded_lines(), 10, "the worker's graded line", worker.log)
    assert {(line["request_id"], line["user_id"]) for line in lines} == {(REQUEST_ID, str(learner.pk))}, lines

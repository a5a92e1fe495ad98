"""The Prometheus endpoint (issue 61, item 3): only a bearer of METRICS_TOKEN
reads it, labels are view names, and a Submit graded by a real worker shows
in flight while it waits and counted once it is graded, from the web's
endpoint (multiprocess folder) and from the worker's own port. The same
Submit's web and worker log lines share its ids (item 5; one worker and one
Submit for both, as each costs seconds)."""

from __future__ import annotations

import json
import logging
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.logs import JsonLines
from grader.constants import Outcome, Status
from grader.models import Submission
from tests.faults.test_faults import wait_for

TOKEN = "scrape-token-for-tests"
REQUEST_ID = "trace-submit-0001"
KV = Path(__file__).resolve().parents[2] / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of an exposition."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def scrape(client: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content[:300]
    return samples(response.content.decode())


@pytest.mark.django_db
def test_without_a_token_set_there_is_no_endpoint_and_a_wrong_token_reads_nothing(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404
    settings.METRICS_TOKEN = TOKEN
    for header in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong"}, {"HTTP_AUTHORIZATION": f"Basic {TOKEN}"}, {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}x"}):
        response = client.get("/metrics", **header)
        assert response.status_code == 401 and b"dojo_" not in response.content


@pytest.mark.django_db
def test_request_latency_is_labelled_by_view_never_by_path(client, settings):
    settings.METRICS_TOKEN = TOKEN
    client.get("/healthz")
    client.get("/no/such/page/12345")
    found = scrape(client)
    views = {dict(labels).get("view") for (name, labels) in found if name == "dojo_request_seconds_count"}
    assert "healthz" in views and "(no view)" in views
    assert not any(view and "/" in view for view in views), views
    assert ("dojo_jobs_in_flight", (("job", "submission"), ("status", "queued"))) in found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_a_submit_is_in_flight_then_counted_and_its_log_lines_share_its_ids(kv_rung, learner, client, worker_factory, settings, monkeypatch, tmp_path, caplog):
    settings.METRICS_TOKEN = TOKEN
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))  # the web side reads the worker's folder
    port = _free_port()
    worker = worker_factory().start(PROMETHEUS_MULTIPROC_DIR=str(tmp_path), WORKER_METRICS_PORT=str(port))  # LOG_FORMAT: json by default
    client.force_login(learner)
    with caplog.at_level(logging.INFO, logger="grader.services"):
        response = client.post(
            "/rungs/kv-cache-size/submit", {"code": (KV / "reference.py").read_text(), "version": kv_rung.current_version.number}, HTTP_X_REQUEST_ID=REQUEST_ID
        )
    assert response.status_code == 202, response.content
    assert response["X-Request-ID"] == REQUEST_ID
    pk = response.json()["id"]
    web_lines = [json.loads(JsonLines().format(record)) for record in caplog.records if getattr(record, "submission_id", None) == str(pk)]
    assert {(line["request_id"], line["user_id"]) for line in web_lines} == {(REQUEST_ID, str(learner.pk))}, caplog.text

    during = scrape(client)
    in_flight = sum(during.get(("dojo_jobs_in_flight", (("job", "submission"), ("status", status))), 0) for status in ("queued", "running"))
    assert in_flight == 1

    wait_for(lambda: Submission.objects.get(pk=pk).status == Status.DONE, 120, "the Submit to be graded", worker.log)
    assert Submission.objects.get(pk=pk).outcome == Outcome.PASSED
    after = scrape(client)
    assert after[("dojo_jobs_total", (("kind", "submit"), ("outcome", "passed")))] == 1
    assert after[("dojo_grading_seconds_count", (("kind", "submit"),))] == 1
    assert sum(after.get(("dojo_sandbox_starts_total", (("start", start),)), 0) for start in ("warm", "cold")) == 1
    assert sum(after.get(("dojo_jobs_in_flight", (("job", "submission"), ("status", status))), 0) for status in ("queued", "running")) == 0

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        from_worker = samples(answer.read().decode())
    assert from_worker[("dojo_jobs_total", (("kind", "submit"), ("outcome", "passed")))] == 1

    worker_lines = wait_for(lambda: [line for line in worker_log_lines(worker.log_path, str(pk)) if "graded" in line["message"]], 10, "the worker's graded line", worker.log)
    assert {(line["request_id"], line["user_id"]) for line in worker_log_lines(worker.log_path, str(pk))} == {(REQUEST_ID, str(learner.pk))}, worker_lines


def worker_log_lines(path: Path, submission_id: str) -> list[dict[str, str]]:
    """The worker's JSON log lines about ``submission_id``."""
    lines = [json.loads(text) for text in path.read_text(errors="replace").splitlines() if text.startswith("{")]
    return [line for line in lines if line.get("submission_id") == submission_id]

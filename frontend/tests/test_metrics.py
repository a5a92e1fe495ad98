"""The Prometheus endpoint (issue 61, item 3): only a bearer of METRICS_TOKEN
reads it, labels are view names, and a Submit graded by a real worker shows
in flight while it waits and counted once it is graded, from the web's
endpoint (multiprocess folder) and from the worker's own port."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from grader.constants import Outcome, Status
from grader.models import Submission
from tests.faults.test_faults import wait_for

TOKEN = "scrape-token-for-tests"
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
def test_a_submit_is_in_flight_then_counted_on_the_web_and_the_workers_endpoints(kv_rung, learner, client, worker_factory, settings, monkeypatch, tmp_path):
    settings.METRICS_TOKEN = TOKEN
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))  # the web side reads the worker's folder
    port = _free_port()
    worker = worker_factory().start(PROMETHEUS_MULTIPROC_DIR=str(tmp_path), WORKER_METRICS_PORT=str(port))
    client.force_login(learner)
    response = client.post("/rungs/kv-cache-size/submit", {"code": (KV / "reference.py").read_text(), "version": kv_rung.current_version.number})
    assert response.status_code == 202, response.content
    pk = response.json()["id"]

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

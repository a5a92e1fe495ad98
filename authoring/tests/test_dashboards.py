"""Dashboards, the best-outcome CSV and the operations view."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from authoring import charts, operations, stats
from exercises.models import Module, Rung
from grader.constants import Kind, Outcome, Status
from grader.models import Progress, Submission, SubmissionTestResult
from grader.tallies import rebuild_tallies

pytestmark = pytest.mark.django_db

KV = "kv-cache-size"


def _submit(user: Any, rung: Rung, outcome: str, *, minutes_ago: int, failing: tuple[str, ...] = (), kind: str = Kind.SUBMIT) -> Submission:
    finished = timezone.now() - timedelta(minutes=minutes_ago)
    assert rung.current_version is not None
    submission = Submission.objects.create(user=user, rung=rung, rung_version=rung.current_version, kind=kind, code="x", status=Status.DONE,
                                           outcome=outcome)
    Submission.objects.filter(pk=submission.pk).update(enqueued_at=finished - timedelta(seconds=3), started_at=finished - timedelta(seconds=2),
                                                       finished_at=finished)
    for order, name in enumerate(failing):
        SubmissionTestResult.objects.create(submission=submission, order=order, name=name, outcome="failed", hidden=kind == Kind.SUBMIT)
    return submission


@pytest.fixture
def history(catalog, learner, other_learner) -> Rung:
    rung = Rung.objects.get(slug=KV)
    _submit(learner, rung, Outcome.FAILED, minutes_ago=3000, failing=("test_unknown_dtype_raises", "test_int4_packs_two_values_per_byte"))
    _submit(learner, rung, Outcome.FAILED, minutes_ago=2000, failing=("test_unknown_dtype_raises",))
    _submit(learner, rung, Outcome.PASSED, minutes_ago=10)
    _submit(other_learner, rung, Outcome.ERROR, minutes_ago=5)
    _submit(other_learner, rung, Outcome.INFRA_ERROR, minutes_ago=4)
    Progress.objects.create(user=learner, rung=rung, attempts=3, best_outcome=Outcome.PASSED, solved_at=timezone.now())
    Progress.objects.create(user=other_learner, rung=rung, attempts=1, best_outcome=Outcome.ERROR)
    rebuild_tallies()  # the rows above were written around the services that count them
    return rung


def test_the_numbers_behind_the_dashboards(history):
    assert stats.submits_to_first_pass(stats.counts_of([history])[history.pk]) == (2, {3: 1})
    numbers = stats.figures([history])
    assert numbers["failing"][0] == ("test_unknown_dtype_raises", 2)
    assert dict(numbers["mix"]) == {"passed": 1, "failed": 2, "error": 1, "infra_error": 1}
    assert sum(total for _, _, total in numbers["days"]) == 4  # infrastructure errors are not the learner's attempts
    table = {row["name"]: row for row in numbers["latency"]}
    assert table["total"]["p50"] == pytest.approx(3.0) and table["queue wait"]["p99"] == pytest.approx(1.0)
    assert stats.percentile(dict.fromkeys(range(1, 11), 1), 0.9) == 9
    assert stats.percentile({1.5: 3, 0.25: 1}, 0.25) == 0.25 and stats.percentile({1.5: 3, 0.25: 1}, 0.5) == 1.5


def test_the_module_and_rung_dashboards_draw_every_plot(history, admin_user, client):
    client.force_login(admin_user)
    module = history.module
    for url in (f"/author/modules/{module.slug}/dashboard", f"/author/modules/{module.slug}/rungs/{KV}/dashboard"):
        page = client.get(url).content.decode()
        assert page.count("<svg class=\"chart\"") == 5, url
        for title in ("Share of Submits that passed, per day", "Submits until the first pass", "Hidden tests failed most often",
                      "Outcomes of Submits", "Grading latency percentiles"):
            assert title in page
        assert "test_unknown_dtype_raises" in page


def test_chart_labels_are_escaped():
    svg = charts.bar_chart([("<script>alert(1)</script>", 3)], title="t")
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_the_csv_has_each_learners_best_outcome_per_rung(history, admin_user, client):
    client.force_login(admin_user)
    module = Module.objects.get(slug=history.module.slug)
    response = client.get(f"/author/modules/{module.slug}/progress.csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    slugs = list(Rung.objects.filter(module=module).order_by("order", "slug").values_list("slug", flat=True))
    assert rows[0] == ["learner", *slugs, "solved"]
    by_user = {row[0]: row for row in rows[1:]}
    assert by_user["lena"][1 + slugs.index(KV)] == "passed" and by_user["lena"][-1] == "1"
    assert by_user["omar"][1 + slugs.index(KV)] == "error" and by_user["omar"][-1] == "0"


def test_operations_shows_the_database_side_with_the_broker_down(history, learner, admin_user, client, settings, monkeypatch):
    monkeypatch.setattr(operations, "_broker_url", lambda: "redis://127.0.0.1:1/0")
    rung = history
    waiting = Submission.objects.create(user=learner, rung=rung, rung_version=rung.current_version, kind=Kind.SUBMIT, code="x")
    client.force_login(admin_user)
    state = client.get("/author/operations/?format=json").json()
    assert state["queues"][1] == {"name": "submit", "waiting_db": 1, "running_db": 0, "broker_length": None}
    assert state["oldest_waiting"]["id"] == waiting.pk
    assert state["infra_errors_last_hour"] == 1
    assert state["broker_error"] and state["workers"] == []
    page = client.get("/author/operations/").content.decode()
    assert "Broker unreachable" in page and "No worker answered" in page


@pytest.mark.redis
def test_operations_reads_the_queue_lengths_from_redis(redis_url, admin_user, client, db):
    import redis

    client_redis = redis.Redis.from_url(redis_url)
    client_redis.delete("run", "submit")
    client_redis.rpush("submit", "a", "b")
    try:
        client.force_login(admin_user)
        state = client.get("/author/operations/?format=json").json()
    finally:
        client_redis.delete("submit")
    lengths = {row["name"]: row["broker_length"] for row in state["queues"]}
    assert lengths["submit"] == 2 and lengths["run"] == 0
    assert state["broker_error"] == "" and state["workers"] == []

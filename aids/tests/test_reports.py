"""Report a problem, the learner's side: the attempt goes with it, and only its author sees it."""

from __future__ import annotations

import pytest
from django.test import Client

from aids import services
from aids.constants import ReportStatus
from aids.models import ProblemReport
from grader.models import Submission

pytestmark = pytest.mark.django_db


def _report(client, rung, message="The visible test expects 2 GiB but the text says GB.", code="def kv_cache_bytes(): ...\n"):
    return client.post(f"/aids/rungs/{rung.slug}/reports/new", {"message": message, "code": code})


def test_a_report_carries_the_code_and_the_latest_attempt(kv_rung, learner, learner_client):
    older = Submission.objects.create(user=learner, rung=kv_rung, rung_version=kv_rung.current_version, kind="run", code="v1", status="done")
    latest = Submission.objects.create(user=learner, rung=kv_rung, rung_version=kv_rung.current_version, kind="submit", code="v2", status="done")
    response = _report(learner_client, kv_rung)
    assert response.status_code == 201
    report = ProblemReport.objects.get()
    assert report.learner == learner and report.rung == kv_rung and report.rung_version == kv_rung.current_version
    assert report.submission == latest != older
    assert report.code == "def kv_cache_bytes(): ...\n" and report.status == ReportStatus.OPEN
    assert response.json()["report"]["id"] == report.pk


def test_an_attempt_of_another_learner_is_never_attached(kv_rung, learner, other_learner, learner_client):
    Submission.objects.create(user=other_learner, rung=kv_rung, rung_version=kv_rung.current_version, kind="run", code="theirs", status="done")
    _report(learner_client, kv_rung)
    assert ProblemReport.objects.get().submission is None


def test_an_empty_report_is_refused_and_nothing_is_stored(kv_rung, learner_client):
    response = _report(learner_client, kv_rung, message="   ")
    assert response.status_code == 400 and "error" in response.json()
    assert not ProblemReport.objects.exists()


def test_hostile_bytes_are_cleaned_and_code_is_capped(kv_rung, learner, learner_client):
    _report(learner_client, kv_rung, message="bad\x00test", code="x" * 70_000)
    report = ProblemReport.objects.get()
    assert report.message == "badtest" and len(report.code) == 64 * 1024


def test_a_learner_sees_only_their_own_reports_and_the_note(kv_rung, learner, other_learner, learner_client, admin_user):
    _report(learner_client, kv_rung, message="mine")
    theirs = services.file_report(user=other_learner, rung=kv_rung, message="theirs", code="")
    mine = ProblemReport.objects.get(message="mine")
    services.resolve_report(mine, by=admin_user, note="Fixed in version 2, thanks.")
    listed = learner_client.get(f"/aids/rungs/{kv_rung.slug}/reports").json()["reports"]
    assert [(item["message"], item["status"], item["note"]) for item in listed] == [("mine", "resolved", "Fixed in version 2, thanks.")]
    html = learner_client.get(f"/rungs/{kv_rung.slug}/").content.decode()
    assert "Fixed in version 2, thanks." in html and "theirs" not in html
    assert theirs.pk not in [item["id"] for item in listed]


def test_reporting_needs_a_login(kv_rung):
    assert _report(Client(), kv_rung).status_code == 401
    assert Client().get(f"/aids/rungs/{kv_rung.slug}/reports").status_code == 401


def test_resolving_twice_keeps_the_first_note(kv_rung, learner, admin_user):
    from aids.exceptions import AidRefused

    report = services.file_report(user=learner, rung=kv_rung, message="typo", code="")
    stale = ProblemReport.objects.get(pk=report.pk)
    services.resolve_report(report, by=admin_user, note="first")
    with pytest.raises(AidRefused):
        services.resolve_report(stale, by=admin_user, note="second")
    assert ProblemReport.objects.get(pk=report.pk).note == "first"


def test_a_flood_of_reports_is_refused_with_a_reason(kv_rung, learner, learner_client):
    from aids.constants import REPORTS_PER_HOUR

    for n in range(REPORTS_PER_HOUR):
        assert _report(learner_client, kv_rung, message=f"report {n}").status_code == 201
    response = _report(learner_client, kv_rung, message="one too many")
    assert response.status_code == 429 and "last hour" in response.json()["error"]
    assert ProblemReport.objects.count() == REPORTS_PER_HOUR


def test_reports_sent_at_once_keep_the_hourly_limit(catalog, learner, all_at_once):
    from aids.constants import REPORTS_PER_HOUR
    from exercises.models import Rung

    rung = Rung.objects.get(slug="kv-cache-size")

    def send(n: int) -> int:
        client = Client()
        client.force_login(learner)
        status: int = _report(client, rung, message=f"report {n}").status_code
        return status

    statuses = all_at_once(REPORTS_PER_HOUR + 10, send)
    assert sorted(statuses) == [201] * REPORTS_PER_HOUR + [429] * 10
    assert ProblemReport.objects.filter(learner=learner).count() == REPORTS_PER_HOUR

"""The instructors' queue of problem reports: who may see and resolve what (IDOR)."""

from __future__ import annotations

import pytest

from aids import services
from aids.constants import ReportStatus
from aids.models import ProblemReport
from authoring.models import ModuleRole
from exercises.models import Module, Rung, Track

pytestmark = pytest.mark.django_db

MODULE = "inference-and-serving"


@pytest.fixture
def owner(instructor, catalog):
    ModuleRole.objects.create(module=Module.objects.get(slug=MODULE), user=instructor, role="editor")
    return instructor


@pytest.fixture
def report(catalog, learner):
    rung = Rung.objects.get(slug="kv-cache-size")
    return services.file_report(user=learner, rung=rung, message="The worked example uses GB where the test wants GiB.", code="print(1)\n")


@pytest.fixture
def foreign_module(other_instructor, catalog):
    """Another module, owned by another instructor."""
    track = Track.objects.get()
    module = Module.objects.create(track=track, slug="another-module", title="Another module")
    ModuleRole.objects.create(module=module, user=other_instructor, role="editor")
    return module


def test_the_owner_sees_the_queue_linked_to_rung_and_attempt(client, owner, report):
    client.force_login(owner)
    html = client.get(f"/author/modules/{MODULE}/reports/").content.decode()
    assert "The worked example uses GB" in html
    assert f"/author/modules/{MODULE}/reports/{report.pk}/" in html
    assert f"/author/modules/{MODULE}/rungs/kv-cache-size/dashboard" in html
    detail = client.get(f"/author/modules/{MODULE}/reports/{report.pk}/").content.decode()
    assert "print(1)" in detail and "Resolve with this note" in detail


def test_the_owner_resolves_with_a_note_the_learner_reads(client, owner, report, learner):
    client.force_login(owner)
    response = client.post(f"/author/modules/{MODULE}/reports/{report.pk}/", {"action": "resolve", "note": "Good catch: fixed."})
    assert response.status_code == 302
    report.refresh_from_db()
    assert (report.status, report.note, report.resolved_by) == (ReportStatus.RESOLVED, "Good catch: fixed.", owner)
    assert "Good catch: fixed." not in client.get(f"/author/modules/{MODULE}/reports/").content.decode()  # open ones only
    assert "Good catch: fixed." in client.get(f"/author/modules/{MODULE}/reports/{report.pk}/").content.decode()
    client.force_login(learner)
    assert client.get("/aids/rungs/kv-cache-size/reports").json()["reports"][0]["note"] == "Good catch: fixed."


def test_an_instructor_of_another_module_cannot_see_or_resolve_it(client, other_instructor, foreign_module, report):
    client.force_login(other_instructor)
    assert client.get(f"/author/modules/{MODULE}/reports/").status_code == 403
    assert client.get(f"/author/modules/{MODULE}/reports/{report.pk}/").status_code == 403
    assert client.post(f"/author/modules/{MODULE}/reports/{report.pk}/", {"note": "mine now"}).status_code == 403
    # Through their own module's URL the report does not exist.
    assert client.get(f"/author/modules/{foreign_module.slug}/reports/{report.pk}/").status_code == 404
    assert client.post(f"/author/modules/{foreign_module.slug}/reports/{report.pk}/", {"note": "mine now"}).status_code == 404
    assert "The worked example" not in client.get(f"/author/modules/{foreign_module.slug}/reports/?status=all").content.decode()
    assert ProblemReport.objects.get(pk=report.pk).status == ReportStatus.OPEN


def test_learners_cannot_reach_the_queue_or_another_learners_report(client, learner, other_learner, report):
    for user in (learner, other_learner):
        client.force_login(user)
        assert client.get(f"/author/modules/{MODULE}/reports/").status_code == 403
        assert client.get(f"/author/modules/{MODULE}/reports/{report.pk}/").status_code == 403
        assert client.post(f"/author/modules/{MODULE}/reports/{report.pk}/", {"note": "done"}).status_code == 403
    client.force_login(other_learner)
    assert client.get("/aids/rungs/kv-cache-size/reports").json()["reports"] == []
    assert ProblemReport.objects.get(pk=report.pk).status == ReportStatus.OPEN


def test_an_admin_sees_every_module_queue(client, admin_user, report):
    client.force_login(admin_user)
    assert "The worked example" in client.get(f"/author/modules/{MODULE}/reports/").content.decode()


def test_a_resolved_report_can_be_reopened(client, owner, report):
    client.force_login(owner)
    client.post(f"/author/modules/{MODULE}/reports/{report.pk}/", {"action": "resolve", "note": "done"})
    client.post(f"/author/modules/{MODULE}/reports/{report.pk}/", {"action": "reopen"})
    assert ProblemReport.objects.get(pk=report.pk).status == ReportStatus.OPEN


def test_the_dashboards_link_the_queue_and_show_hint_use(client, owner, report, learner):
    services.reveal_hint(learner, report.rung, 1)
    client.force_login(owner)
    module_page = client.get(f"/author/modules/{MODULE}/dashboard").content.decode()
    assert f"/author/modules/{MODULE}/reports/" in module_page and "(1 open)" in module_page
    assert f"/mentor/modules/{MODULE}/questions" in module_page
    rung_page = client.get(f"/author/modules/{MODULE}/rungs/kv-cache-size/dashboard").content.decode()
    assert 'id="hint-use"' in rung_page and "Hints used before the first pass" in rung_page


def test_the_owner_reads_the_mentor_questions_but_another_instructor_does_not(client, owner, other_instructor, foreign_module):
    client.force_login(owner)
    assert client.get(f"/mentor/modules/{MODULE}/questions").status_code == 200
    client.force_login(other_instructor)
    assert client.get(f"/mentor/modules/{MODULE}/questions").status_code == 403

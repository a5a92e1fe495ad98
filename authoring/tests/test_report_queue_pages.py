"""The report queue lists a page of reports at a time, with the same queries however many there are (bench/scale.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from aids.constants import ReportStatus
from aids.models import ProblemReport
from authoring.views import REPORTS_PER_PAGE
from exercises.models import Module, Rung, Track

pytestmark = pytest.mark.django_db
QUEUE = "/author/modules/m/reports/"


@pytest.fixture
def rung() -> Rung:
    return Rung.objects.create(module=Module.objects.create(track=Track.objects.create(slug="t", title="T"), slug="m", title="M"), slug="add", order=1)


def _file(learner: Any, rung: Rung, count: int, **fields: Any) -> None:
    ProblemReport.objects.bulk_create(ProblemReport(learner=learner, rung=rung, message=f"report {number}", **fields) for number in range(count))


def _page(client: Client, **query: str) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(QUEUE, query)
    assert response.status_code == 200
    return response.content.decode(), len(captured)


def test_the_queue_is_paged_and_its_queries_do_not_grow(admin_user: Any, learner: Any, rung: Rung) -> None:
    client = Client()
    client.force_login(admin_user)
    _file(learner, rung, 3)
    _, few = _page(client)
    _file(learner, rung, REPORTS_PER_PAGE)
    _file(learner, rung, 2, status=ReportStatus.RESOLVED, note="Fixed.")
    first, many = _page(client)
    assert many == few
    assert first.count('class="reports"') == 1 and first.count("<tr><td>") == REPORTS_PER_PAGE
    assert f"Reports 1\N{EN DASH}{REPORTS_PER_PAGE} of {REPORTS_PER_PAGE + 3}" in first and "?status=open&amp;page=2" in first
    second, _ = _page(client, page="2")
    assert second.count("<tr><td>") == 3 and "rel=\"prev\"" in second and "rel=\"next\"" not in second
    everything, _ = _page(client, status="all", page="2")
    assert f"of {REPORTS_PER_PAGE + 5}" in everything and everything.count("<tr><td>") == 5
    assert _page(client, page="99")[0].count("<tr><td>") == 3  # past the end: the last page

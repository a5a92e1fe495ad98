"""The admin's submission list costs the same queries however many versions and learners there are (bench/scale.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from exercises.models import Module, Rung, RungVersion, Track
from grader.constants import Kind, Outcome, Status
from grader.models import Submission

pytestmark = pytest.mark.django_db


def _add_versions(rung: Rung, learner: Any, numbers: range) -> None:
    for number in numbers:
        version = RungVersion.objects.create(rung=rung, number=number, content_hash=f"h{number}", title="Add", minutes=5, difficulty="easy",
                                             instructions_md="", starter_code="", reference_code="", visible_tests="", hidden_tests="")
        Submission.objects.create(user=learner, rung=rung, rung_version=version, kind=Kind.SUBMIT, code="x = 1", status=Status.DONE,
                                  outcome=Outcome.PASSED)


def _queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get("/admin/grader/submission/", {"kind__exact": "submit"})
    assert response.status_code == 200
    return len(captured)


def test_the_submission_list_names_every_version_in_one_query(admin_user: Any, django_user_model: Any) -> None:
    rung = Rung.objects.create(module=Module.objects.create(track=Track.objects.create(slug="t", title="T"), slug="m", title="M"), slug="add", order=1)
    client = Client()
    client.force_login(admin_user)
    _add_versions(rung, django_user_model.objects.create_user(username="a"), range(1, 3))
    few = _queries(client)
    _add_versions(rung, django_user_model.objects.create_user(username="b"), range(3, 9))
    page = client.get("/admin/grader/submission/").content.decode()
    assert _queries(client) == few
    assert "add v8" in page  # the version filter still lists them

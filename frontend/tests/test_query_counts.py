"""The two pages learners live on stay cheap: a fixed, small number of SQL queries each."""

from __future__ import annotations

import pytest

from grader.models import Progress, Submission


@pytest.fixture
def busy_learner(catalog, learner):
    """A learner with history on several rungs, so per-rung queries would show."""
    from exercises.models import Rung

    for rung in Rung.objects.select_related("current_version"):
        assert rung.current_version is not None
        Submission.objects.create(user=learner, rung=rung, rung_version=rung.current_version, kind="run", code="x = 1", status="done", outcome="failed")
        Progress.objects.create(user=learner, rung=rung, attempts=1, best_outcome="failed")
    return learner


def test_the_module_page_takes_at_most_ten_queries(busy_learner, client, django_assert_max_num_queries):
    client.force_login(busy_learner)
    with django_assert_max_num_queries(10):
        response = client.get("/modules/inference-and-serving/")
    assert response.status_code == 200


def test_the_workspace_takes_at_most_fourteen_queries(busy_learner, client, django_assert_max_num_queries):
    # Ten for the page, one for the header's unread badge, one for the teachers' feedback on the learner's attempts,
    # one for the learner's course deadlines of the rung (a second, their extensions, only when they have some),
    # one for whether they teach a course that uses the rung (course staff open its reference, issue 57).
    client.force_login(busy_learner)
    with django_assert_max_num_queries(14):
        response = client.get("/rungs/kv-cache-size/")
    assert response.status_code == 200

"""Common mistakes per rung: hidden tests failed most, counted in the course's learners, names and descriptions only."""

from __future__ import annotations

import pytest

from courses.mistakes import EXAMPLES_PER_MISTAKE, common_mistakes

from .tools_world import HIDDEN_SOURCE_MARKER, World, attempt, build_world, client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> World:
    return build_world()


URL = "/courses/course-a/rungs/ta-1/mistakes/"


def _failures(world: World) -> dict[str, int]:
    """learner_a fails test_edge twice and test_big once; learner_a2 fails test_edge; others' failures must not count."""
    u, r1 = world.users, world.rungs["ta-1"]
    ids = {
        "a_first": attempt(u["learner_a"], r1, "v1", results={"test_edge": "failed", "test_big": "timeout"}).pk,
        "a_second": attempt(u["learner_a"], r1, "v2", results={"test_edge": "error", "test_big": "passed"}).pk,
        "a2": attempt(u["learner_a2"], r1, "v3", results={"test_edge": "failed", "test_big": "passed"}).pk,
    }
    attempt(u["learner_a2"], r1, "v4", results={"test_visible": "failed"}, hidden=False)  # a visible test: not a hidden mistake
    attempt(u["learner_a2"], r1, "v5", kind="run", results={"test_big": "failed"})  # a Run: not counted
    attempt(u["ta_a"], r1, "staff", results={"test_big": "failed"})  # staff are not learners
    attempt(u["learner_b"], r1, "other course", results={"test_big": "failed"})  # a learner of course B only
    attempt(u["learner_a"], world.rungs["ta-2"], "other rung", results={"test_big": "failed"})
    return ids


def test_tests_are_ranked_by_distinct_learners_of_the_course(world):
    ids = _failures(world)
    result = common_mistakes(world.course_a, world.rungs["ta-1"].pk)
    assert result.submitters == 2
    assert [(m.test_name, m.learners, m.description) for m in result.mistakes] == [
        ("test_edge", 2, "Handles the empty batch."),
        ("test_big", 1, "Scales to 4k tokens."),
    ]
    edge = result.mistakes[0]
    assert [(e.submission_id, e.learner) for e in edge.examples] == [(ids["a2"], "learner_a2"), (ids["a_second"], "learner_a")]
    assert len(edge.examples) <= EXAMPLES_PER_MISTAKE


def test_the_page_links_examples_and_never_shows_hidden_source(world):
    ids = _failures(world)
    response = client_for(world, "teacher_a").get(URL)
    html = response.content.decode()
    assert response.status_code == 200
    assert "test_edge" in html and "Handles the empty batch." in html and "2 of 2" in html
    assert f"/courses/course-a/submissions/{ids['a2']}/feedback/" in html
    assert HIDDEN_SOURCE_MARKER not in html and "test_visible" not in html


@pytest.mark.parametrize(
    ("who", "url", "status"),
    [
        ("teacher_b", URL, 404),  # staff of another course
        ("learner_b", URL, 404),
        ("learner_a", URL, 403),  # a learner of the course: a staff tool
        ("stranger", URL, 404),
        ("teacher_a", "/courses/course-a/rungs/ta-out/mistakes/", 404),  # a rung the course does not use
        ("teacher_a", "/courses/course-a/rungs/tb-1/mistakes/", 404),  # course B's rung
        ("teacher_b", "/courses/course-b/rungs/ta-1/mistakes/", 404),  # course A's rung through course B
        ("ta_a", URL, 200),
    ],
)
def test_only_the_courses_staff_see_its_rungs_mistakes(world, who, url, status):
    _failures(world)
    response = client_for(world, who).get(url)
    assert response.status_code == status
    assert (b"test_edge" in response.content) is (status == 200)

"""Publish stores the passing Check's test strength on the new version (issue 58, item 4)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from authoring import services
from exercises.domain_guard import COUNTS_TEST
from exercises.models import RungVersion
from sandbox.jobs import CaseResult, Job, JobResult
from sandbox.testing import FakeRunner, _run_in_process

from .test_authoring_flow import _author, checks, track  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

GENERATED = (
    "def test_generated_sums(solution):\r\n    for a in range(-3, 3):\r\n        for b in range(5):\r\n"
    "            assert solution.add(a, b) == a + b\r\n\r\n\r\n"
)


def _counted(job: Job) -> JobResult:
    """The in-process run; the guarded run's counting test carries the figures as in the sandbox.

    (In process the guard has no ``reference`` to wrap, so the counts are the sandbox's: 30 calls.)"""
    result = _run_in_process(job)
    if not any(COUNTS_TEST in source for source in job.tests.values()):
        return result
    counts = 'AssertionError: dojo case counts: {"calls": {"test_generated_sums": 30}, "generated": 30}'
    tests = [CaseResult(name=test.name, outcome="failed", message=counts) if test.name == COUNTS_TEST else test for test in result.tests]
    return dataclasses.replace(result, outcome="failed", tests=tests)


def test_publish_stores_what_the_passing_check_measured(client: Any, instructor: Any, track: Any, checks: list[int],  # noqa: F811
                                                        django_capture_on_commit_callbacks: Any) -> None:
    client.force_login(instructor)
    hidden = {"hidden_tests": GENERATED + "def test_zero(solution):\r\n    assert solution.add(0, 7) == 7\r\n",
              "hidden-0-name": "test_generated_sums", "hidden-0-description": "Many sums."}
    _author(client, track, django_capture_on_commit_callbacks, **hidden)
    check = services.run_check(checks[0], runner=FakeRunner(_counted))
    assert check is not None
    assert check.ok, check.facts
    assert check.summary["generated_cases"] == 30 and check.summary["hidden_tests"] == 2

    assert "Published version 1" in client.post("/author/modules/warm-ups/rungs/add-two/publish", follow=True).content.decode()
    version = RungVersion.objects.get(rung__slug="add-two")
    assert version.strength == {"named": 2, "generated": 30, "wrong": 3, "wrong_caught": 3, "alternatives": 2, "alternatives_passing": 2,
                                "mutation_score": check.mutation["mutation_score"]}

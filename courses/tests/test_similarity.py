"""Similarity reports: near-copies found, independent work and the starter code not, the report's
state machine, and the pages: course staff only, learner code escaped.

Synthetic rungs and Submits: nothing grades here, so no sandbox.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from courses import similarity
from courses.constants import CourseRole, EnrolSource, ReportState
from courses.membership import enrol, unenrol
from courses.models import Assignment, AssignmentRung, Course, SimilarityReport
from exercises.models import Module, Rung, RungVersion, Track
from grader.constants import Kind, Outcome, Status
from grader.models import Submission

pytestmark = pytest.mark.django_db

# A long starter: every learner's code carries it, so without subtracting it any two solutions look alike.
STARTER = '''import torch


class KVCache:
    """A key/value cache of fixed capacity for one layer."""

    def __init__(self, batch: int, heads: int, capacity: int, dim: int) -> None:
        self.keys = torch.zeros(batch, heads, capacity, dim)
        self.values = torch.zeros(batch, heads, capacity, dim)
        self.length = 0
        self.capacity = capacity

    def view(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.keys[:, :, : self.length], self.values[:, :, : self.length]


def append(cache: KVCache, k: torch.Tensor, v: torch.Tensor) -> None:
    """Append new keys and values (batch, heads, steps, dim); raise ValueError when they do not fit."""
    raise NotImplementedError
'''

BODY_A = '''    steps = k.shape[2]
    end = cache.length + steps
    if end > cache.capacity:
        raise ValueError(f"cache full: {end} > {cache.capacity}")
    cache.keys[:, :, cache.length:end] = k
    cache.values[:, :, cache.length:end] = v
    cache.length = end
'''
# A's body with every name and the message changed and a comment added: the same code.
BODY_A_RENAMED = "    # my own work\n" + BODY_A.replace("steps", "n").replace("end", "stop").replace("cache full", "no room left")
# Written another way.
BODY_OTHER = '''    free = cache.capacity - cache.length
    if k.size(2) > free:
        raise ValueError("too many steps")
    for offset in range(k.size(2)):
        cache.keys[..., cache.length + offset, :] = k[..., offset, :]
        cache.values[..., cache.length + offset, :] = v[..., offset, :]
    cache.length += k.size(2)
'''
# Yet another way, sharing nothing with A but the starter.
BODY_THIRD = '''    if cache.length + k.shape[-2] <= cache.capacity:
        merged_k = torch.cat([cache.keys[:, :, : cache.length], k], dim=2)
        merged_v = torch.cat([cache.values[:, :, : cache.length], v], dim=2)
        cache.keys[:, :, : merged_k.shape[2]] = merged_k
        cache.values[:, :, : merged_v.shape[2]] = merged_v
        cache.length = merged_k.shape[2]
        return
    raise ValueError("overflow")
'''
HOSTILE = "</pre><script>alert('owned')</script><img src=x onerror=alert(1)>"


def solution(body: str, starter: str = STARTER) -> str:
    return starter.replace("    raise NotImplementedError\n", body)


@dataclass
class World:
    course: Course
    other_course: Course
    assignment: Assignment
    rung: Rung
    users: dict[str, User]


@pytest.fixture
def world() -> World:
    track = Track.objects.create(slug="sim-track", title="Track")
    module = Module.objects.create(track=track, slug="sim-mod", title="Module")
    rung = Rung.objects.create(module=module, slug="sim-kv", order=0)
    version = RungVersion.objects.create(
        rung=rung, number=1, content_hash="sim1", title="Append to a KV cache", minutes=5, difficulty="easy",
        instructions_md="", starter_code=STARTER, reference_code="", visible_tests="", hidden_tests="",
    )
    Rung.objects.filter(pk=rung.pk).update(current_version=version)
    rung.refresh_from_db()
    course = Course.objects.create(slug="sim-course", title="Similarity course")
    other_course = Course.objects.create(slug="sim-other", title="Another course")
    now = timezone.now()
    assignment = Assignment.objects.create(course=course, title="Week 1", opens_at=now - dt.timedelta(days=7), due_at=now + dt.timedelta(days=7))
    AssignmentRung.objects.create(assignment=assignment, rung=rung)
    # No passwords (hashing one costs most of a test): the clients log in with force_login.
    users = {name: User.objects.create(username=name) for name in
             ("teacher", "ta", "anna", "ben", "cleo", "dan", "other_teacher", "other_learner")}
    enrol(course, users["teacher"], CourseRole.TEACHER, EnrolSource.STAFF)
    enrol(course, users["ta"], CourseRole.TA, EnrolSource.STAFF)
    for name in ("anna", "ben", "cleo", "dan"):
        enrol(course, users[name], CourseRole.LEARNER, EnrolSource.LINK)
    enrol(other_course, users["other_teacher"], CourseRole.OWNER, EnrolSource.CREATED)
    enrol(other_course, users["other_learner"], CourseRole.LEARNER, EnrolSource.LINK)
    return World(course, other_course, assignment, rung, users)


def submit(world: World, user: str, code: str, *, outcome: str = Outcome.PASSED, kind: str = Kind.SUBMIT) -> Submission:
    assert world.rung.current_version is not None
    return Submission.objects.create(
        user=world.users[user], rung=world.rung, rung_version=world.rung.current_version, kind=kind, code=code,
        status=Status.DONE, outcome=outcome, finished_at=timezone.now(),
    )


def build(world: World, threshold: float = 0.6) -> SimilarityReport:
    report = SimilarityReport.objects.create(assignment=world.assignment, rung=world.rung, threshold=threshold, created_by=world.users["teacher"])
    built = similarity.build_similarity_report(report.pk)
    assert built is not None
    return built


def pair_of(report: SimilarityReport, first: Submission, second: Submission) -> dict[str, Any] | None:
    return next((pair for pair in report.pairs if {pair["a"], pair["b"]} == {first.pk, second.pk}), None)


# --- What is compared and found ------------------------------------------------------------


def test_near_copies_are_paired_and_an_independent_solution_is_not(world: World) -> None:
    anna = submit(world, "anna", solution(BODY_A))
    ben = submit(world, "ben", solution(BODY_A_RENAMED))
    cleo = submit(world, "cleo", solution(BODY_OTHER))
    report = build(world)
    assert report.state == ReportState.DONE and report.compared == 3 and report.error == ""
    copied = pair_of(report, anna, ben)
    assert copied is not None and copied["score"] >= 0.9, report.pairs
    assert pair_of(report, anna, cleo) is None and pair_of(report, ben, cleo) is None
    # What matched is marked on both sides, and it is the body, not only the starter.
    marked_a = "".join(anna.code[start:end] for start, end in copied["ranges_a" if copied["a"] == anna.pk else "ranges_b"])
    assert "cache.keys[:, :, cache.length:end] = k" in marked_a


def test_starter_code_is_not_counted_as_similarity(world: World) -> None:
    anna = submit(world, "anna", solution(BODY_A))
    dan = submit(world, "dan", solution(BODY_THIRD))
    learners = similarity.latest_passing_submits(world.assignment, world.rung)
    # Without the starter subtracted, the shared starter alone makes the pair look copied...
    with_starter = similarity.compare_learners(learners, [], 0.6, stop_at=float("inf"))
    assert [(pair["a"], pair["b"]) for pair in with_starter] == [(anna.pk, dan.pk)]
    # ...subtracted, it does not count.
    report = build(world)
    assert report.state == ReportState.DONE and report.pairs == []
    # Two learners who submitted the starter as given share nothing either.
    submit(world, "ben", STARTER)
    submit(world, "cleo", STARTER)
    assert build(world).pairs == []


def test_only_the_course_learners_latest_passing_submits_are_compared(world: World) -> None:
    submit(world, "anna", solution(BODY_OTHER))
    anna_latest = submit(world, "anna", solution(BODY_A))
    submit(world, "anna", solution(BODY_THIRD), outcome=Outcome.FAILED)  # not passing: not compared
    submit(world, "ben", solution(BODY_A_RENAMED), kind=Kind.RUN)  # a Run: not compared
    submit(world, "teacher", solution(BODY_A))  # staff
    submit(world, "other_learner", solution(BODY_A))  # another course's learner
    cleo = submit(world, "cleo", solution(BODY_A_RENAMED))
    assert {learner.submission_id for learner in similarity.latest_passing_submits(world.assignment, world.rung)} == {anna_latest.pk, cleo.pk}
    report = build(world)
    assert report.compared == 2 and [(pair["a"], pair["b"]) for pair in report.pairs] == [(anna_latest.pk, cleo.pk)]


# --- The state machine ---------------------------------------------------------------------


def test_a_request_is_queued_by_task_name_and_the_task_runs_it_once(world: World, enqueued: list[Any], django_capture_on_commit_callbacks: Any) -> None:
    from config.celery import app

    submit(world, "anna", solution(BODY_A))
    submit(world, "ben", solution(BODY_A_RENAMED))
    with django_capture_on_commit_callbacks(execute=True):
        report = similarity.request_similarity_report(world.assignment, world.rung, world.users["teacher"], 0.5)
    assert report.state == ReportState.QUEUED
    assert enqueued == [("similarity", report.pk, "submit")]
    # A second request while it is queued is the same report.
    assert similarity.request_similarity_report(world.assignment, world.rung, world.users["ta"]).pk == report.pk
    app.loader.import_default_modules()  # what a worker does: autodiscovery finds courses.tasks, the name finds the task
    app.tasks[similarity.TASK_NAME].apply(args=(report.pk,)).get()
    report.refresh_from_db()
    assert report.state == ReportState.DONE and len(report.pairs) == 1 and report.finished_at is not None
    # A redelivered task finds nothing to claim and changes nothing.
    assert similarity.build_similarity_report(report.pk) is None
    assert SimilarityReport.objects.get(pk=report.pk).pairs == report.pairs


def test_a_crash_ends_the_report_failed_never_running(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    submit(world, "anna", solution(BODY_A))

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("boom")

    monkeypatch.setattr(similarity, "compare_learners", crash)
    report = build(world)
    assert report.state == ReportState.FAILED and "MemoryError" in report.error and report.finished_at is not None


def test_a_report_out_of_time_fails_and_says_so(world: World) -> None:
    submit(world, "anna", solution(BODY_A))
    submit(world, "ben", solution(BODY_A_RENAMED))
    report = SimilarityReport.objects.create(assignment=world.assignment, rung=world.rung)
    built = similarity.build_similarity_report(report.pk, budget_s=-1)
    assert built is not None and built.state == ReportState.FAILED and "took longer" in built.error and built.pairs == []


def test_a_stale_report_is_shown_stopped_and_failed_when_requested_again(world: World, enqueued: list[Any]) -> None:
    long_ago = timezone.now() - dt.timedelta(seconds=similarity.STALE_AFTER_S + 1)
    # Its worker died mid-way: still "running", long after anyone could be working on it.
    stuck = SimilarityReport.objects.create(assignment=world.assignment, rung=world.rung, state=ReportState.RUNNING, created_at=long_ago)
    assert similarity.is_stale(stuck)
    assert "stopped" in world_client(world, "teacher").get(reverse("courses:similarity-report", args=[world.course.slug, stuck.pk])).content.decode()
    fresh = similarity.request_similarity_report(world.assignment, world.rung, world.users["teacher"])
    stuck.refresh_from_db()
    assert fresh.pk != stuck.pk and fresh.state == ReportState.QUEUED
    assert stuck.state == ReportState.FAILED and stuck.error == similarity.FAILED_STALE
    # The dead task's redelivery, or a late finish, writes nothing over it.
    assert similarity.build_similarity_report(stuck.pk) is None


def test_a_result_is_dropped_when_the_report_was_ended_meanwhile(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    submit(world, "anna", solution(BODY_A))
    submit(world, "ben", solution(BODY_A_RENAMED))
    real = similarity.compare_learners

    def ended_meanwhile(*args: Any, **kwargs: Any) -> Any:
        SimilarityReport.objects.update(state=ReportState.FAILED, error=similarity.FAILED_STALE)
        return real(*args, **kwargs)

    monkeypatch.setattr(similarity, "compare_learners", ended_meanwhile)
    report = build(world)
    assert report.state == ReportState.FAILED and report.pairs == []


def test_reports_in_flight_per_course_are_bounded(world: World, enqueued: list[Any]) -> None:
    rungs = [world.rung]
    for index in range(similarity.SIMILARITY_MAX_IN_FLIGHT_PER_COURSE):
        rung = Rung.objects.create(module=world.rung.module, slug=f"sim-extra-{index}", order=index + 1)
        AssignmentRung.objects.create(assignment=world.assignment, rung=rung, order=index + 1)
        rungs.append(rung)
    for rung in rungs[:-1]:
        similarity.request_similarity_report(world.assignment, rung, world.users["teacher"])
    with pytest.raises(similarity.SimilarityRefused):
        similarity.request_similarity_report(world.assignment, rungs[-1], world.users["teacher"])


# --- The pages -------------------------------------------------------------------------------


def world_client(world: World, user: str) -> Client:
    client = Client()
    client.force_login(world.users[user])
    return client


def test_staff_request_a_report_and_read_the_pair_side_by_side_with_the_code_escaped(
    world: World, enqueued: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    anna = submit(world, "anna", solution(BODY_A) + f"\n# {HOSTILE}\n")
    submit(world, "ben", solution(BODY_A_RENAMED) + f'\nNOTE = "{HOSTILE}"\n')
    client = world_client(world, "ta")
    page = reverse("courses:similarity", args=[world.course.slug, world.assignment.pk])
    assert client.get(page).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(page, {"rung": world.rung.pk, "threshold": "0.6"})
    report = SimilarityReport.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("courses:similarity-report", args=[world.course.slug, report.pk])
    assert enqueued == [("similarity", report.pk, "submit")]
    similarity.build_similarity_report(report.pk)
    listing = client.get(response["Location"]).content.decode()
    assert "anna" in listing and "ben" in listing
    pair_page = reverse("courses:similarity-pair", args=[world.course.slug, report.pk, 0])
    body = client.get(pair_page).content.decode()
    assert "<mark>" in body and "cache.values[:, :, cache.length:end] = v" in body
    # The starter's lines that a matched run began in stay unmarked.
    assert "def append(cache: KVCache, k: torch.Tensor, v: torch.Tensor) -&gt; None:" in body and "<mark>cache: KVCache" not in body
    assert "<script>alert" not in body and "<img src=x" not in body and "&lt;script&gt;alert(" in body
    assert f"Submit #{anna.pk}" in body
    # A learner unenrolled since: their code is no longer shown to the course's staff.
    unenrol(world.course, world.users["ben"])
    assert client.get(pair_page).status_code == 404
    assert "anna" not in client.get(response["Location"]).content.decode().split("<h1>", 1)[1]


def test_learners_and_another_course_staff_are_denied(world: World, enqueued: list[Any]) -> None:
    submit(world, "anna", solution(BODY_A))
    submit(world, "ben", solution(BODY_A_RENAMED))
    report = build(world)
    other_assignment = Assignment.objects.create(course=world.other_course, title="Theirs", opens_at=timezone.now(), due_at=timezone.now())
    urls = [
        reverse("courses:similarity", args=[world.course.slug, world.assignment.pk]),
        reverse("courses:similarity-report", args=[world.course.slug, report.pk]),
        reverse("courses:similarity-pair", args=[world.course.slug, report.pk, 0]),
    ]
    assert world_client(world, "teacher").get(urls[2]).status_code == 200
    for url in urls:
        assert world_client(world, "anna").get(url).status_code == 403, url  # a learner of the course
        assert world_client(world, "other_teacher").get(url).status_code == 404, url  # staff of another course
        assert world_client(world, "other_learner").get(url).status_code == 404, url
        assert Client().get(url).status_code == 302, url  # to the login page
    assert world_client(world, "anna").post(urls[0], {"rung": world.rung.pk, "threshold": "0.6"}).status_code == 403
    assert world_client(world, "other_teacher").post(urls[0], {"rung": world.rung.pk, "threshold": "0.6"}).status_code == 404
    # Their own course's slug does not open this course's report or assignment either.
    theirs = world_client(world, "other_teacher")
    assert theirs.get(reverse("courses:similarity-report", args=[world.other_course.slug, report.pk])).status_code == 404
    assert theirs.get(reverse("courses:similarity-pair", args=[world.other_course.slug, report.pk, 0])).status_code == 404
    assert theirs.post(reverse("courses:similarity", args=[world.other_course.slug, world.assignment.pk]), {"rung": world.rung.pk}).status_code == 404
    # Nor a rung outside the assignment for this course's staff.
    assert theirs.post(reverse("courses:similarity", args=[world.other_course.slug, other_assignment.pk]),
                       {"rung": world.rung.pk, "threshold": "0.6"}).status_code == 400
    assert SimilarityReport.objects.count() == 1 and enqueued == []


# --- On a real worker --------------------------------------------------------------------------


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_finds_the_task_by_name_and_builds_the_report(worker: Any, world: World) -> None:
    import time

    anna = submit(world, "anna", solution(BODY_A))
    ben = submit(world, "ben", solution(BODY_A_RENAMED))
    report = similarity.request_similarity_report(world.assignment, world.rung, world.users["teacher"])
    deadline = time.monotonic() + 60
    while report.state in (ReportState.QUEUED, ReportState.RUNNING) and time.monotonic() < deadline:
        time.sleep(0.3)
        report.refresh_from_db()
    assert report.state == ReportState.DONE, (report.state, report.error, worker.log()[-2000:])
    assert [(pair["a"], pair["b"]) for pair in report.pairs] == [(anna.pk, ben.pk)]

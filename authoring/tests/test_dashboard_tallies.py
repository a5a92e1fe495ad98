"""The dashboards' running counts (grader.tallies) say what counting every submission from scratch says.

A varied history goes through the real services: Runs and Submits that
pass, fail, error, end as infra_error, are cancelled or abandoned by the
reaper, over several days and two versions, with rejudges applied (a fail
turned into a pass and back, a Run regraded), old Runs compacted
(grader.retention), submissions and an account deleted. After each step the dashboards' figures must equal
what the code before the counts computed by reading every submission
(``_from_scratch`` below, kept as it was), and ``rebuild_tallies`` must
find the same counts the services kept.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.utils import timezone

from authoring import stats
from exercises.models import Rung, RungVersion
from grader import lifecycle, rejudge, retention, services
from grader.constants import OUTCOME_RANK, Kind, Outcome, Status
from grader.models import LearnerRungTally, Progress, Rejudge, RungTally, Submission, SubmissionTestResult
from grader.tallies import rebuild_tallies
from sandbox.jobs import CaseResult, Job, JobResult
from sandbox.testing import FakeRunner, job_result

pytestmark = pytest.mark.django_db


# --- The figures as they were computed before the counts: every submission read -------------------


def _graded_submits(rungs: Sequence[Rung]) -> Any:
    return Submission.objects.filter(rung__in=rungs, kind=Kind.SUBMIT, status=Status.DONE).exclude(outcome=Outcome.INFRA_ERROR)


def _attempts_until_first_pass(rungs: Sequence[Rung]) -> list[int]:
    counts: dict[tuple[int, int], int] = defaultdict(int)
    done: dict[tuple[int, int], int] = {}
    for user_id, rung_id, outcome in _graded_submits(rungs).order_by("enqueued_at", "pk").values_list("user_id", "rung_id", "outcome"):
        key = (user_id, rung_id)
        if key in done:
            continue
        counts[key] += 1
        if outcome == Outcome.PASSED:
            done[key] = counts[key]
    return list(done.values())


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1))]


def _shown(seconds: float) -> str:
    """As the dashboard's table shows a latency (floatformat:2)."""
    return str(Decimal(repr(seconds)).quantize(Decimal("0.01"), ROUND_HALF_UP))


def _from_scratch(rungs: Sequence[Rung]) -> dict[str, Any]:
    days = [(row["day"].isoformat(), row["passed"] / row["total"], row["total"]) for row in
            _graded_submits(rungs).annotate(day=TruncDate("finished_at")).values("day")
            .annotate(total=Count("pk"), passed=Count("pk", filter=Q(outcome=Outcome.PASSED))).order_by("day") if row["day"] is not None]
    rows = (SubmissionTestResult.objects.filter(submission__in=_graded_submits(rungs), hidden=True).exclude(outcome="passed")
            .values("name", "submission__rung__slug").annotate(n=Count("pk")))
    failing = sorted(((row["name"], row["submission__rung__slug"], row["n"]) for row in rows), key=lambda row: (-row[2], row[0], row[1]))[:12]
    mix = Counter(Submission.objects.filter(rung__in=rungs, kind=Kind.SUBMIT, status=Status.DONE).values_list("outcome", flat=True))
    waits, runs, totals = [], [], []
    for enqueued, started, finished in Submission.objects.filter(rung__in=rungs, status=Status.DONE, finished_at__isnull=False).values_list(
            "enqueued_at", "started_at", "finished_at"):
        assert finished is not None
        totals.append((finished - enqueued).total_seconds())
        if started is not None:
            waits.append(max(0.0, (started - enqueued).total_seconds()))
            runs.append(max(0.0, (finished - started).total_seconds()))
    latency = [{"name": name, "count": len(values), **{f"p{p}": _shown(_percentile(values, p / 100)) for p in (50, 90, 99)}, "max": _shown(max(values))}
               for name, values in (("queue wait", waits), ("grading", runs), ("total", totals)) if values]
    return {
        "days": days,
        "attempts": Counter(stats._bucket(n) for n in _attempts_until_first_pass(rungs)),
        "failing": [(f"{slug}: {name}" if len(rungs) > 1 else name, n) for name, slug, n in failing],
        "mix": [(outcome, mix[outcome]) for outcome in sorted(mix, key=lambda o: (-OUTCOME_RANK.get(Outcome(o), -1), o))],
        "latency": latency,
    }


def _rung_table_from_scratch(rungs: Sequence[Rung]) -> list[dict[str, Any]]:
    rows = []
    for rung in rungs:
        graded = _graded_submits([rung])
        total = graded.count()
        attempts = sorted(_attempts_until_first_pass([rung]))
        rows.append({"rung": rung, "submits": total, "pass_rate": graded.filter(outcome=Outcome.PASSED).count() / total if total else None,
                     "learners": graded.values("user").distinct().count(),
                     "solved": Progress.objects.filter(rung=rung, solved_at__isnull=False).count(),
                     "median_attempts": attempts[len(attempts) // 2] if attempts else None})
    return rows


def _kept(rungs: Sequence[Rung]) -> dict[str, Any]:
    numbers = stats.figures(rungs)
    numbers["latency"] = [{**row, **{key: _shown(row[key]) for key in ("p50", "p90", "p99", "max")}} for row in numbers["latency"]]
    return numbers


def _tables() -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    return (set(RungTally.objects.filter(count__gt=0).values_list("rung_id", "figure", "key", "count")),
            set(LearnerRungTally.objects.filter(graded_submits__gt=0).values_list("user_id", "rung_id", "graded_submits", "submits_to_first_pass")))


def assert_the_counts_agree(rungs: Sequence[Rung]) -> None:
    for shown in ([*rungs], *([rung] for rung in rungs)):
        assert _kept(shown) == _from_scratch(shown), [rung.slug for rung in shown]
    assert stats.rung_table(rungs[0].module) == _rung_table_from_scratch(
        list(Rung.objects.filter(module=rungs[0].module, current_version__isnull=False).order_by("order", "slug")))
    kept = _tables()
    rebuild_tallies()
    assert _tables() == kept, "the services' counts differ from counting again"


# --- A history through the real services ----------------------------------------------------------------


class Clock:
    """``timezone.now`` for the services, moved on by hand (days apart, queue waits and grading times in ms)."""

    def __init__(self, monkeypatch: Any) -> None:
        self.now = timezone.now().replace(microsecond=0) - timedelta(days=200)
        monkeypatch.setattr(timezone, "now", lambda: self.now)

    def tick(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock(monkeypatch: Any, settings: Any) -> Clock:
    settings.GRADER_RATE_LIMIT_PER_MIN = 1000
    settings.GRADER_MAX_ATTEMPTS = 1  # an infra_error ends the job (no retry), and the reaper abandons a job it finds stuck
    return Clock(monkeypatch)


def _failed(*names: str, outcome: str = "failed") -> JobResult:
    return job_result(outcome, tests=[CaseResult(name=name, outcome="failed", message="assert 1 == 2") for name in names]
                      + [CaseResult(name="test_fine", outcome="passed")])


def _job(clock: Clock, user: Any, rung: Rung, kind: str, result: JobResult, *, wait_ms: float, grading_ms: float) -> Submission:
    clock.tick(minutes=7)
    submission = services.submit_solution(user=user, rung=rung, kind=kind, code="x = 1\n")
    Submission.objects.filter(pk=submission.pk).update(enqueued_at=clock.now)
    clock.tick(milliseconds=wait_ms)

    def grade(job: Job) -> JobResult:
        clock.tick(milliseconds=grading_ms)
        return result

    services.grade_submission(submission.pk, runner=FakeRunner(grade))
    return Submission.objects.get(pk=submission.pk)


def _regrade(clock: Clock, submissions: Sequence[Submission], results: Sequence[JobResult], admin: Any) -> int:
    batch = rejudge.start_rejudge(submissions, target=Rejudge.Target.CURRENT, user=admin)
    by_submission = dict(zip([s.pk for s in submissions], results, strict=True))
    for result in batch.results.all():
        rejudge.rejudge_one(result.pk, runner=FakeRunner(by_submission[result.submission_id]))
    clock.tick(minutes=1)
    return rejudge.apply_rejudge(batch, admin)


def _new_version(rung: Rung) -> None:
    assert rung.current_version_id is not None
    version = RungVersion.objects.get(pk=rung.current_version_id)
    version.pk = None
    version.number += 1
    version.content_hash = f"{version.content_hash[:58]}-next"
    version.save()
    Rung.objects.filter(pk=rung.pk).update(current_version=version)
    rung.refresh_from_db()


def test_the_dashboards_counts_equal_counting_every_submission(catalog, learner, other_learner, admin_user, enqueued, clock):
    kv = Rung.objects.get(slug="kv-cache-size")
    second = Rung.objects.filter(module=kv.module, current_version__isnull=False).exclude(pk=kv.pk).order_by("order").first()
    assert second is not None
    rungs = [kv, second]

    # Day 1: Runs, failing Submits with failed hidden tests, an error, a pass.
    _job(clock, learner, kv, Kind.RUN, _failed("test_visible_shape"), wait_ms=120, grading_ms=900)
    fail_1 = _job(clock, learner, kv, Kind.SUBMIT, _failed("test_unknown_dtype_raises", "test_int4_packs"), wait_ms=2345, grading_ms=4005)
    _job(clock, learner, kv, Kind.SUBMIT, job_result("error", message="NameError"), wait_ms=5, grading_ms=333)
    pass_1 = _job(clock, learner, kv, Kind.SUBMIT, job_result("passed"), wait_ms=15, grading_ms=1250)
    _job(clock, other_learner, kv, Kind.SUBMIT, _failed("test_unknown_dtype_raises"), wait_ms=8000, grading_ms=2000)
    _job(clock, other_learner, second, Kind.RUN, job_result("passed"), wait_ms=0, grading_ms=450)
    assert_the_counts_agree(rungs)

    # Day 3: a new version, an infra_error, a Submit cancelled while queued, another abandoned by the reaper, more passes.
    clock.tick(days=2)
    _new_version(kv)
    _job(clock, other_learner, kv, Kind.SUBMIT, job_result("infra_error", error_code="harness_crashed"), wait_ms=40, grading_ms=10)
    clock.tick(minutes=3)
    cancelled = services.submit_solution(user=other_learner, rung=kv, kind=Kind.SUBMIT, code="x = 2\n")
    clock.tick(seconds=9)
    services.cancel_submission(cancelled)
    other_fail = _job(clock, other_learner, kv, Kind.SUBMIT, _failed("test_int4_packs", outcome="timeout"), wait_ms=70, grading_ms=10_000)
    stuck = services.submit_solution(user=learner, rung=second, kind=Kind.SUBMIT, code="x = 3\n")
    assert lifecycle.claim(lifecycle.SUBMISSIONS, stuck.pk, "a-worker-that-died") is not None
    clock.tick(hours=2)
    assert lifecycle.reap(clock.now).abandoned == [("submission", stuck.pk)]
    _job(clock, learner, second, Kind.SUBMIT, _failed("test_other"), wait_ms=1, grading_ms=2)
    _job(clock, learner, second, Kind.SUBMIT, job_result("passed"), wait_ms=3, grading_ms=4)
    assert_the_counts_agree(rungs)

    # Rejudges: a failed first attempt now passes (the first pass moves earlier), a pass now fails, a Run regraded.
    clock.tick(days=1)
    old_run = Submission.objects.filter(user=learner, rung=kv, kind=Kind.RUN).get()
    assert _regrade(clock, [fail_1, pass_1, other_fail, old_run], [job_result("passed"), _failed("test_int4_packs"),
                                                                   _failed("test_new_hidden"), job_result("passed")], admin_user) == 4
    assert_the_counts_agree(rungs)
    # ... and back: the first attempt fails again, so the first pass is none at all now.
    fail_1.refresh_from_db()
    assert _regrade(clock, [fail_1], [_failed("test_unknown_dtype_raises")], admin_user) == 1
    assert_the_counts_agree(rungs)

    # A quarter later: new Runs, then old Runs' rows compacted (grader.retention); nothing counted changes.
    clock.tick(days=100)
    _job(clock, learner, kv, Kind.RUN, job_result("passed"), wait_ms=10, grading_ms=20)
    _job(clock, other_learner, second, Kind.RUN, _failed("test_visible_shape"), wait_ms=10, grading_ms=20)
    before = stats.figures(rungs)
    assert retention.compact_runs(older_than_days=30)[0] >= 1
    assert stats.figures(rungs) == before
    assert_the_counts_agree(rungs)

    # Deleted in the admin: a learner's Submits of a rung (their first pass among them), then a whole account.
    Submission.objects.filter(user=learner, rung=second, kind=Kind.SUBMIT).delete()
    assert_the_counts_agree(rungs)
    Submission.objects.get(pk=fail_1.pk).delete()
    assert_the_counts_agree(rungs)
    other_learner.delete()
    assert_the_counts_agree(rungs)


def test_the_module_dashboard_asks_as_many_queries_whatever_the_history(catalog, learner, other_learner, admin_user, enqueued, clock, client,
                                                                         django_assert_max_num_queries):
    kv = Rung.objects.get(slug="kv-cache-size")
    client.force_login(admin_user)
    url = f"/author/modules/{kv.module.slug}/dashboard"
    _job(clock, learner, kv, Kind.SUBMIT, _failed("test_unknown_dtype_raises"), wait_ms=10, grading_ms=20)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    for n in range(6):
        _job(clock, learner if n % 2 else other_learner, kv, Kind.SUBMIT, _failed(f"test_{n}") if n % 3 else job_result("passed"),
             wait_ms=n * 100, grading_ms=n * 333)
        clock.tick(days=1)
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert client.get(url).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_jobs_of_one_rung_ending_at_once_are_all_counted(catalog, learner, other_learner, instructor, admin_user, enqueued, settings, all_at_once):
    settings.GRADER_RATE_LIMIT_PER_MIN = 1000
    kv = Rung.objects.get(slug="kv-cache-size")
    failing = _failed("test_unknown_dtype_raises", "test_int4_packs")
    first = [services.submit_solution(user=user, rung=kv, kind=Kind.SUBMIT, code="x = 1\n") for user in (learner, other_learner, instructor)]
    for submission in first:  # a failed first Submit each: the rejudge below turns them into first passes
        services.grade_submission(submission.pk, runner=FakeRunner(failing))
    jobs = [services.submit_solution(user=user, rung=kv, kind=Kind.SUBMIT, code="x = 2\n") for user in (learner, other_learner, instructor)]
    batch = rejudge.start_rejudge(first, target=Rejudge.Target.CURRENT, user=admin_user)
    for result in batch.results.all():
        rejudge.rejudge_one(result.pk, runner=FakeRunner(job_result("passed")))

    def end(index: int) -> Any:
        if index == len(jobs):
            return rejudge.apply_rejudge(batch, admin_user)  # several learners' counts, while their next Submits end
        return services.grade_submission(jobs[index].pk, runner=FakeRunner(job_result("passed") if index % 2 else failing))

    answers = all_at_once(len(jobs) + 1, end)
    assert not [answer for answer in answers if isinstance(answer, Exception)], answers
    assert Submission.objects.filter(outcome=Outcome.INFRA_ERROR).count() == 0
    assert_the_counts_agree([kv])

"""Each Submit draws a fresh seed, kept with it; a rejudge reuses it (issue 13)."""

from __future__ import annotations

from exercises.models import Rung
from grader import rejudge, services
from grader.constants import Kind
from grader.models import Rejudge, Submission
from sandbox.testing import FakeRunner


def test_each_submit_draws_a_fresh_seed_and_the_job_carries_it(catalog, learner, other_learner, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    runner = FakeRunner()
    seeds = []
    for user in (learner, other_learner):
        submission = services.submit_solution(user=user, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
        services.grade_submission(submission.pk, runner=runner)
        seeds.append(Submission.objects.get(pk=submission.pk).seed)
    assert seeds[0] != seeds[1]
    assert [job.seed for job in runner.jobs] == seeds


def test_a_rejudge_reuses_the_submissions_seed(catalog, learner, admin_user, enqueued):
    rung = Rung.objects.get(slug="kv-cache-size")
    submission = services.submit_solution(user=learner, rung=rung, kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner())
    batch = rejudge.start_rejudge(Submission.objects.filter(pk=submission.pk), target=Rejudge.Target.CURRENT, user=admin_user)
    runner = FakeRunner()
    rejudge.rejudge_one(batch.results.get().pk, runner=runner)
    assert [job.seed for job in runner.jobs] == [Submission.objects.get(pk=submission.pk).seed]


def test_admins_see_the_seed(catalog, learner, admin_user, client, enqueued):
    submission = services.submit_solution(user=learner, rung=Rung.objects.get(slug="kv-cache-size"), kind=Kind.SUBMIT, code="x = 1\n")
    client.force_login(admin_user)
    assert str(submission.seed) in client.get("/admin/grader/submission/").content.decode()
    assert str(submission.seed) in client.get(f"/admin/grader/submission/{submission.pk}/change/").content.decode()

"""Grade passback through AGS: retried when the LMS stumbles, never duplicated, recorded.

The learner launches a link from the LMS (real HTTP), passes a Submit,
and the score post runs as the Celery task would run it.
"""

from __future__ import annotations

import pytest
from lti_tool.models import LtiUser

from exercises.models import Rung
from grader import signals
from grader.exceptions import RetryLater
from grader.models import Submission
from lti import passback
from lti.models import ScorePost

from .conftest import pass_submit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def account(lms, placed_rung, student, browser):
    landed, _ = browser.launch(lms, student, placed_rung.id)
    assert landed.status_code == 200, landed.text[:500]
    return LtiUser.objects.get(sub=student.sub).auth_user


def _post_until_done(post_id):
    """Runs the post as the task does, retrying after RetryLater; returns how many tries raised it."""
    retries = 0
    while True:
        try:
            passback.post_score(post_id)
        except RetryLater as exc:
            assert exc.delay_s >= 1
            retries += 1
            continue
        return retries


def test_an_lms_that_fails_twice_gets_the_score_once_on_the_third_try(lms, placed_rung, student, account, settings, enqueued):
    settings.LTI_SCORE_MAX_ATTEMPTS = 5
    lms.state.fail_scores_with, lms.state.fail_scores_times = 503, 2
    submission = pass_submit(account, "kv-cache-size")
    (post,) = ScorePost.objects.filter(submission=submission)
    assert _post_until_done(post.pk) == 2
    post.refresh_from_db()
    assert (post.status, post.outcome, post.attempts, post.error) == ("done", "posted", 3, "")
    assert lms.state.score_posts == 3
    assert lms.state.scores[placed_rung.lineitem_id][student.sub]["scoreGiven"] == 1.0


def test_retries_send_the_same_timestamp(lms, placed_rung, student, account, enqueued):
    lms.state.fail_scores_with, lms.state.fail_scores_times = 502, 1
    submission = pass_submit(account, "kv-cache-size")
    (post,) = ScorePost.objects.filter(submission=submission)
    _post_until_done(post.pk)
    stored = lms.state.scores[placed_rung.lineitem_id][student.sub]
    post.refresh_from_db()
    assert stored["timestamp"] == post.scored_at.isoformat()


def test_an_lms_that_keeps_failing_is_given_up_and_the_reason_kept(lms, placed_rung, account, settings, enqueued):
    settings.LTI_SCORE_MAX_ATTEMPTS = 3
    lms.state.fail_scores_with, lms.state.fail_scores_times = 500, 10
    (post,) = ScorePost.objects.filter(submission=pass_submit(account, "kv-cache-size"))
    assert _post_until_done(post.pk) == 2
    post.refresh_from_db()
    assert (post.status, post.outcome, post.attempts) == ("done", "failed", 3)
    assert "500" in post.error and "busy" in post.error


def test_a_refusal_the_lms_will_not_change_its_mind_on_is_not_retried(lms, placed_rung, account, enqueued):
    lms.state.fail_scores_with, lms.state.fail_scores_times = 403, 10
    (post,) = ScorePost.objects.filter(submission=pass_submit(account, "kv-cache-size"))
    assert _post_until_done(post.pk) == 0
    post.refresh_from_db()
    assert (post.outcome, post.attempts) == ("failed", 1) and "403" in post.error
    # An admin sends it again once the LMS is fixed.
    lms.state.fail_scores_times = 0
    assert passback.retry_failed(post)
    assert _post_until_done(post.pk) == 0
    post.refresh_from_db()
    assert post.outcome == "posted"


def test_a_pass_announced_twice_and_a_task_delivered_twice_post_once(lms, placed_rung, student, account, enqueued):
    submission = pass_submit(account, "kv-cache-size")
    signals.announce_submit_passed_on_commit(submission.pk, submission.user_id, submission.rung_id)
    (post,) = ScorePost.objects.filter(submission=submission)
    passback.post_score(post.pk)
    assert passback.post_score(post.pk) is None  # the redelivered task finds nothing to claim
    assert lms.state.score_posts == 1
    # Passing the rung again changes nothing in the gradebook: nothing new is sent.
    pass_submit(account, "kv-cache-size")
    assert ScorePost.objects.count() == 1


def test_a_rejudge_that_turns_a_submit_into_a_pass_sends_the_grade(lms, placed_rung, student, account, admin_user, enqueued):
    from grader import rejudge, services
    from grader.constants import Kind
    from sandbox.testing import FakeRunner, job_result

    submission = services.submit_solution(user=account, rung=Rung.objects.get(slug="kv-cache-size"), kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner(job_result("failed")))
    assert not ScorePost.objects.exists()
    batch = rejudge.start_rejudge([Submission.objects.get(pk=submission.pk)], target="original", user=admin_user)
    for result in batch.results.all():
        rejudge.rejudge_one(result.pk, runner=FakeRunner())
    assert rejudge.apply_rejudge(batch, admin_user) == 1
    (post,) = ScorePost.objects.filter(submission=submission)
    passback.post_score(post.pk)
    assert lms.state.scores[placed_rung.lineitem_id][student.sub]["scoreGiven"] == 1.0


def test_a_learner_who_never_came_from_an_lms_sends_nothing(learner, catalog, enqueued):
    pass_submit(learner, "kv-cache-size")
    assert not ScorePost.objects.exists()
    assert not [sent for sent in enqueued if sent[0] == "lti_score"]


def test_the_reaper_covers_score_posts():
    from grader import lifecycle

    assert passback.SCORE_POSTS in lifecycle.job_types()


def test_the_celery_task_posts_and_retries(lms, placed_rung, student, account, settings, enqueued):
    """The task by its name, run in this process: one LMS failure, a retry, then the score."""
    from config.celery import app

    settings.LTI_SCORE_RETRY_DELAY_S = 1
    lms.state.fail_scores_with, lms.state.fail_scores_times = 503, 1
    (post,) = ScorePost.objects.filter(submission=pass_submit(account, "kv-cache-size"))
    app.loader.import_default_modules()
    app.tasks[passback.SCORE_POSTS.task].apply(args=(post.pk,))
    post.refresh_from_db()
    assert (post.outcome, post.attempts) == ("posted", 2)
    assert lms.state.score_posts == 2

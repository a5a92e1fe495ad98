"""Grade passback (AGS): a passing Submit becomes a score on each LMS line item that links to it.

``schedule_score_posts`` runs when grader announces a passing Submit
(``grader.signals.submit_passed``): for every placement the learner reached
through an LMS (a link to the rung, or a module link of an LMS course whose
course here uses the rung) it stores one ``ScorePost`` with the score the
course counts (``score_for``) and enqueues it. ``post_score`` sends it: a claimed job of
``grader.lifecycle``, so a redelivered task does nothing, the reaper
recovers a post whose worker died, and a failure the LMS may get over (no
answer, 5xx, 408, 429) is tried again with a doubling wait, up to
LTI_SCORE_MAX_ATTEMPTS; anything else is recorded as failed at once.
"""

from __future__ import annotations

import logging

import requests
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from lti_tool.models import LtiUser
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade

from core.metrics import PASSBACK_FAILURES
from core.types import User
from courses import gradebook
from courses.models import Assignment, Course
from grader import lifecycle
from grader.constants import Status
from grader.exceptions import RetryLater
from grader.models import Progress, Submission

from . import tool
from .constants import QUEUE_SCORES, SCORE_TASK, ScoreOutcome
from .exceptions import ScorePostFailed
from .models import Placement, ScorePost

log = logging.getLogger(__name__)

ERROR_CHARS = 2000
RETRYABLE_STATUS = {408, 429}


def _post_hard_limit_s() -> float:
    # A token request and a score request, each within the HTTP timeout.
    return settings.LTI_HTTP_TIMEOUT_S * 2 + 30


SCORE_POSTS = lifecycle.JobType(
    label="lti_score",
    model=ScorePost,
    task=SCORE_TASK,
    queue_of=lambda row: QUEUE_SCORES,
    hard_limit_s=_post_hard_limit_s,
    abandoned=lambda: {"outcome": ScoreOutcome.FAILED, "error": "The worker sending this score stopped too often; it was given up."},
    select_related=(),
)


def score_for(user: User, placement: Placement, course: Course) -> float:
    """What the placement's line item gets for ``user``, 0..1, as ``course`` counts it.

    A module link: the course's counted score (``courses.gradebook``: the
    mean over its assignments, each pass judged against the learner's
    deadlines; 0.0 for a course without assignments). A rung link: the
    rung's credit in the course's assignment that has it (on time 1, late
    the late factor, after the close 0: practice; the best one when several
    assignments have it), or 1.0 once solved when no assignment has it.
    """
    if placement.rung is None:
        return round(gradebook.counted_score(course, user), 6)
    rung = placement.rung
    columns = [gradebook.Column(assignment, (rung,)) for assignment in Assignment.objects.filter(course=course, rungs=rung).distinct()]
    if not columns:
        return 1.0 if Progress.objects.filter(user=user, rung=rung, solved_at__isnull=False).exists() else 0.0
    row = next(gradebook.learner_rows(columns, [(user.pk, user.get_username())]))
    return round(max(result.score for result in row.results), 6)


def schedule_score_posts(submission_id: int) -> list[ScorePost]:
    """One queued ScorePost per line item the Submit's learner reached, sent after commit.

    Nothing when the learner never came from an LMS, nor for a link of an
    LMS course that has no course here (a launch without a context). A line
    item whose last score for this learner (sent or being sent) is the same
    gets nothing new.
    """
    submission = Submission.objects.select_related("rung__module", "user").filter(pk=submission_id).first()
    if submission is None:
        return []
    created: list[ScorePost] = []
    lti_users = {lti_user.registration_id: lti_user for lti_user in LtiUser.objects.filter(auth_user=submission.user)}
    if not lti_users:
        return []
    rung = submission.rung
    in_course = "resource_link__context__course_link__course__"
    course_uses_rung = Q(**{f"{in_course}modules": rung.module_id}) | Q(**{f"{in_course}rungs": rung}) | Q(**{f"{in_course}assignments__rungs": rung})
    placements = (
        Placement.objects.filter(resource_link__context__memberships__user__in=lti_users.values(), resource_link__context__course_link__isnull=False)
        .filter(Q(rung=rung) | (Q(rung__isnull=True) & (Q(module=rung.module_id) | course_uses_rung)))
        .select_related("resource_link__context__deployment", "resource_link__context__course_link__course", "rung", "module")
        .distinct()
    )
    for placement in placements:
        if not placement.can_post_scores:
            log.info("placement %s has no line item to post to (or no score scope)", placement.pk)
            continue
        lti_user = lti_users.get(placement.resource_link.context.deployment.registration_id)
        if lti_user is None:
            continue
        score = score_for(submission.user, placement, placement.resource_link.context.course_link.course)
        # The LMS keeps the last score it was sent: nothing new when that is this one.
        last = ScorePost.objects.filter(placement=placement, lti_user=lti_user).exclude(outcome=ScoreOutcome.FAILED).order_by("-scored_at", "-pk").first()
        if last is not None and last.score_given == score:
            continue
        try:
            with transaction.atomic():
                post = ScorePost.objects.create(submission=submission, placement=placement, lti_user=lti_user, score_given=score, score_maximum=1.0)
                lifecycle.enqueue_on_commit(SCORE_POSTS, post.pk, QUEUE_SCORES)
        except IntegrityError:
            continue  # this Submit was scheduled for this line item already
        created.append(post)
    return created


def _grade(post: ScorePost) -> Grade:
    return (
        Grade()
        .set_score_given(post.score_given)
        .set_score_maximum(post.score_maximum)
        .set_timestamp(post.scored_at.isoformat())
        .set_activity_progress("Completed")
        .set_grading_progress("FullyGraded")
        .set_user_id(post.lti_user.sub)
    )


def send_score(post: ScorePost) -> None:
    """POST the score to the placement's line item; ScorePostFailed when the LMS does not take it."""
    placement = post.placement
    registration = placement.resource_link.context.deployment.registration
    service = AssignmentsGradesService(
        tool.service_connector(registration),
        {"scope": placement.ags_scopes, "lineitem": placement.lineitem_url, "lineitems": placement.lineitems_url},
    )
    try:
        service.put_grade(_grade(post))
    except LtiServiceException as exc:
        status = exc.response.status_code
        raise ScorePostFailed(str(exc)[:ERROR_CHARS], retryable=status >= 500 or status in RETRYABLE_STATUS) from exc
    except requests.RequestException as exc:
        raise ScorePostFailed(f"the LMS did not answer: {exc}"[:ERROR_CHARS], retryable=True) from exc
    except LtiException as exc:
        raise ScorePostFailed(str(exc)[:ERROR_CHARS], retryable=False) from exc


def post_score(post_id: int, *, worker: str = "") -> ScorePost | None:
    """Claim one queued score post and send it; None when there was nothing to claim.

    Raises RetryLater after putting it back in the queue, for the task to
    try again after the delay.
    """
    claim = lifecycle.claim(SCORE_POSTS, post_id, worker)
    if claim is None:
        return None
    post = ScorePost.objects.select_related("placement__resource_link__context__deployment__registration", "lti_user").get(pk=post_id)
    try:
        send_score(post)
    except ScorePostFailed as exc:
        if exc.retryable and claim.attempt < settings.LTI_SCORE_MAX_ATTEMPTS:
            if not lifecycle.requeue(claim, error=str(exc)):
                return None
            log.warning("score post %s: %s; trying again", post_id, exc)
            raise RetryLater(str(exc), delay_s=settings.LTI_SCORE_RETRY_DELAY_S * 2 ** (claim.attempt - 1)) from exc
        log.error("score post %s failed for good: %s", post_id, exc)
        if lifecycle.finish(claim, outcome=ScoreOutcome.FAILED, error=str(exc)):
            PASSBACK_FAILURES.inc()
    else:
        lifecycle.finish(claim, outcome=ScoreOutcome.POSTED, error="")
    post.refresh_from_db()
    return post


def retry_failed(post: ScorePost) -> bool:
    """Send a failed post again (an admin's action): back to queued with fresh tries, conditional on it being done and failed."""
    again = ScorePost.objects.filter(pk=post.pk, status=Status.DONE, outcome=ScoreOutcome.FAILED).update(
        status=Status.QUEUED, outcome="", attempts=0, claimed_by="", enqueued_at=timezone.now()
    )
    if again == 1:
        lifecycle.enqueue_on_commit(SCORE_POSTS, post.pk, QUEUE_SCORES)
    return again == 1

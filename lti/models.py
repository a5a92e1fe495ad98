"""Where LMS links point, which course an LMS course is here, the grades sent back, and the launch nonces already used.

django-lti (``lti_tool``) owns registrations, deployments, keys, platform
users, LMS courses (contexts), memberships and resource links; these models
add what the ladder needs on top.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from lti_tool.models import LtiContext, LtiRegistration, LtiResourceLink, LtiUser

from courses.models import Course
from exercises.models import Module, Rung
from grader.models import ClaimedJob, Submission

from .constants import SCOPE_SCORE, ScoreOutcome


class Placement(models.Model):
    """A link in an LMS course that opens one module or one rung of the ladder.

    Written on each launch of the link: the AGS claim (line item, scopes)
    may change when the LMS admin edits the link.
    """

    resource_link = models.OneToOneField(LtiResourceLink, on_delete=models.CASCADE, related_name="placement")
    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="lti_placements")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, null=True, blank=True, related_name="lti_placements",
                             help_text="Empty: the whole module, graded as the course's counted score.")
    lineitem_url = models.URLField(max_length=500, blank=True, help_text="The LMS gradebook column scores go to.")
    lineitems_url = models.URLField(max_length=500, blank=True)
    ags_scopes = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.resource_link}: {self.rung or self.module}"

    @property
    def can_post_scores(self) -> bool:
        return bool(self.lineitem_url) and SCOPE_SCORE in self.ags_scopes


class CourseContext(models.Model):
    """The course here that an LMS course (a launch's context) is: one each way.

    Made on the first launch from the context (lti/courses.py); the LMS's
    Instructor, TA and Learner roles become roles of this course only.
    """

    context = models.OneToOneField(LtiContext, on_delete=models.CASCADE, related_name="course_link")
    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="lti_context")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.context} -> {self.course}"


class ScorePost(ClaimedJob):
    """One grade sent back to an LMS line item for one passing Submit.

    A claimed job (``grader.lifecycle``): queued -> running -> done, with its
    tries. The unique (submission, placement) pair is the idempotency key:
    a Submit is posted to a line item at most once, however often its
    signal or task is delivered; a retry sends the same score with the same
    timestamp, which the LMS treats as the same score.
    """

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="lti_score_posts")
    placement = models.ForeignKey(Placement, on_delete=models.CASCADE, related_name="score_posts")
    lti_user = models.ForeignKey(LtiUser, on_delete=models.CASCADE, related_name="score_posts")
    score_given = models.FloatField()
    score_maximum = models.FloatField(default=1.0)
    # The Score's timestamp, fixed when the row is made: every try sends the same one.
    scored_at = models.DateTimeField(default=timezone.now)
    outcome = models.CharField(max_length=10, choices=ScoreOutcome.choices, blank=True)
    error = models.TextField(blank=True, help_text="Why the last try failed (the LMS's answer, truncated).")

    class Meta(ClaimedJob.Meta):
        ordering = ["-enqueued_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["submission", "placement"], name="one_score_post_per_submit_and_placement")]

    def __str__(self) -> str:
        return f"{self.lti_user} {self.score_given:g}/{self.score_maximum:g} -> {self.placement}: {self.outcome or self.status}"


class UsedNonce(models.Model):
    """A launch's nonce, stored once it was accepted: the same token posted again is a replay."""

    registration = models.ForeignKey(LtiRegistration, on_delete=models.CASCADE, related_name="+")
    nonce = models.CharField(max_length=255)
    used_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["registration", "nonce"], name="one_use_per_launch_nonce")]

    def __str__(self) -> str:
        return self.nonce

"""Submissions, their per-test results, and each learner's progress per rung."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from exercises.models import Rung, RungVersion

from .constants import CaseOutcome, Kind, Outcome, Status


def _channel_token() -> str:
    return secrets.token_urlsafe(24)


class ClaimedJob(models.Model):
    """The fields ``grader.lifecycle`` claims, requeues and finishes a job by (see ``JobType``).

    Every claimed job inherits them: submissions, rejudge results, authoring
    Checks, the LTI app's score posts. Only ``grader.lifecycle`` changes them.
    """

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    claimed_by = models.CharField(max_length=200, blank=True, help_text="The worker that claimed it last.")
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class Submission(ClaimedJob):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    # Denormalised from rung_version so the database itself can enforce
    # "one job in flight per learner per rung" (see Meta.constraints).
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="submissions")
    rung_version = models.ForeignKey(RungVersion, on_delete=models.PROTECT, related_name="submissions")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    code = models.TextField()
    outcome = models.CharField(max_length=20, choices=Outcome.choices, blank=True)
    message = models.TextField(blank=True, help_text="Summary shown to the learner (e.g. the syntax error).")
    error_code = models.CharField(max_length=40, blank=True, help_text="Stable id of an infrastructure failure.")
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    timings = models.JSONField(default=dict, blank=True)
    # Seeds the hidden tests' generated inputs; a rejudge reuses it, so a
    # grade can always be reproduced.
    seed = models.PositiveBigIntegerField(default=0, help_text="Seed of the hidden tests' generated inputs (reused by rejudges).")
    peak_memory_bytes = models.BigIntegerField(null=True, blank=True)
    # The machine it was graded on: device, gpu, torch, cuda, python, image (sandbox.report.parse_machine).
    machine = models.JSONField(default=dict, blank=True)
    # Unguessable id of the submission's live-update channel.
    channel = models.CharField(max_length=64, default=_channel_token, unique=True, editable=False)
    # An old Run's per-test rows, compacted into one value by ``manage.py compact_runs``
    # (grader/retention.py): the rows' fields, in order; None while the rows are kept.
    archived_tests = models.JSONField(null=True, blank=True, editable=False)
    # Its tests and passed tests, counted as the rows were archived (0 while the rows are kept).
    archived_test_count = models.PositiveIntegerField(default=0, editable=False)
    archived_passed_count = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-enqueued_at", "-pk"]
        indexes = [models.Index(fields=["user", "rung_version"]), models.Index(fields=["status", "enqueued_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "rung"],
                condition=models.Q(status__in=["queued", "running"]),
                name="one_job_in_flight_per_learner_and_rung",
            )
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} {self.rung_version} {self.status} {self.outcome}"


class SubmissionTestResult(models.Model):
    """One test's outcome. For hidden tests ``message`` is the author's
    description; the harness's own assertion text is kept in ``detail`` for
    staff and never shown to the learner."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="test_results")
    order = models.PositiveIntegerField(default=0)
    name = models.CharField(max_length=200)
    outcome = models.CharField(max_length=10, choices=CaseOutcome.choices)
    duration_s = models.FloatField(default=0.0)
    message = models.TextField(blank=True)
    detail = models.TextField(blank=True)
    hidden = models.BooleanField(default=False)

    class Meta:
        ordering = ["submission", "order"]
        constraints = [models.UniqueConstraint(fields=["submission", "name"], name="unique_test_per_submission")]

    def __str__(self) -> str:
        return f"{self.name}: {self.outcome}"


class Progress(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="progress")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="progress")
    attempts = models.PositiveIntegerField(default=0, help_text="Graded submits (infrastructure errors excluded).")
    best_outcome = models.CharField(max_length=20, choices=Outcome.choices, blank=True)
    solved_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "rung"], name="unique_progress_per_rung")]
        verbose_name_plural = "progress"

    def __str__(self) -> str:
        return f"{self.user} {self.rung}: {self.best_outcome or 'not started'}"


class Rejudge(models.Model):
    """A batch of submissions graded again, kept apart from the originals.

    Each submission is graded into a RejudgeResult; nothing on the original
    changes until an admin has seen the preview (which outcomes would change)
    and applies it. Applying copies the new grade onto the submission and
    keeps the old one on the result row: the audit trail.
    """

    class Target(models.TextChoices):
        CURRENT = "current", "The rung's current version"
        ORIGINAL = "original", "The version each submission was graded against"

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    target = models.CharField(max_length=10, choices=Target.choices)
    note = models.CharField(max_length=300, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    applied_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"Rejudge #{self.pk} ({self.target})"


class RejudgeResult(ClaimedJob):
    """One submission graded again: the grade it had, and the grade it gets."""

    rejudge = models.ForeignKey(Rejudge, on_delete=models.CASCADE, related_name="results")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="rejudge_results")
    old_version = models.ForeignKey(RungVersion, on_delete=models.PROTECT, related_name="+")
    new_version = models.ForeignKey(RungVersion, on_delete=models.PROTECT, related_name="+")
    old_outcome = models.CharField(max_length=20, choices=Outcome.choices, blank=True)
    new_outcome = models.CharField(max_length=20, choices=Outcome.choices, blank=True)
    # Per-test outcomes as [{"name", "outcome", "message"}], before and after.
    old_tests = models.JSONField(default=list, blank=True)
    new_tests = models.JSONField(default=list, blank=True)
    message = models.TextField(blank=True)
    error_code = models.CharField(max_length=40, blank=True)
    applied = models.BooleanField(default=False)

    class Meta:
        ordering = ["rejudge", "submission"]
        constraints = [models.UniqueConstraint(fields=["rejudge", "submission"], name="unique_submission_per_rejudge")]

    def __str__(self) -> str:
        return f"#{self.submission_id}: {self.old_outcome} -> {self.new_outcome or '?'}"

    @property
    def changed(self) -> bool:
        return self.status == Status.DONE and self.new_outcome != self.old_outcome


# ---- Speed rungs: predictions and standings (issue 60, items 7 and 8; grader.speed_board) ----


class SpeedPrediction(models.Model):
    """The speed-up a learner predicted before pressing Submit on a speed rung that asks for one."""

    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, primary_key=True, related_name="speed_prediction")
    predicted = models.FloatField()

    def __str__(self) -> str:
        return f"#{self.submission_id} predicted {self.predicted:g}x"


class SpeedStanding(models.Model):
    """One learner's standing on one speed rung, on one kind of machine (a GPU's or a CPU's model).

    The boards and the dashboard's figures read this small table, never the
    submissions: one row per learner, rung and machine kind, moved on by
    conditional UPDATEs as each measured Submit is recorded.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="speed_standings")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="speed_standings")
    machine = models.CharField(max_length=120, help_text="The machine kind measured on (grader.speed_board.machine_kind).")
    # The best ratio of a Submit that passed, and that Submit: the board's figure (None before a pass).
    best_ratio = models.FloatField(null=True, blank=True)
    best_submission = models.ForeignKey(Submission, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    best_at = models.DateTimeField(null=True, blank=True)
    # The best ratio measured at all, whatever the verdict: the dashboard's distribution.
    measured_ratio = models.FloatField(null=True, blank=True)
    # The learner's first prediction and the ratio that Submit measured: how well the class predicts.
    predicted = models.FloatField(null=True, blank=True)
    predicted_measured = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rung", "machine", "user"], name="unique_speed_standing")]
        indexes = [
            models.Index(
                fields=["rung", "machine", "-best_ratio", "best_at"], name="grader_speed_board", condition=models.Q(best_ratio__isnull=False)
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.rung} on {self.machine}: {self.best_ratio}"


class BoardName(models.Model):
    """The name a learner chose to appear under on speed boards. No row (the default): anonymous there."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="board_name")
    name = models.CharField(max_length=30)

    class Meta:
        constraints = [models.UniqueConstraint(Lower("name"), name="unique_board_name")]

    def __str__(self) -> str:
        return self.name


class RungTally(models.Model):
    """One running count behind the authors' dashboards: per rung, a figure and its key (``grader.tallies``)."""

    class Figure(models.TextChoices):
        OUTCOME = "outcome", "Submits that ended, by outcome"
        GRADED_ON = "graded_on", "Graded Submits, by the day they finished"
        PASSED_ON = "passed_on", "Passing Submits, by the day they finished"
        FAILED_TEST = "failed_test", "Hidden tests failed by graded Submits, by name"
        WAIT = "wait", "Jobs that ended, by queue wait in hundredths of a second"
        GRADING = "grading", "Jobs that ended, by grading time in hundredths of a second"
        TOTAL = "total", "Jobs that ended, by total time in hundredths of a second"
        LEARNERS = "learners", "Learners with a graded Submit (key empty)"
        FIRST_PASS = "first_pass", "Learners who passed, by their graded Submits up to the first pass"

    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="+")
    figure = models.CharField(max_length=20, choices=Figure.choices)
    key = models.CharField(max_length=200)
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rung", "figure", "key"], name="unique_rung_tally")]

    def __str__(self) -> str:
        return f"{self.rung_id} {self.figure} {self.key}: {self.count}"


class LearnerRungTally(models.Model):
    """A learner's graded Submits of a rung, and how many it took to the first pass (``grader.tallies``):
    what the learner's next graded Submit, or a rejudge, moves in the rung's counts."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="+")
    graded_submits = models.PositiveIntegerField(default=0)
    submits_to_first_pass = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "rung"], name="unique_learner_rung_tally")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.rung_id}: {self.graded_submits} ({self.submits_to_first_pass})"

"""Rows of the learning aids: which hints a learner revealed, and the problems
learners report about a rung. Neither ever touches a grade."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from exercises.models import Rung, RungVersion
from grader.models import Submission

from .constants import ReportStatus


class HintReveal(models.Model):
    """A learner revealed hint ``number`` (1-based) of a rung.

    The unique constraint makes a reveal count once however often it is
    clicked; hints are revealed in order, so a learner's reveals of a rung
    are always 1..n.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hint_reveals")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="hint_reveals")
    number = models.PositiveSmallIntegerField()
    # The version whose hints were on screen (hints may change between versions).
    rung_version = models.ForeignKey(RungVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    revealed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rung", "learner", "number"]
        constraints = [models.UniqueConstraint(fields=["learner", "rung", "number"], name="one_reveal_per_hint_and_learner")]

    def __str__(self) -> str:
        return f"{self.learner} revealed hint {self.number} of {self.rung}"


class ProblemReport(models.Model):
    """A learner says something is wrong with a rung; the module's instructors answer."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="problem_reports")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="problem_reports")
    rung_version = models.ForeignKey(RungVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # The learner's latest Run or Submit of the rung when they reported, if any.
    submission = models.ForeignKey(Submission, on_delete=models.SET_NULL, null=True, blank=True, related_name="problem_reports")
    # What was in the editor when they reported (capped, NUL-free).
    code = models.TextField(blank=True)
    message = models.TextField()
    status = models.CharField(max_length=10, choices=ReportStatus.choices, default=ReportStatus.OPEN, db_index=True)
    note = models.TextField(blank=True, help_text="The instructor's answer, shown to the learner.")
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["rung", "status"], name="aids_report_rung_status")]

    def __str__(self) -> str:
        return f"report #{self.pk} on {self.rung} ({self.status})"

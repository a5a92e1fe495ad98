"""A learner's unsaved work: one autosaved draft per learner and rung."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from exercises.models import Rung


class Draft(models.Model):
    """The editor's content as last autosaved, so work survives a reload, a
    crash or another browser. Runs and Submits are kept separately, as
    Submissions; this is only what the learner is typing."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafts")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="drafts")
    code = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "rung"], name="unique_draft_per_rung")]

    def __str__(self) -> str:
        return f"{self.user} {self.rung} draft"

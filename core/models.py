"""Notifications: something happened that a user should see (feedback on a
submission, a reply to a report), shown as an unread badge in the header and
a list.

A row holds a code and the facts; the sentence a learner reads is worded
where every learner sentence lives (grader/messages.py), when it is shown.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Notification(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    # What happened, e.g. "feedback" or "report_reply": the key of its sentence.
    kind = models.CharField(max_length=30)
    # The facts the sentence names (a rung's title, a course's title, who wrote).
    params = models.JSONField(default=dict, blank=True)
    # Where the notification leads (a path on this site).
    url = models.CharField(max_length=500)
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["user", "read_at"], name="core_notice_user_unread")]

    def __str__(self) -> str:
        return f"{self.kind} for {self.user} ({'read' if self.read_at else 'unread'})"

"""Vocabularies and fixed numbers of the learning aids."""

from __future__ import annotations

from django.db import models

REPORT_MESSAGE_MAX_CHARS = 2000
# Reports one learner may send in an hour, over all rungs (a stuck key or a script, not a learner).
REPORTS_PER_HOUR = 10
REPORT_NOTE_MAX_CHARS = 2000
# The code attached to a report is the learner's editor content, capped like a submission.
REPORT_CODE_MAX_CHARS = 64 * 1024


class ReportStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"

"""Vocabularies of the LTI tool: claim names, roles, what a score post ended as."""

from __future__ import annotations

from django.db import models

# The custom parameters a placement carries (set by deep linking, or typed by
# an LMS admin): which module or rung the link opens.
CUSTOM_MODULE = "dojo_module"
CUSTOM_RUNG = "dojo_rung"

CLAIM_CUSTOM = "https://purl.imsglobal.org/spec/lti/claim/custom"
CLAIM_AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
CLAIM_NONCE = "nonce"

SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_RESULTS = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"

# The Django session key holding the launch id of the last launch (deep linking reads it back).
SESSION_LAUNCH_ID = "lti_launch_id"

# The queue a score post runs on: short HTTP calls, beside the reaper.
QUEUE_SCORES = "maintenance"
SCORE_TASK = "lti.post_score_task"


class ScoreOutcome(models.TextChoices):
    POSTED = "posted", "Posted"
    FAILED = "failed", "Failed"

from __future__ import annotations

from django.db import models

# Shown once at creation; the database keeps only its SHA-256.
TOKEN_PREFIX = "dojo_"
TOKEN_BYTES = 32
# Longest a token may live; the form offers shorter.
TOKEN_MAX_DAYS = 365
TOKEN_DAYS_CHOICES = (7, 30, 90, 365)
# last_used_at is written at most this often per token (one UPDATE, not one per request).
LAST_USED_RESOLUTION_S = 60
TOKENS_PER_USER_MAX = 20


class Scope(models.TextChoices):
    READ = "read", "Read: the catalog, rungs, drafts, results, history"
    RUN_SUBMIT = "run_submit", "Read, save drafts, Run and Submit"

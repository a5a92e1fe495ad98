"""Vocabularies of authoring: the states of a Check (the roles are in core.constants)."""

from __future__ import annotations

from django.db import models


class CheckStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"

"""Vocabularies of authoring: roles and the states of a Check."""

from __future__ import annotations

from django.db import models

# Members of this group are instructors: they may create modules and author
# the modules they own. The permission below does the same for one user.
INSTRUCTORS_GROUP = "instructors"
AUTHOR_PERMISSION = "authoring.author_modules"


class CheckStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"

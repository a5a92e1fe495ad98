"""Vocabularies of the catalog, shared by the schema, the models and the forms."""

from __future__ import annotations

from django.db import models


class Difficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


class TestVisibility(models.TextChoices):
    # The source of a hidden test never reaches a learner; ``after_solve``
    # shows it once the learner has passed the rung.
    HIDDEN = "hidden", "Hidden"
    AFTER_SOLVE = "after_solve", "Shown after solving"


RUNG_FILES = ("rung.yaml", "instructions.md", "starter.py", "reference.py", "test_visible.py", "test_hidden.py")
MODULE_FILES = ("module.yaml", "concept.md", "worked_example.md", "reference.md")

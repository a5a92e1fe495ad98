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


class GpuNeed(models.TextChoices):
    """What a rung asks of the grader's hardware (rung.yaml ``gpu:``)."""

    NO = "no", "No GPU"
    # Graded on a GPU worker when the platform has one, else on the CPU with
    # its GPU-only checks skipped (and the result says so).
    PREFERRED = "preferred", "A GPU when there is one"
    # Graded on a GPU worker only: without one, its jobs wait.
    REQUIRED = "required", "Needs a GPU"


def gpu_need(value: object) -> GpuNeed:
    """``value`` as a GpuNeed: a stored string, or a boolean from before the
    three-way choice (``true`` meant a GPU was required)."""
    if isinstance(value, bool) or value is None:
        return GpuNeed.REQUIRED if value else GpuNeed.NO
    return GpuNeed(str(value))


# Independent correct solutions (alternatives/) a rung must ship: validate_exercises,
# Check and Publish refuse a rung with fewer (issue 58).
MIN_ALTERNATIVES = 2
# Whether validate_exercises, Check and Publish refuse a rung without a ``domain:``.
DOMAIN_REQUIRED = True
# The seeds every alternative must pass (and every wrong solution fail) the hidden tests with:
# a learner's Submit draws its own, and a generated test may pass or fail by the seed.
CHECK_SEEDS = (20261130, 1238314499, 645296652)

RUNG_FILES = ("rung.yaml", "instructions.md", "starter.py", "reference.py", "test_visible.py", "test_hidden.py")
MODULE_FILES = ("module.yaml", "concept.md", "worked_example.md", "reference.md")

"""The mentor's rows: the passages it searches, and the questions learners ask.

Passages are derived data: ``search.ensure_index`` rebuilds a module's
passages whenever the text they come from changes. Questions are a learning
signal for instructors and never touch grading.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from exercises.models import Module, Rung

from .constants import PassageKind


class Passage(models.Model):
    """One searchable piece of a module's own teaching text.

    NOTE: only text a learner can already read goes here (concept, worked
    example, quick reference, one-liners, sources, rung instructions): never
    reference solutions, hidden tests or wrong solutions.
    """

    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="mentor_passages")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, null=True, blank=True, related_name="mentor_passages")
    # Stable across rebuilds while the text keeps its headings: "concept",
    # "ref:<slug>", "rung:<slug>", "rung:<slug>:<section>", "one-liner:<n>".
    key = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=PassageKind.choices)
    title = models.CharField(max_length=300)
    url = models.CharField(max_length=300)
    text = models.TextField()
    # Stemmed search terms, space separated (title repeated for weight).
    terms = models.TextField()
    length = models.PositiveIntegerField()
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["module", "order"]
        constraints = [models.UniqueConstraint(fields=["module", "key"], name="unique_mentor_passage_key")]

    def __str__(self) -> str:
        return f"{self.module.slug}/{self.key}"


class ModuleIndex(models.Model):
    """Which version of a module's text its passages were cut from."""

    module = models.OneToOneField(Module, on_delete=models.CASCADE, related_name="mentor_index")
    source_hash = models.CharField(max_length=64, blank=True)
    built_at = models.DateTimeField(null=True, blank=True)
    passages = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"index of {self.module.slug}"


class Question(models.Model):
    """A learner asked the mentor something; kept for the instructors."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mentor_questions")
    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="mentor_questions")
    rung = models.ForeignKey(Rung, on_delete=models.SET_NULL, null=True, blank=True, related_name="mentor_questions")
    text = models.TextField()
    normalised_text = models.CharField(max_length=1000, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # [{"key": ..., "title": ..., "url": ...}] in the order shown.
    passages_shown = models.JSONField(default=list, blank=True)
    answered_by_model = models.BooleanField(default=False)
    # Which calculator answered ("kv_cache", "weights", "zero"), empty when none did.
    calculator = models.CharField(max_length=20, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["module", "normalised_text"], name="mentor_q_module_text")]

    def __str__(self) -> str:
        return self.text[:80]

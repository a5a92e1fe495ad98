"""The catalog: Track -> Module -> Rung, with rung content versioned.

A rung's content (instructions, code, tests, limits) lives in RungVersion
rows that are never edited after creation: a submission points at the
version it was graded against, so an edit never rewrites history.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from .constants import Difficulty, GpuNeed


class Track(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["order", "slug"]

    def __str__(self) -> str:
        return self.title


class Module(models.Model):
    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="modules")
    slug = models.SlugField(unique=True)
    external_id = models.CharField(max_length=100, blank=True, help_text="Catalog id, e.g. P10.llm-systems-frontier.01")
    title = models.CharField(max_length=200)
    order = models.PositiveIntegerField(default=0)
    audience = models.CharField(max_length=50, blank=True)
    depth = models.CharField(max_length=50, blank=True)
    summary = models.TextField(blank=True)
    why_it_matters = models.TextField(blank=True)
    concept_md = models.TextField(blank=True)
    worked_example_md = models.TextField(blank=True)
    reference_md = models.TextField(blank=True)
    one_liners = models.JSONField(default=list, blank=True)
    sources = models.JSONField(default=list, blank=True)
    # explanations.yaml's entries as written (defaults left out): the mentor's authored answers.
    explanations = models.JSONField(default=list, blank=True)
    next_module_slug = models.SlugField(blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    # Who may author the module: authoring.ModuleRole (editors and viewers); admins may for every module.

    class Meta:
        ordering = ["track__order", "order", "slug"]
        # A catalog id names one module: "Where next" links follow it (frontend.services).
        constraints = [models.UniqueConstraint(fields=["external_id"], condition=~models.Q(external_id=""), name="module_external_id_unique")]

    def __str__(self) -> str:
        return self.title


class Rung(models.Model):
    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="rungs")
    slug = models.SlugField(unique=True)
    order = models.PositiveIntegerField(default=0)
    # Ladder placement from rung.yaml: senior rungs are labelled so and listed last.
    senior = models.BooleanField(default=False)
    current_version = models.ForeignKey(
        "RungVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["module", "senior", "order", "slug"]

    def __str__(self) -> str:
        return self.slug


class RungVersion(models.Model):
    """One immutable snapshot of a rung's content."""

    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=300, blank=True)
    minutes = models.PositiveIntegerField()
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices)
    instructions_md = models.TextField()
    starter_code = models.TextField()
    # NOTE: reference_code, hidden_tests and wrong_solutions (and alternatives,
    # which are never shown at all) must never reach
    # a learner who has not passed the rung; views go through
    # grader.services.can_see_reference() before showing any of them.
    reference_code = models.TextField()
    visible_tests = models.TextField()
    hidden_tests = models.TextField()
    hidden_test_meta = models.JSONField(default=dict)
    wrong_solutions = models.JSONField(default=dict)
    limits = models.JSONField(default=dict)
    gpu = models.CharField(max_length=10, choices=GpuNeed.choices, default=GpuNeed.NO)
    # [{"id": mutant id, "reason": str}]: mutants the author marked equivalent (exercises.mutation).
    equivalent_mutants = models.JSONField(default=list, blank=True)
    # [markdown, ...]: hints a learner reveals one at a time (aids.HintReveal); never graded.
    hints = models.JSONField(default=list, blank=True)
    # {file name: {"description": str, "code": str}}: independent correct solutions (rung.yaml alternatives); never shown to learners.
    alternatives = models.JSONField(default=dict, blank=True)
    # rung.yaml's domain: as plain data (exercises.schema.EntryDomain per entry point).
    domain = models.JSONField(default=dict, blank=True)
    # A speed-graded rung's speed phase as its Submit's job carries it
    # (``loader.speed_payload``: entry, generator, sizes, baseline, min_ratio,
    # budget_s), and for export rung.yaml's section and its files
    # (``services.stored_speed``); {} for a rung graded on correctness alone (issue 60).
    speed = models.JSONField(default=dict, blank=True)
    # How much a pass means (exercises.strength.FIGURES): hidden tests named and generated
    # cases, wrong solutions caught, alternatives passing, mutation score; {} when not measured.
    strength = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rung", "-number"]
        constraints = [models.UniqueConstraint(fields=["rung", "number"], name="unique_rung_version_number")]

    def __str__(self) -> str:
        return f"{self.rung.slug} v{self.number}"

    @property
    def reference(self) -> str:
        """The reference solution, as sandbox jobs take it (``exercises.jobs``)."""
        return self.reference_code

    @property
    def speed_payload(self) -> dict[str, Any] | None:
        """The speed phase a Submit's job carries (``exercises.jobs``); None for a rung without one."""
        if not self.speed:
            return None
        # "section" and "files" are rung.yaml's speed section and its files, kept for export only.
        return {key: value for key, value in self.speed.items() if key not in ("section", "files")}

    def hidden_description(self, test_name: str) -> str:
        meta: dict[str, Any] = self.hidden_test_meta.get(test_name, {})
        return str(meta.get("description", "A hidden edge case."))

"""Work in progress on a rung, and the Checks that prove it before publishing.

A draft is not a RungVersion: learners only ever get ``Rung.current_version``,
which publishing creates from a draft whose latest Check passed on exactly
the draft's current content.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from core.constants import ContentRole
from exercises.constants import Difficulty, GpuNeed
from exercises.models import Module, Rung, RungVersion
from grader.models import ClaimedJob


class RungDraft(models.Model):
    """An editable copy of a rung's content. Field names follow RungVersion."""

    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="drafts")
    # Null until the first publish creates the Rung: an unpublished rung does
    # not exist for learners at all.
    rung = models.OneToOneField(Rung, on_delete=models.CASCADE, null=True, blank=True, related_name="draft")
    base_version = models.ForeignKey(RungVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    slug = models.SlugField(unique=True)
    order = models.PositiveIntegerField(default=1)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=300, blank=True)
    minutes = models.PositiveIntegerField(default=10)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices, default=Difficulty.EASY)
    gpu = models.CharField(max_length=10, choices=GpuNeed.choices, default=GpuNeed.NO)
    limits = models.JSONField(default=dict, blank=True)
    instructions_md = models.TextField(blank=True)
    starter_code = models.TextField(blank=True)
    reference_code = models.TextField(blank=True)
    visible_tests = models.TextField(blank=True)
    hidden_tests = models.TextField(blank=True)
    # {test name: {"description": str, "visibility": "hidden" | "after_solve"}}
    hidden_test_meta = models.JSONField(default=dict, blank=True)
    # {file name: {"description": str, "code": str}}
    wrong_solutions = models.JSONField(default=dict, blank=True)
    # [{"id": mutant id, "reason": str}], as rung.yaml's equivalent_mutants.
    equivalent_mutants = models.JSONField(default=list, blank=True)
    # [markdown, ...], as rung.yaml's hints.
    hints = models.JSONField(default=list, blank=True)
    # {file name: {"description": str, "code": str}}, as alternatives/ and rung.yaml's alternatives.
    alternatives = models.JSONField(default=dict, blank=True)
    # rung.yaml's domain: as plain data.
    domain = models.JSONField(default=dict, blank=True)
    # A speed-graded rung (issue 60): {"section": rung.yaml's speed section, "files": {"speed_inputs.py": ...,
    # "baseline.py": ...}}, as RungVersion.speed keeps them beside its job payload; {} for a rung without one.
    # The files are hidden material: only the module's content roles read a draft.
    speed = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["module", "order", "slug"]
        permissions = [("author_modules", "Can create modules and author the modules they own")]

    def __str__(self) -> str:
        return f"draft of {self.slug}"


class RungCheck(ClaimedJob):
    """One run of ``validate_rung`` over a draft's content at one moment, claimed like a submission (grader.lifecycle)."""

    draft = models.ForeignKey(RungDraft, on_delete=models.CASCADE, related_name="checks")
    # The draft's content hash when the Check was asked for: a later edit
    # makes the Check stale and publishing is refused until it runs again.
    content_hash = models.CharField(max_length=64)
    # The rung's files as checked ({relative path: text}): the worker checks
    # this snapshot, never the draft, which may have changed since.
    files = models.JSONField(default=dict)
    ok = models.BooleanField(default=False)
    # [{"claim", "ok", "evidence"}], from exercises.validation.Fact.
    facts = models.JSONField(default=list, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    # exercises.mutation.MutationReport.as_dict(): the score and the surviving mutants with their diffs.
    mutation = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(default=0.0)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        get_latest_by = "created_at"

    def __str__(self) -> str:
        return f"check #{self.pk} of {self.draft.slug}: {self.status} {'ok' if self.ok else ''}"


class ModuleRole(models.Model):
    """One user's content role on one catalog module (core.constants.ContentRole).

    Granted and revoked only through authoring.content_roles (a page on the
    module's authoring page), by an admin or an editor of the module; never by
    an LTI launch. Each change is also a ModuleRoleEvent.
    """

    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="content_roles")
    # module_roles: core.roles asks through this name (core does not import authoring).
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="module_roles")
    role = models.CharField(max_length=10, choices=ContentRole.choices)
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    granted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["module", "role", "user__username"]
        constraints = [models.UniqueConstraint(fields=["module", "user"], name="one_content_role_per_module_and_user")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} of {self.module_id}"


class RoleAction(models.TextChoices):
    GRANT = "grant", "Granted"
    REVOKE = "revoke", "Revoked"
    MIGRATED = "migrated", "Migrated from module ownership"


class ModuleRoleEvent(models.Model):
    """Who granted or revoked which content role to whom, and when: append-only.

    The names are kept as text too, so the record outlives a deleted account.
    """

    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    actor_name = models.CharField(max_length=150, blank=True)
    subject = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    subject_name = models.CharField(max_length=150)
    role = models.CharField(max_length=10, choices=ContentRole.choices)
    action = models.CharField(max_length=10, choices=RoleAction.choices)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.actor_name or 'migration'} {self.action} {self.role} to {self.subject_name}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValueError("content role events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("content role events are append-only")

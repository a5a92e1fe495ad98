from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .constants import Scope


class ApiToken(models.Model):
    """A personal access token: the learner's own key to the API.

    Only the SHA-256 of the token is stored (``digest``); the token itself is
    shown once, when made. ``prefix`` (its first characters) tells tokens apart
    on the account page."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.READ)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # The user's session auth hash when it was made (a keyed hash of the password hash): a token
    # ends when the password changes, as every session does (docs/security.md, API tokens).
    auth_hash = models.CharField(max_length=128, default="", editable=False)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

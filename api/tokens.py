"""Personal access tokens: made, checked and revoked here, nowhere else."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from core.types import User

from . import messages
from .constants import LAST_USED_RESOLUTION_S, TOKEN_BYTES, TOKEN_MAX_DAYS, TOKEN_PREFIX, TOKENS_PER_USER_MAX, Scope
from .exceptions import ApiRefused
from .models import ApiToken


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    secret: str  # shown once, never stored


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", errors="surrogatepass")).hexdigest()


def live_tokens(user: User) -> list[ApiToken]:
    now = timezone.now()
    return list(ApiToken.objects.filter(user=user, revoked_at__isnull=True, expires_at__gt=now))


def create_token(*, user: User, name: str, scope: str, days: int) -> NewToken:
    """A new token for ``user``; the secret is returned once and only its digest kept."""
    if scope not in Scope.values:
        raise ValueError(f"unknown scope {scope!r}")
    if len(live_tokens(user)) >= TOKENS_PER_USER_MAX:
        raise ApiRefused(messages.TOO_MANY_TOKENS.format(limit=TOKENS_PER_USER_MAX), "too_many_tokens", 400)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
    days = max(1, min(days, TOKEN_MAX_DAYS))
    token = ApiToken.objects.create(
        user=user,
        name=name.strip() or "token",
        digest=digest_of(secret),
        prefix=secret[: len(TOKEN_PREFIX) + 4],
        scope=scope,
        expires_at=timezone.now() + timedelta(days=days),
        auth_hash=user.get_session_auth_hash(),
    )
    return NewToken(token, secret)


def revoke_token(*, user: User, token_id: int) -> bool:
    """Revoke ``user``'s own token ``token_id``; False if it is not theirs or already revoked."""
    return ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(revoked_at=timezone.now()) == 1


def authenticate_token(secret: str) -> ApiToken:
    """The live token whose secret this is, with its user; raises ``ApiRefused`` (401) otherwise.

    Marks it used, at most once per LAST_USED_RESOLUTION_S (a conditional UPDATE)."""
    token = ApiToken.objects.select_related("user").filter(digest=digest_of(secret)).first()
    now = timezone.now()
    if token is None:
        raise ApiRefused(messages.TOKEN_UNKNOWN, "token_unknown", 401)
    if token.revoked_at is not None:
        raise ApiRefused(messages.TOKEN_REVOKED, "token_revoked", 401)
    if token.expires_at <= now:
        raise ApiRefused(messages.TOKEN_EXPIRED, "token_expired", 401)
    if not token.user.is_active:
        raise ApiRefused(messages.ACCOUNT_INACTIVE, "account_inactive", 401)
    if not constant_time_compare(token.auth_hash, token.user.get_session_auth_hash()):
        # A stolen session's token must not outlive the password change that ends the session.
        raise ApiRefused(messages.TOKEN_PASSWORD_CHANGED, "password_changed", 401)
    stale = now - timedelta(seconds=LAST_USED_RESOLUTION_S)
    ApiToken.objects.filter(pk=token.pk).filter(Q(last_used_at__isnull=True) | Q(last_used_at__lt=stale)).update(last_used_at=now)
    return token


def require_scope(token: ApiToken, scope: str) -> None:
    """Refuse (403) a read-only token where ``scope`` (run_submit) is needed."""
    if scope == Scope.RUN_SUBMIT and token.scope != Scope.RUN_SUBMIT:
        raise ApiRefused(messages.SCOPE_RUN_SUBMIT, "scope", 403)

"""Server-side login sessions, and ending them: each user's session keys.

Sessions live in the session store (SESSION_ENGINE: the project's Redis),
so deleting one ends it wherever its cookie was copied to. Logout deletes
the current one (Django's ``flush``); a password change keeps the current
one under a new key and ends the others; an admin's "log out everywhere"
ends them all. For the last two every login's key is remembered in a set
per user, kept beside the sessions and expiring with the newest of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.core.cache import caches
from django.dispatch import receiver
from django.http import HttpRequest

from core.types import User


def _index_key(user_pk: int) -> str:
    return f"user-sessions:{user_pk}"


def _session_store() -> Any:
    return import_module(settings.SESSION_ENGINE).SessionStore


def _redis(cache: Any) -> Any | None:
    """The Redis client under the sessions' cache, or None on another backend."""
    client = getattr(cache, "_cache", None)
    return client.get_client(write=True) if client is not None and hasattr(client, "get_client") else None


def remember_session(user_pk: int, session_key: str) -> None:
    cache = caches[settings.SESSION_CACHE_ALIAS]
    key = cache.make_and_validate_key(_index_key(user_pk))
    redis = _redis(cache)
    if redis is not None:
        # One round trip, atomic: two logins at once both land in the set.
        redis.pipeline().sadd(key, session_key).expire(key, settings.SESSION_COOKIE_AGE).execute()
    else:  # a local-memory cache (one process): read, add, write
        keys = cache.get(_index_key(user_pk), set()) | {session_key}
        cache.set(_index_key(user_pk), keys, settings.SESSION_COOKIE_AGE)


def _forget_session(user_pk: int, session_key: str) -> None:
    cache = caches[settings.SESSION_CACHE_ALIAS]
    redis = _redis(cache)
    if redis is not None:
        redis.srem(cache.make_and_validate_key(_index_key(user_pk)), session_key)
    else:
        cache.set(_index_key(user_pk), cache.get(_index_key(user_pk), set()) - {session_key}, settings.SESSION_COOKIE_AGE)


def end_sessions(user_pk: int, keep: str | None = None) -> None:
    """End every session of this user but ``keep``."""
    cache = caches[settings.SESSION_CACHE_ALIAS]
    redis = _redis(cache)
    if redis is not None:
        keys = {key.decode() for key in redis.smembers(cache.make_and_validate_key(_index_key(user_pk)))}
    else:
        keys = set(cache.get(_index_key(user_pk), set()))
    store = _session_store()
    for session_key in keys - {keep}:
        store(session_key=session_key).delete()
    cache.delete(_index_key(user_pk))
    if keep:
        remember_session(user_pk, keep)


@receiver(user_logged_in, dispatch_uid="frontend.sessions.remember")
def _remember_login(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if session is not None and session.session_key:
        remember_session(user.pk, session.session_key)


@receiver(user_logged_out, dispatch_uid="frontend.sessions.forget")
def _forget_logout(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if user is not None and session is not None and session.session_key:
        _forget_session(user.pk, session.session_key)

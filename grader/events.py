"""Live-update hints on a submission's unguessable channel, over Redis pub/sub.

An event says only "this submission changed": the page then re-fetches the
submission's JSON state, so the database stays the truth and a lost event
costs nothing but latency (the page also polls when the stream fails). For
the same reason publishing never raises: with Redis down, grading goes on
and the learner's page falls back to polling.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from functools import lru_cache

import redis
from django.conf import settings
from redis.client import PubSub

log = logging.getLogger(__name__)

CHANGED = "changed"
# Publishing happens inside grading: never let a sick Redis stall it for long.
_SOCKET_TIMEOUT_S = 1.0


def channel_key(channel: str) -> str:
    return f"dojo:submission:{channel}"


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    # NOTE: one pool per URL and process; redis-py resets a pool's connections
    # in a forked child, so Celery's prefork workers may share this safely.
    return redis.Redis.from_url(url, socket_timeout=_SOCKET_TIMEOUT_S, socket_connect_timeout=_SOCKET_TIMEOUT_S)


def publish_changed(channel: str) -> None:
    """Tell anyone watching ``channel`` that its submission changed. Never raises."""
    try:
        _client(settings.REDIS_URL).publish(channel_key(channel), CHANGED)
    except (redis.RedisError, OSError) as exc:
        log.warning("live update for a submission not published (%s); pages fall back to polling", exc)


def subscribe(channel: str) -> PubSub | None:
    """Subscribe to ``channel``'s hints now, or None (logged) when Redis cannot
    be reached. Pass the result to ``listen``, which closes it."""
    pubsub: PubSub = _client(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
    try:
        pubsub.subscribe(channel_key(channel))
    except (redis.RedisError, OSError) as exc:
        log.warning("live updates unavailable (%s); pages fall back to polling", exc)
        pubsub.close()
        return None
    return pubsub


def listen(pubsub: PubSub, *, max_s: float, heartbeat_s: float) -> Iterator[str | None]:
    """Yield ``"changed"`` for each hint and ``None`` after every ``heartbeat_s``
    of silence, for at most ``max_s`` seconds; then close the subscription.

    Because ``subscribe`` ran before this, an event published between it and
    the caller's first read is not lost.
    """
    try:
        deadline = time.monotonic() + max_s
        last_sent = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= deadline:
                return
            message = pubsub.get_message(timeout=min(heartbeat_s, deadline - now))
            if message is not None and message.get("type") == "message":
                last_sent = time.monotonic()
                yield CHANGED
            elif time.monotonic() - last_sent >= heartbeat_s:
                last_sent = time.monotonic()
                yield None
    except (redis.RedisError, OSError) as exc:
        log.warning("live-update stream ended early (%s); the page falls back to polling", exc)
    finally:
        try:
            pubsub.close()
        except (redis.RedisError, OSError):  # pragma: no cover - closing a broken connection
            pass

"""System checks of what grading needs outside Django: the sandbox image and the broker.

Deployment checks (``manage.py check --deploy``), because they ask Docker
and Redis; a worker runs them at start-up too (``signals``) and refuses to
start on an error, instead of failing every job with ``image_missing``.
"""

from __future__ import annotations

from typing import Any

import docker
import docker.errors
import redis
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.core.exceptions import ImproperlyConfigured

from exercises.runners import sandbox_image

_TIMEOUT_S = 3


def _docker_client() -> docker.DockerClient:
    return docker.from_env(timeout=_TIMEOUT_S)


@register("sandbox", deploy=True)
def check_sandbox_image(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The sandbox image exists in this host's Docker (a Warning when Docker cannot be asked:
    the web process may run without it; workers retry jobs until it is back)."""
    image = sandbox_image()
    try:
        client = _docker_client()
        try:
            client.images.get(image)
        finally:
            client.close()
    except docker.errors.ImageNotFound:
        return [Error(f"the sandbox image {image} is not in Docker", hint="build it: python -m sandbox.build (or set SANDBOX_IMAGE)",
                      id="grader.E001")]
    except docker.errors.DockerException as exc:
        return [Warning(f"Docker could not be asked about the sandbox image {image}: {exc}"[:300], id="grader.W001")]
    return []


@register("broker", deploy=True)
def check_broker(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The Celery broker (Redis) answers a PING."""
    url = str(settings.CELERY_BROKER_URL)
    try:
        client = redis.Redis.from_url(url, socket_timeout=_TIMEOUT_S, socket_connect_timeout=_TIMEOUT_S)
        try:
            client.ping()
        finally:
            client.close()
    except (redis.RedisError, ValueError, OSError) as exc:
        return [Error(f"the broker at {url} does not answer: {exc}"[:300], hint="start Redis or fix REDIS_URL", id="grader.E002")]
    return []


def require_grading_dependencies() -> None:
    """Raise ImproperlyConfigured when a check above finds an error (a worker's start-up)."""
    errors = [message for check in (check_sandbox_image, check_broker) for message in check() if message.is_serious()]
    if errors:
        raise ImproperlyConfigured("; ".join(f"{message.id}: {message.msg}" for message in errors))

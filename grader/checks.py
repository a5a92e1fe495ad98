"""System checks of what grading needs outside Django: the sandbox image and the broker.

Deployment checks (``manage.py check --deploy``), because they ask Docker
and Redis; a worker runs them at start-up too (``worker_hooks``) and refuses to
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

from core.runners import sandbox_image
from exercises.constants import GpuNeed
from exercises.exceptions import CatalogError
from exercises.loader import read_catalog
from sandbox.gpu import gpu_problems

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


@register("sandbox", deploy=True)
def check_gpu_worker(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """On a GPU worker (SANDBOX_GPU_ENABLED): Docker gives a container each of SANDBOX_GPU_DEVICES."""
    if not settings.SANDBOX_GPU_ENABLED:
        return []
    image = sandbox_image()
    try:
        client = _docker_client()
        try:
            problems = gpu_problems(client, image, list(settings.SANDBOX_GPU_DEVICES))
        finally:
            client.close()
    except docker.errors.DockerException as exc:
        problems = [f"Docker could not be asked for a GPU: {exc}"[:300]]
    return [
        Error(
            f"this GPU worker cannot give sandboxes a GPU: {problem}",
            hint="install the NVIDIA container toolkit (nvidia-ctk runtime configure --runtime=docker), check SANDBOX_GPU_DEVICES "
            "against nvidia-smi -L, or run this worker without SANDBOX_GPU_ENABLED",
            id="grader.E003",
        )
        for problem in problems
    ]


@register("catalog")
def check_gpu_rungs_have_workers(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A rung that requires a GPU on a platform without GPU workers would wait forever: say so at start-up."""
    if settings.GRADER_GPU_WORKERS:
        return []
    try:
        catalog = read_catalog(settings.EXERCISES_DIR)
    except CatalogError:
        return []  # exercises.E001 reports it
    stuck = sorted(
        rung.meta.slug for track in catalog for module in track.modules for rung in module.rungs if rung.meta.gpu == GpuNeed.REQUIRED
    )
    if not stuck:
        return []
    return [
        Warning(
            f"no GPU worker can take the rung(s) {', '.join(stuck)} (gpu: required): their Runs and Submits wait in the gpu queue",
            hint="run a GPU worker and set GRADER_GPU_WORKERS=1 everywhere, or mark the rung gpu: preferred",
            id="grader.W002",
        )
    ]


def require_grading_dependencies() -> None:
    """Raise ImproperlyConfigured when a check above finds an error (a worker's start-up)."""
    errors = [message for check in (check_sandbox_image, check_broker, check_gpu_worker) for message in check() if message.is_serious()]
    if errors:
        raise ImproperlyConfigured("; ".join(f"{message.id}: {message.msg}" for message in errors))

"""The sandbox runner this process uses, configured from settings.

Grading, Checks and the ``grade`` / ``validate_exercises`` commands all run
jobs through it. It lives with the catalog (the lowest app that runs jobs),
so neither ``exercises`` nor ``grader`` has to import the other's services.
"""

from __future__ import annotations

import os
import socket

from django.conf import settings

from sandbox.image.tag import image_tag
from sandbox.runner import SandboxRunner

_runners: dict[tuple[int, str, bool, int, str, int], SandboxRunner] = {}


def sandbox_image() -> str:
    """SANDBOX_IMAGE, or the tag of the image built from this checkout (a hash of files, no Docker)."""
    return settings.SANDBOX_IMAGE or image_tag()


def default_runner() -> SandboxRunner:
    """This process's runner, with its pool of pre-started containers.

    One per process (and per configuration): Celery's prefork children each
    keep SANDBOX_POOL_SIZE warm containers, each serving up to
    SANDBOX_REUSE_JOBS jobs before it is replaced. The
    image is never built here: a missing image is a failed system check at
    start-up (``grader.checks``) and an ``image_missing`` result per job.
    """
    image = sandbox_image()
    key = (os.getpid(), image, settings.SANDBOX_GPU_ENABLED, settings.SANDBOX_POOL_SIZE, settings.SANDBOX_RUNTIME, settings.SANDBOX_REUSE_JOBS)
    runner = _runners.get(key)
    if runner is None:
        runner = SandboxRunner(
            image,
            gpu_enabled=settings.SANDBOX_GPU_ENABLED,
            runtime=settings.SANDBOX_RUNTIME,
            pool_size=settings.SANDBOX_POOL_SIZE,
            pool_owner=f"{socket.gethostname()}:{os.getpid()}",
            cleanup_in_background=settings.SANDBOX_POOL_SIZE > 0,
            reuse_jobs=settings.SANDBOX_REUSE_JOBS,
        )
        _runners[key] = runner
    return runner


def close_runners() -> None:
    """Remove this process's pre-started containers (on worker shutdown)."""
    for key in [key for key in _runners if key[0] == os.getpid()]:
        _runners.pop(key).close()

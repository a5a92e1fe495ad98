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
from sandbox.jobs import Limits
from sandbox.runner import SandboxRunner

# Set by the worker at start-up to its Celery node name: warm containers are
# labelled "<node>:<pid>", and a worker that starts over removes only its own.
WORKER_NODE_ENV = "DOJO_WORKER_NODE"

_runners: dict[tuple[int, str, bool, int, str, str, int, int | None, bool], SandboxRunner] = {}


def image_variant() -> str:
    """The image variant this process grades in: ``cuda`` on a GPU worker, else ``cpu``."""
    return "cuda" if settings.SANDBOX_GPU_ENABLED else "cpu"


def sandbox_image() -> str:
    """SANDBOX_IMAGE, or the tag of the image built from this checkout (a hash of files, no Docker)."""
    return settings.SANDBOX_IMAGE or image_tag(image_variant())


def pool_slot() -> int | None:
    """This process's slot in its Celery worker (billiard's pool index); None outside a pool."""
    try:
        from billiard.process import current_process
    except ImportError:  # pragma: no cover - Celery brings billiard
        return None
    index = getattr(current_process(), "index", None)
    return index if isinstance(index, int) and index >= 0 else None


def slot_index() -> int:
    """This process's slot in its Celery worker; 0 outside a pool."""
    slot = pool_slot()
    return 0 if slot is None else slot


def first_core_for_slot(slot: int | None) -> int | None:
    """The host core a worker slot's containers are pinned to (SANDBOX_PIN_CPUS).

    Only a pool slot grades one job at a time, so only there does one core
    per slot fit; outside a pool (``validate_exercises``, the mutation gate)
    one runner grades several jobs at once and the kernel places them.
    """
    if slot is None or not settings.SANDBOX_PIN_CPUS:
        return None
    return slot


def gpu_device_for_slot(index: int) -> str:
    """The one GPU worker slot ``index`` owns: SANDBOX_GPU_DEVICES[index].

    The worker runs one slot per device (CELERY_WORKER_CONCURRENCY follows
    the list); a slot replaced after a crash gets the free index back. An
    index past the list (concurrency set higher by hand) is refused rather
    than made to share a GPU.
    """
    devices = list(settings.SANDBOX_GPU_DEVICES)
    if index >= len(devices):
        raise RuntimeError(f"worker slot {index} has no GPU: SANDBOX_GPU_DEVICES lists {len(devices)}; run the GPU worker with --concurrency {len(devices)}")
    return str(devices[index])


def default_runner() -> SandboxRunner:
    """This process's runner, with its pool of pre-started containers.

    One per process (and per configuration): Celery's prefork children each
    keep SANDBOX_POOL_SIZE warm containers, each serving up to
    SANDBOX_REUSE_JOBS jobs before it is replaced; slot i's containers run
    on host core i (``first_core_for_slot``). On a GPU worker each
    child is one slot and owns one GPU (``gpu_device_for_slot``). The
    image is never built here: a missing image is a failed system check at
    start-up (``grader.checks``) and an ``image_missing`` result per job.
    """
    image = sandbox_image()
    gpu = bool(settings.SANDBOX_GPU_ENABLED)
    device = gpu_device_for_slot(slot_index()) if gpu else ""
    first_core = first_core_for_slot(pool_slot())
    key = (os.getpid(), image, gpu, settings.SANDBOX_POOL_SIZE, settings.SANDBOX_RUNTIME, device, settings.SANDBOX_REUSE_JOBS, first_core, settings.SANDBOX_HUGE_PAGES)
    runner = _runners.get(key)
    if runner is None:
        runner = SandboxRunner(
            image,
            gpu_enabled=gpu,
            gpu_device=device,
            runtime=settings.SANDBOX_RUNTIME,
            pool_size=settings.SANDBOX_POOL_SIZE,
            # A GPU worker grades GPU rungs: its warm containers hold its slot's GPU.
            pool_limits=Limits(gpu=gpu),
            pool_owner=f"{os.environ.get(WORKER_NODE_ENV) or socket.gethostname()}:{os.getpid()}",
            cleanup_in_background=settings.SANDBOX_POOL_SIZE > 0,
            reuse_jobs=settings.SANDBOX_REUSE_JOBS,
            first_core=first_core,
            huge_pages=settings.SANDBOX_HUGE_PAGES,
        )
        _runners[key] = runner
    return runner


def start_pool() -> None:
    """Create this process's runner now, so its pool starts warming containers
    in the background before the first job comes (a grading process starting).

    Nothing when the pool is off (SANDBOX_POOL_SIZE 0) or is to start at the
    first job (SANDBOX_POOL_WARM_AT_START off). Returns at once: the
    containers start on the pool's own thread.
    """
    if settings.SANDBOX_POOL_WARM_AT_START and settings.SANDBOX_POOL_SIZE > 0:
        default_runner()


def close_runners() -> None:
    """Remove this process's pre-started containers (on worker shutdown)."""
    for key in [key for key in _runners if key[0] == os.getpid()]:
        _runners.pop(key).close()

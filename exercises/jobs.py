"""Turn rung content into sandbox jobs: the one place that decides which
tests a Run or a Submit gets. Used by grading, validation and `grade`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from django.conf import settings

from sandbox.jobs import Job, Limits, Mode

from .constants import GpuNeed, gpu_need


class RungContent(Protocol):
    @property
    def visible_tests(self) -> str: ...
    @property
    def hidden_tests(self) -> str: ...
    @property
    def limits(self) -> Any: ...
    @property
    def gpu(self) -> str | bool: ...
    @property
    def reference(self) -> str: ...


def job_for(content: RungContent, kind: str, code: str, *, seed: int = 0) -> Job:
    """A job running ``code`` against the visible tests (``run``) or the hidden ones (``submit``).

    Hidden tests get the reference solution (as the module ``reference``, in
    the harness only) and ``seed`` for the inputs they generate.
    """
    mode: Mode
    if kind == "submit":
        mode, tests = "submit", {"test_hidden.py": content.hidden_tests}
    elif kind == "run":
        mode, tests = "run", {"test_visible.py": content.visible_tests}
    else:
        raise ValueError(f"unknown kind {kind!r}")
    # A GPU is attached wherever the worker has one; where it has none the
    # rung was routed to the CPU (``preferred``) and its GPU-only tests skip.
    limits = Limits.from_dict(dict(content.limits), gpu=gpu_need(content.gpu) != GpuNeed.NO)
    if limits.time_s > settings.SANDBOX_MAX_TIME_S:
        # Every timeout up the chain (Celery, the broker) is derived from this cap.
        limits = replace(limits, time_s=settings.SANDBOX_MAX_TIME_S)
    if mode == "run" and limits.time_s > settings.GRADER_RUN_TIME_S:
        # A Run is a quick check of the visible tests: a loop shows up sooner.
        limits = replace(limits, time_s=settings.GRADER_RUN_TIME_S)
    reference = content.reference if mode == "submit" else ""
    # A speed-graded rung's Submit times the code once its tests passed (issue 60).
    speed = getattr(content, "speed_payload", None) if mode == "submit" else None
    if speed and float(speed.get("budget_s") or 0) > settings.SANDBOX_MAX_SPEED_S:
        # The speed phase nests in the Celery limits too (settings, "one clock").
        speed = {**speed, "budget_s": settings.SANDBOX_MAX_SPEED_S}
    return Job(mode=mode, source=code, tests=tests, limits=limits, seed=seed, reference=reference, speed=speed or None)

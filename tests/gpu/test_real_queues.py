"""The GPU path on real parts, on a CPU host: Redis queues, Celery workers, Docker.

The web (this test process) routes from its own GRADER_GPU_WORKERS; a worker
on the `gpu` queue grades what lands there; a worker told to attach GPUs on a
host whose Docker has none refuses to start.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from exercises.models import Rung
from grader.constants import Status
from grader.messages import CPU_FALLBACK_NOTE
from grader.models import Submission
from grader.services import submit_solution

pytestmark = [pytest.mark.redis, pytest.mark.worker, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
RUNG = ROOT / "exercises/llm-systems-frontier/inference-and-serving/rungs/07-paged-attention-decode"


def _wait_done(pk: int, timeout_s: float = 240) -> Submission:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        submission = Submission.objects.get(pk=pk)
        if submission.status == Status.DONE:
            return submission
        time.sleep(0.5)
    pytest.fail(f"submission {pk} was not graded within {timeout_s:g} s")


def _queued(redis_url: str, queue: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return int(client.llen(queue))
    finally:
        client.close()


def test_with_gpu_workers_the_web_sends_a_preferred_rung_to_the_gpu_queue(
    catalog: Any, learner: Any, worker_factory: Any, redis_url: str, sandbox_image: str, settings: Any
) -> None:
    settings.GRADER_GPU_WORKERS = True
    submission = submit_solution(user=learner, rung=Rung.objects.get(slug="paged-attention-decode"), kind="run", code=(RUNG / "reference.py").read_text())
    deadline = time.monotonic() + 10
    while _queued(redis_url, "gpu") == 0 and time.monotonic() < deadline:
        time.sleep(0.1)  # sent on commit
    assert (_queued(redis_url, "gpu"), _queued(redis_url, "run")) == (1, 0)
    # A worker on the gpu queue only (this host has no GPU, so it grades in the CPU sandbox).
    worker_factory(name="gpu@test", queues="gpu").start()
    done = _wait_done(submission.pk)
    assert done.outcome == "passed", done.message
    assert done.machine["image"] == sandbox_image and done.machine["device"].startswith("CPU")
    assert CPU_FALLBACK_NOTE in done.message  # it ran where no GPU was visible


def test_without_gpu_workers_a_preferred_rung_is_graded_on_the_cpu_and_says_so(catalog: Any, learner: Any, worker: Any, settings: Any) -> None:
    settings.GRADER_GPU_WORKERS = False
    submission = submit_solution(user=learner, rung=Rung.objects.get(slug="paged-attention-decode"), kind="submit", code=(RUNG / "reference.py").read_text())
    done = _wait_done(submission.pk)
    assert done.outcome == "passed", done.message
    assert CPU_FALLBACK_NOTE in done.message
    skipped = {row.name for row in done.test_results.all() if row.outcome == "skipped"}
    assert skipped == {"test_gpu_half_precision_on_the_device", "test_gpu_never_copies_the_whole_cache"}
    assert {"device", "torch", "cuda", "python", "image"} <= set(done.machine) and done.machine["gpu"] is False


def test_a_gpu_worker_on_a_host_whose_docker_has_no_gpu_refuses_to_start(redis_url: str, sandbox_image: str, tmp_path: Path) -> None:
    env = {
        **os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}", "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "test-worker", "REDIS_URL": redis_url, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SANDBOX_IMAGE": sandbox_image, "SANDBOX_GPU_ENABLED": "1", "SANDBOX_GPU_DEVICES": "0",
    }
    out = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu", "-n", "nogpu@test", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )
    assert out.returncode != 0
    assert "grader.E003: this GPU worker cannot give sandboxes a GPU: GPU 0:" in out.stdout + out.stderr

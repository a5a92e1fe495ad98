"""Where a GPU rung's job goes: decided by the enqueuing process from its own GRADER_GPU_WORKERS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from authoring.services import CHECKS
from grader import lifecycle, services
from grader.constants import QUEUE_GPU, QUEUE_RUN, QUEUE_SUBMIT

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("gpu_workers", "need", "kind", "queue"),
    [
        (True, "required", "run", QUEUE_GPU),
        (True, "preferred", "submit", QUEUE_GPU),
        (True, "no", "submit", QUEUE_SUBMIT),
        (False, "required", "run", QUEUE_GPU),  # waits there for a GPU worker
        (False, "preferred", "run", QUEUE_RUN),  # graded on the CPU instead
        (False, "preferred", "submit", QUEUE_SUBMIT),
        (False, "no", "run", QUEUE_RUN),
    ],
)
def test_the_queue_follows_the_rung_and_the_platform(settings, gpu_workers, need, kind, queue):
    settings.GRADER_GPU_WORKERS = gpu_workers
    assert lifecycle.queue_for(SimpleNamespace(gpu=need), kind) == queue


def test_a_worker_attaching_gpus_does_not_change_where_the_web_sends_work(settings):
    # The old rule read SANDBOX_GPU_ENABLED, which only the GPU worker has: the web never used the gpu queue.
    settings.GRADER_GPU_WORKERS, settings.SANDBOX_GPU_ENABLED = False, True
    assert lifecycle.queue_named("run", "preferred") == QUEUE_RUN
    settings.GRADER_GPU_WORKERS, settings.SANDBOX_GPU_ENABLED = True, False
    assert lifecycle.queue_named("run", "preferred") == QUEUE_GPU


def test_rows_from_before_the_three_way_choice_still_route(settings):
    settings.GRADER_GPU_WORKERS = False
    assert lifecycle.queue_named("run", True) == QUEUE_GPU
    assert lifecycle.queue_named("run", False) == QUEUE_RUN


def test_an_authoring_check_of_a_preferred_rung_runs_on_the_cpu_without_gpu_workers(settings):
    settings.GRADER_GPU_WORKERS = False
    check = SimpleNamespace(draft=SimpleNamespace(gpu="preferred"))
    assert CHECKS.queue_of(check) == QUEUE_SUBMIT
    settings.GRADER_GPU_WORKERS = True
    assert CHECKS.queue_of(check) == QUEUE_GPU


def test_the_workspace_notice_says_what_happens_without_gpu_workers(settings):
    settings.GRADER_GPU_WORKERS = False
    assert "waits" in services.gpu_notice(SimpleNamespace(gpu="required"))
    assert "CPU" in services.gpu_notice(SimpleNamespace(gpu="preferred"))
    assert services.gpu_notice(SimpleNamespace(gpu="no")) == ""
    settings.GRADER_GPU_WORKERS = True
    assert services.gpu_notice(SimpleNamespace(gpu="required")) == ""


def _process_settings(**env: str) -> dict[str, object]:
    """What a freshly started process (web or worker) decides from its own environment."""
    code = (
        "import django, json; django.setup(); from django.conf import settings; from grader.lifecycle import queue_named;"
        "from core.runners import image_variant;"
        "print(json.dumps({'queue': queue_named('submit', 'preferred'), 'variant': image_variant(),"
        " 'concurrency': getattr(settings, 'CELERY_WORKER_CONCURRENCY', None)}))"
    )
    base = {key: value for key, value in os.environ.items() if not key.startswith(("GRADER_GPU", "SANDBOX_GPU"))}
    environment = {**base, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}", "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x", **env}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_each_process_reads_its_own_settings_as_compose_wires_them():
    # docker-compose.yml: GRADER_GPU_WORKERS reaches every service; worker-gpu alone adds the GPU settings.
    web = _process_settings(GRADER_GPU_WORKERS="1")
    gpu_worker = _process_settings(GRADER_GPU_WORKERS="1", SANDBOX_GPU_ENABLED="1", SANDBOX_GPU_DEVICES="0,1,2")
    cpu_only = _process_settings()
    assert web == {"queue": QUEUE_GPU, "variant": "cpu", "concurrency": None}
    assert gpu_worker == {"queue": QUEUE_GPU, "variant": "cuda", "concurrency": 3}
    assert cpu_only["queue"] == QUEUE_SUBMIT


def test_a_gpu_listed_twice_stops_start_up():
    code = "import django; django.setup()"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}", "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x",
           "SANDBOX_GPU_ENABLED": "1", "SANDBOX_GPU_DEVICES": "0,0"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "SANDBOX_GPU_DEVICES must name each GPU once" in out.stderr

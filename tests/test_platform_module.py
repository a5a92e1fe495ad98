"""`platform/` holds configuration but must never shadow the stdlib module."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_platform_is_the_standard_library_in_pytest():
    assert platform.system() == "Linux"
    assert Path(platform.__file__).parent != ROOT / "platform"


def test_platform_is_the_standard_library_in_the_web_process(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["platform"] == "Linux"


def test_platform_is_the_standard_library_in_manage_py():
    code = "import platform, django; django.setup(); print(platform.system())"
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DEBUG": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("Linux")


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_platform_is_the_standard_library_in_the_celery_worker(worker):
    from grader.tasks import ping_task

    assert ping_task.apply_async(queue="submit").get(timeout=30) == "Linux"

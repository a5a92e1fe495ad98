"""`platform/` holds configuration but must never shadow the stdlib module.

Each test asserts where ``platform`` was imported from (the standard
library's folder), so it fails on any OS if the folder shadows it.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()


def test_platform_is_the_standard_library_in_pytest(client):
    import django.conf

    assert django.conf.settings.ROOT_URLCONF  # settings loaded, with platform/ on the path
    assert Path(platform.__file__).resolve().parent == STDLIB
    assert client.get("/healthz").status_code == 200


def test_platform_is_the_standard_library_in_manage_py():
    code = "import platform, django; django.setup(); print(platform.__file__)"
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DEBUG": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip().splitlines()[-1]).resolve().parent == STDLIB


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.docker
def test_the_celery_worker_starts_and_answers(worker):
    # Celery imports the standard library's platform at start-up: a shadowing
    # folder stops the worker before it can answer.
    from grader.tasks import ping_task

    assert ping_task.apply_async(queue="submit").get(timeout=30) == "pong"

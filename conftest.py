"""Shared fixtures: real Redis, a real Celery worker process, the sandbox image,
and the personas (a learner, another learner, a staff admin).

Tests that need a service are marked (``redis``, ``docker``, ``worker``,
``browser``) so they can be selected or skipped with ``-m``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A project-owned Redis on its own port and data dir, for this test session."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (make test installs it; or apt-get install redis-server)")
    port = _free_port()
    data_dir = tempfile.mkdtemp(prefix="dojo-redis-")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", data_dir, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail("Redis did not start")
            time.sleep(0.05)
    url = f"redis://127.0.0.1:{port}/0"
    from django.conf import settings

    from config.celery import app

    app.conf.update(broker_url=url, result_backend=url)
    settings.REDIS_URL = url  # live-update events go to this Redis too
    yield url
    process.terminate()
    process.wait(10)
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    """The sandbox image for this checkout, built if missing."""
    from sandbox.build import ensure_image

    return ensure_image()


@pytest.fixture
def worker(transactional_db: Any, redis_url: str, sandbox_image: str, settings: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process consuming the run and submit queues."""
    db_name = settings.DATABASES["default"]["NAME"]
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{db_name}",
        "REDIS_URL": redis_url,
        "SANDBOX_IMAGE": sandbox_image,
        "SECRET_KEY": "test-worker",
    }
    log_path = Path(tempfile.mkstemp(prefix="dojo-worker-", suffix=".log")[1])
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "run,submit", "-c", "2", "--pool", "prefork", "-l", "INFO", "--without-gossip", "--without-mingle"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    from grader.tasks import ping_task

    try:
        ping_task.apply_async(queue="run").get(timeout=60)
    except Exception:  # noqa: BLE001 - any failure to answer means no worker
        process.kill()
        pytest.fail(f"the Celery worker did not answer; log:\n{log_path.read_text()[-3000:]}")
    yield process
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@pytest.fixture
def learner(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="lena", password="learner-pass-123")


@pytest.fixture
def other_learner(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="omar", password="learner-pass-456")


@pytest.fixture
def admin_user(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser(username="ada", password="admin-pass-789")


@pytest.fixture
def catalog(db: Any, settings: Any) -> Any:
    """The shipped catalog, loaded into the test database."""
    from exercises.services import sync_catalog

    return sync_catalog(settings.EXERCISES_DIR)


@pytest.fixture(autouse=True)
def _plain_static_storage(settings: Any) -> None:
    """Tests render templates without running collectstatic first."""
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}

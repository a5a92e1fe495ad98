"""System checks: the sandbox image and the broker."""

from __future__ import annotations

import docker.errors
import pytest
from django.core.exceptions import ImproperlyConfigured

from grader import checks


class _Images:
    def __init__(self, error: Exception | None) -> None:
        self.error = error

    def get(self, name: str) -> object:
        if self.error is not None:
            raise self.error
        return object()


class _Docker:
    def __init__(self, error: Exception | None = None) -> None:
        self.images = _Images(error)

    def close(self) -> None:
        pass


def test_a_missing_sandbox_image_is_an_error_naming_it(monkeypatch, settings):
    settings.SANDBOX_IMAGE = "llm-dojo-sandbox:cpu-missing"
    monkeypatch.setattr(checks, "_docker_client", lambda: _Docker(docker.errors.ImageNotFound("no such image")))
    [error] = checks.check_sandbox_image()
    assert error.id == "grader.E001" and "llm-dojo-sandbox:cpu-missing" in error.msg


def test_docker_out_of_reach_is_only_a_warning(monkeypatch):
    def unreachable() -> _Docker:
        raise docker.errors.DockerException("Error while fetching server API version")

    monkeypatch.setattr(checks, "_docker_client", unreachable)
    [warning] = checks.check_sandbox_image()
    assert warning.id == "grader.W001" and not warning.is_serious()


def test_a_present_image_passes(monkeypatch):
    monkeypatch.setattr(checks, "_docker_client", lambda: _Docker())
    assert checks.check_sandbox_image() == []


def test_a_broker_that_does_not_answer_is_an_error(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    [error] = checks.check_broker()
    assert error.id == "grader.E002" and "127.0.0.1:1" in error.msg


def test_a_worker_refuses_to_start_without_its_image(monkeypatch, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    monkeypatch.setattr(checks, "_docker_client", lambda: _Docker(docker.errors.ImageNotFound("no such image")))
    with pytest.raises(ImproperlyConfigured, match=r"grader\.E001.*grader\.E002"):
        checks.require_grading_dependencies()


@pytest.mark.docker
def test_the_real_docker_knows_the_sandbox_image(sandbox_image, settings):
    settings.SANDBOX_IMAGE = sandbox_image
    assert checks.check_sandbox_image() == []
    settings.SANDBOX_IMAGE = "llm-dojo-sandbox:cpu-000000000000"
    assert [message.id for message in checks.check_sandbox_image()] == ["grader.E001"]


@pytest.mark.redis
@pytest.mark.docker
@pytest.mark.worker
def test_a_real_worker_without_its_image_stops_at_start_up(redis_url, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'platform'}", "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "test-worker", "REDIS_URL": redis_url, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SANDBOX_IMAGE": "llm-dojo-sandbox:cpu-000000000000",
    }
    out = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "run", "-c", "1", "-n", "noimage@test", "--without-gossip",
         "--without-mingle"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode != 0
    assert "grader.E001: the sandbox image llm-dojo-sandbox:cpu-000000000000 is not in Docker" in out.stdout + out.stderr

"""A one-off `manage.py grade` leaves no container behind, whatever the pool setting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docker.models.containers
import pytest
from django.core.management import call_command

from .support import KV_DIR, sandbox_containers

pytestmark = [pytest.mark.docker, pytest.mark.security]


def test_the_grade_command_leaves_no_container(kv_rung: Any, settings: Any, sandbox_image: str, tmp_path: Path, monkeypatch: Any) -> None:
    settings.SANDBOX_POOL_SIZE = 2  # a worker's setting must not make the command pre-start containers
    settings.SANDBOX_IMAGE = sandbox_image
    created: list[str] = []
    real_create = docker.models.containers.ContainerCollection.create

    def recording_create(self: Any, *args: Any, **kwargs: Any) -> Any:
        container = real_create(self, *args, **kwargs)
        created.append(str(container.id))
        return container

    # Every container this process creates, whichever path creates it
    # (other test sessions may run containers on the same engine meanwhile).
    monkeypatch.setattr(docker.models.containers.ContainerCollection, "create", recording_create)
    solution = tmp_path / "solution.py"
    solution.write_text((KV_DIR / "reference.py").read_text())
    call_command("grade", "kv-cache-size", str(solution))
    assert created, "the command created no container at all"
    assert not set(created) & sandbox_containers()

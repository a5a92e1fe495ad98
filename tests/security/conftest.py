from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import KV_DIR, Sandbox


@pytest.fixture(scope="session")
def sandbox(sandbox_image: str) -> Iterator[Sandbox]:
    shared = Sandbox(sandbox_image)
    yield shared
    shared.runner.close()


@pytest.fixture(scope="session")
def gvisor_sandbox(sandbox_image: str) -> Iterator[Sandbox]:
    """The same runner under gVisor (``SANDBOX_RUNTIME=runsc``)."""
    import docker

    runtimes = docker.from_env().info().get("Runtimes") or {}
    if "runsc" not in runtimes:
        pytest.fail("Docker has no runsc runtime: scripts/ensure-docker.sh installs and registers gVisor")
    shared = Sandbox(sandbox_image, runtime="runsc")
    yield shared
    shared.runner.close()


@pytest.fixture
def kv_rung(db: Any, tmp_path: Path) -> Any:
    """The KV-cache rung alone in the database, with the attack suite's small limits.

    Only this rung is loaded (from a copy), so the suite does not depend on
    the rest of the catalog being in a loadable state.
    """
    from exercises.models import Rung
    from exercises.services import sync_catalog

    module_dir = KV_DIR.parent.parent
    track_dir = module_dir.parent
    copy = tmp_path / "catalog" / track_dir.name / module_dir.name
    copy.mkdir(parents=True)
    shutil.copy(track_dir / "track.yaml", copy.parent / "track.yaml")
    for item in module_dir.iterdir():
        if item.is_file():
            shutil.copy(item, copy / item.name)
    shutil.copytree(KV_DIR, copy / "rungs" / KV_DIR.name)
    sync_catalog(tmp_path / "catalog")
    rung = Rung.objects.get(slug="kv-cache-size")
    version = rung.current_version
    assert version is not None
    version.limits = {"time_s": 8, "memory_mb": 512, "output_kb": 64}
    version.save(update_fields=["limits"])
    return rung

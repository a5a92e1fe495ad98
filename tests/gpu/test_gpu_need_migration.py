"""exercises 0006: a stored gpu=true becomes `required`, false becomes `no`, on PostgreSQL and SQLite."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.sqlite_pass

BEFORE = [("exercises", "0005_rung_senior_ladder_placement")]
AFTER = [("exercises", "0006_gpu_need")]


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def before(transactional_db: Any) -> Any:
    apps = _migrate(BEFORE)
    yield apps
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_old_booleans_become_needs(before):
    Track, Module = before.get_model("exercises", "Track"), before.get_model("exercises", "Module")
    Rung, RungVersion = before.get_model("exercises", "Rung"), before.get_model("exercises", "RungVersion")
    module = Module.objects.create(track=Track.objects.create(slug="t", title="T"), slug="m", title="M")
    rung = Rung.objects.create(module=module, slug="r")
    fields = {"content_hash": "h", "title": "R", "minutes": 1, "difficulty": "easy", "instructions_md": "", "starter_code": "",
              "reference_code": "", "visible_tests": "", "hidden_tests": ""}
    on_gpu = RungVersion.objects.create(rung=rung, number=1, gpu=True, **fields).pk
    on_cpu = RungVersion.objects.create(rung=rung, number=2, gpu=False, **fields).pk
    apps = _migrate(AFTER)
    versions = apps.get_model("exercises", "RungVersion").objects
    assert (versions.get(pk=on_gpu).gpu, versions.get(pk=on_cpu).gpu) == ("required", "no")

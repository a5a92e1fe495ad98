"""grader's 0002 split into schema (0002), data (0005) and constraint (0006) steps."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor

# Also run in `make test`'s SQLite pass (the embedded default).
pytestmark = pytest.mark.sqlite_pass

# The catalog goes back too: the rows made at BEFORE use its models of then
# (a later column without a database default would be left NULL).
BEFORE = [("grader", "0002_submission_rung_in_flight"), ("exercises", "0002_module_owners")]
LATEST = [("grader", "0006_submission_rung_required")]


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _submission_with_no_rung(apps: Any) -> tuple[int, int]:
    User = apps.get_model("auth", "User")
    Track, Module = apps.get_model("exercises", "Track"), apps.get_model("exercises", "Module")
    Rung, RungVersion = apps.get_model("exercises", "Rung"), apps.get_model("exercises", "RungVersion")
    Submission = apps.get_model("grader", "Submission")
    module = Module.objects.create(track=Track.objects.create(slug="t", title="T"), slug="m", title="M")
    rung = Rung.objects.create(module=module, slug="r")
    version = RungVersion.objects.create(
        rung=rung, number=1, content_hash="h", title="R", minutes=1, difficulty="easy", instructions_md="", starter_code="",
        reference_code="", visible_tests="", hidden_tests="",
    )
    user = User.objects.create(username="old-learner")
    submission = Submission.objects.create(user=user, rung_version=version, kind="submit", code="x", status="done", channel="c1")
    return submission.pk, rung.pk


@pytest.fixture
def back_to_0002(transactional_db: Any) -> Any:
    apps = _migrate(BEFORE)
    yield apps
    # Back to every app's latest migration, for the tests that follow.
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_the_data_step_fills_every_rung_and_the_constraint_step_holds(back_to_0002):
    pk, rung_pk = _submission_with_no_rung(back_to_0002)
    apps = _migrate(LATEST)
    Submission = apps.get_model("grader", "Submission")
    assert Submission.objects.get(pk=pk).rung_id == rung_pk
    old = Submission.objects.get(pk=pk)
    Submission.objects.create(user_id=old.user_id, rung_id=rung_pk, rung_version_id=old.rung_version_id, kind="run", code="x", status="queued",
                              channel="c2")
    with pytest.raises(IntegrityError):
        Submission.objects.create(user_id=old.user_id, rung_id=rung_pk, rung_version_id=old.rung_version_id, kind="run", code="y",
                                  status="queued", channel="c3")


def test_a_database_that_applied_the_old_0002_migrates_cleanly(back_to_0002):
    # The old 0002 had already filled the rung and created the in-flight index.
    pk, rung_pk = _submission_with_no_rung(back_to_0002)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE grader_submission SET rung_id = %s", [rung_pk])
        cursor.execute(
            "CREATE UNIQUE INDEX one_job_in_flight_per_learner_and_rung ON grader_submission (user_id, rung_id) "
            "WHERE status IN ('queued', 'running')"
        )
    apps = _migrate(LATEST)
    assert apps.get_model("grader", "Submission").objects.get(pk=pk).rung_id == rung_pk

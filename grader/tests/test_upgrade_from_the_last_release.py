"""Upgrading a populated database from the last release (commit add0325) loses nothing.

The database is taken back to the release's migrations, filled as a site in
use would be (learners, graded submissions with their test rows, progress,
drafts, a rejudge with its results, an in-flight job), then migrated to
head. Every row must come through with its values, and the new columns get
their defaults. ``make test`` runs it on PostgreSQL, where 0002 once failed
on existing rows, and again on SQLite.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor
from lti_tool.models import LtiRegistration, LtiUser

pytestmark = pytest.mark.sqlite_pass

# The leaf migration of each of our apps at the release (git show add0325:<app>/migrations/).
RELEASE = [
    ("exercises", "0002_module_owners"),
    ("grader", "0003_rejudge_rejudgeresult"),
    ("authoring", "0001_initial"),
    ("frontend", "0001_initial"),
    ("mentor", "0001_initial"),
]
# The release's 0002 filled Submission.rung and created this index itself;
# today's 0002 leaves both to 0005/0006, which must cope with a database
# where they are already done.
IN_FLIGHT_INDEX = (
    "CREATE UNIQUE INDEX one_job_in_flight_per_learner_and_rung ON grader_submission (user_id, rung_id) "
    "WHERE status IN ('queued', 'running')"
)


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def _head() -> list[tuple[str, str]]:
    return list(MigrationExecutor(connection).loader.graph.leaf_nodes())


@pytest.fixture
def release_apps(transactional_db: Any) -> Any:
    """The models as the release knew them, on a database at the release's schema."""
    apps = _migrate(RELEASE)
    with connection.cursor() as cursor:
        cursor.execute(IN_FLIGHT_INDEX)
    yield apps
    _migrate(_head())  # every app's latest migration again, for the tests that follow


def _populate(apps: Any) -> dict[str, Any]:
    """A site in use at the release: returns what must survive the upgrade."""
    User = apps.get_model("auth", "User")
    Track, Module = apps.get_model("exercises", "Track"), apps.get_model("exercises", "Module")
    Rung, RungVersion = apps.get_model("exercises", "Rung"), apps.get_model("exercises", "RungVersion")
    Submission, TestResult = apps.get_model("grader", "Submission"), apps.get_model("grader", "SubmissionTestResult")
    Progress, Draft = apps.get_model("grader", "Progress"), apps.get_model("frontend", "Draft")
    Rejudge, RejudgeResult = apps.get_model("grader", "Rejudge"), apps.get_model("grader", "RejudgeResult")

    module = Module.objects.create(track=Track.objects.create(slug="llm", title="LLM"), slug="serving", title="Serving")
    rung = Rung.objects.create(module=module, slug="kv-cache")
    versions = [
        RungVersion.objects.create(
            rung=rung, number=number, content_hash=f"hash-{number}", title="KV cache", minutes=10, difficulty="easy",
            instructions_md="# KV", starter_code="def f(): ...", reference_code="def f(): return 1", visible_tests="", hidden_tests="",
        )
        for number in (1, 2)
    ]
    lena = User.objects.create(username="lena", password="not-a-real-hash")
    omar = User.objects.create(username="omar", password="not-a-real-hash")
    graded = []
    for n, (user, outcome) in enumerate([(lena, "passed"), (lena, "failed"), (omar, "passed")]):
        submission = Submission.objects.create(
            user=user, rung=rung, rung_version=versions[0], kind="submit", code=f"def f(): return {n}\n", status="done",
            outcome=outcome, message="" if outcome == "passed" else "one hidden test failed", stdout="", stderr="", attempts=1,
            claimed_by="worker@a", timings={"run_s": 1.5}, peak_memory_bytes=64 * 1024 * 1024, channel=f"channel-{n}",
        )
        for order, name in enumerate(["test_shape", "test_bytes"]):
            TestResult.objects.create(submission=submission, order=order, name=name, outcome=outcome, duration_s=0.0,
                                      message="" if outcome == "passed" else "Checks the byte count.", detail="assert 1 == 2", hidden=True)
        graded.append(submission)
    queued = Submission.objects.create(user=omar, rung=rung, rung_version=versions[1], kind="run", code="print(1)\n", status="queued",
                                       channel="channel-queued")
    Progress.objects.create(user=lena, rung=rung, attempts=2, best_outcome="passed")
    Draft.objects.create(user=lena, rung=rung, code="def f(): return 'draft'\n")
    rejudge = Rejudge.objects.create(created_by=None, target="current", note="new hidden test")
    for submission in graded:
        RejudgeResult.objects.create(
            rejudge=rejudge, submission=submission, old_version=versions[0], new_version=versions[1], status="done",
            old_outcome=submission.outcome, new_outcome="failed", old_tests=[{"name": "test_shape", "outcome": submission.outcome}],
            new_tests=[{"name": "test_shape", "outcome": "failed"}],
        )
    return {"graded": [s.pk for s in graded], "queued": queued.pk, "rung": rung.pk, "versions": [v.pk for v in versions],
            "users": [lena.pk, omar.pk], "rejudge": rejudge.pk}


def _counts(apps: Any) -> dict[str, int]:
    models = [("auth", "User"), ("exercises", "RungVersion"), ("grader", "Submission"), ("grader", "SubmissionTestResult"),
              ("grader", "Progress"), ("grader", "Rejudge"), ("grader", "RejudgeResult"), ("frontend", "Draft")]
    return {f"{app}.{name}": apps.get_model(app, name).objects.count() for app, name in models}


def test_an_upgrade_from_the_last_release_keeps_every_row(release_apps):
    before = _populate(release_apps)
    counts = _counts(release_apps)
    apps = _migrate(_head())

    assert _counts(apps) == counts
    Submission = apps.get_model("grader", "Submission")
    for n, pk in enumerate(before["graded"]):
        submission = Submission.objects.get(pk=pk)
        assert (submission.rung_id, submission.rung_version_id, submission.status) == (before["rung"], before["versions"][0], "done")
        assert submission.code == f"def f(): return {n}\n" and submission.channel == f"channel-{n}"
        assert submission.timings == {"run_s": 1.5} and submission.peak_memory_bytes == 64 * 1024 * 1024
        assert submission.seed == 0  # added after the release: rejudges of old submits reuse seed 0
        assert [(r.order, r.name, r.hidden) for r in submission.test_results.order_by("order")] == [
            (0, "test_shape", True), (1, "test_bytes", True)]
    assert Submission.objects.get(pk=before["queued"]).status == "queued"
    results = apps.get_model("grader", "RejudgeResult").objects.filter(rejudge_id=before["rejudge"])
    assert sorted(r.submission_id for r in results) == sorted(before["graded"])
    assert {(r.attempts, r.claimed_by, r.new_outcome) for r in results} == {(0, "", "failed")}
    assert all(r.enqueued_at is not None for r in results)
    progress = apps.get_model("grader", "Progress").objects.get(user_id=before["users"][0])
    assert (progress.attempts, progress.best_outcome) == (2, "passed")
    assert apps.get_model("frontend", "Draft").objects.get(user_id=before["users"][0]).code == "def f(): return 'draft'\n"
    # The dashboards' counts (grader.tallies) were counted from the submissions already there.
    tallies = apps.get_model("grader", "RungTally").objects.filter(rung_id=before["rung"])
    assert dict(tallies.filter(figure="outcome").values_list("key", "count")) == {"passed": 2, "failed": 1}
    assert dict(tallies.filter(figure="failed_test").values_list("key", "count")) == {"test_shape": 1, "test_bytes": 1}
    learners = apps.get_model("grader", "LearnerRungTally").objects.filter(rung_id=before["rung"])
    assert dict(learners.values_list("user_id", "graded_submits")) == dict(zip(before["users"], [2, 1], strict=True))
    assert set(learners.values_list("submits_to_first_pass", flat=True)) == {1}


def test_after_the_upgrade_one_job_per_learner_and_rung_is_still_enforced(release_apps):
    before = _populate(release_apps)
    apps = _migrate(_head())
    Submission = apps.get_model("grader", "Submission")
    queued = Submission.objects.get(pk=before["queued"])
    with pytest.raises(IntegrityError):
        Submission.objects.create(user_id=queued.user_id, rung_id=queued.rung_id, rung_version_id=queued.rung_version_id, kind="run",
                                  code="print(2)\n", status="queued", channel="channel-second")


def test_module_owners_become_editors_and_a_reused_catalog_id_is_left_to_the_first_module(release_apps):
    """Issue 57: Module.owners goes; each owner is an editor (with a "migrated" record) except those an LTI launch made
    (recorded as revoked); a catalog id names one module."""
    User, Track, Module = release_apps.get_model("auth", "User"), release_apps.get_model("exercises", "Track"), release_apps.get_model("exercises", "Module")
    track = Track.objects.create(slug="llm", title="LLM")
    first = Module.objects.create(track=track, slug="serving", title="Serving", external_id="P10.serving.01")
    taker = Module.objects.create(track=track, slug="copycat", title="Copycat", external_id="P10.serving.01")
    blank = Module.objects.create(track=track, slug="no-id", title="No id")
    lena = User.objects.create(username="lena", password="not-a-real-hash")
    omar = User.objects.create(username="omar", password="not-a-real-hash")
    first.owners.add(lena, omar)
    taker.owners.add(omar)
    # An account an LTI Instructor launch made, and the ownership the launch gave it: not carried over.
    launched = User.objects.create(username="lti-ines", password="!")
    # (django-lti's tables are at their latest: the release state names only our apps.)
    registration = LtiRegistration.objects.create(
        name="LMS", issuer="https://lms.example", client_id="c", auth_url="https://lms.example/auth",
        token_url="https://lms.example/token", keyset_url="https://lms.example/jwks")
    LtiUser.objects.create(registration=registration, sub="ines", auth_user_id=launched.pk)
    first.owners.add(launched)

    apps = _migrate(_head())

    roles = apps.get_model("authoring", "ModuleRole").objects
    assert sorted(roles.values_list("module__slug", "user__username", "role")) == [
        ("copycat", "omar", "editor"), ("serving", "lena", "editor"), ("serving", "omar", "editor")]
    events = apps.get_model("authoring", "ModuleRoleEvent").objects
    assert sorted(events.values_list("module__slug", "subject_name", "role", "action", "actor_id")) == [
        ("copycat", "omar", "editor", "migrated", None), ("serving", "lena", "editor", "migrated", None),
        ("serving", "lti-ines", "editor", "revoke", None), ("serving", "omar", "editor", "migrated", None)]
    Module = apps.get_model("exercises", "Module")
    assert dict(Module.objects.values_list("slug", "external_id")) == {"serving": "P10.serving.01", "copycat": "", "no-id": ""}
    assert blank.pk in Module.objects.values_list("pk", flat=True)
    with pytest.raises(IntegrityError):
        Module.objects.filter(slug="copycat").update(external_id="P10.serving.01")


# The last migrations before Submission, RejudgeResult and RungCheck shared grader.models.ClaimedJob (issue 56).
# exercises goes back too: its 0009 (Module.owners removed) needs authoring's 0009, and a later
# migration (0011's Module.explanations) would otherwise stand in the state without its column.
BEFORE_CLAIMED_JOB = [("grader", "0008_submission_machine"), ("authoring", "0006_rungdraft_alternatives_domain"),
                      ("exercises", "0008_rungversion_strength")]
CLAIM = {"status": "running", "claimed_by": "worker@a#1f2e3d", "attempts": 2}


def test_claimed_jobs_keep_their_claims_when_they_share_one_base_model(transactional_db):
    apps = _migrate([node for node in _head() if node[0] not in dict(BEFORE_CLAIMED_JOB)] + BEFORE_CLAIMED_JOB)
    try:
        User = apps.get_model("auth", "User")
        Module = apps.get_model("exercises", "Module")
        Rung, RungVersion = apps.get_model("exercises", "Rung"), apps.get_model("exercises", "RungVersion")
        module = Module.objects.create(track=apps.get_model("exercises", "Track").objects.create(slug="llm", title="LLM"), slug="serving", title="Serving")
        rung = Rung.objects.create(module=module, slug="kv-cache")
        version = RungVersion.objects.create(
            rung=rung, number=1, content_hash="hash-1", title="KV cache", minutes=10, difficulty="easy", instructions_md="# KV",
            starter_code="", reference_code="", visible_tests="", hidden_tests="",
        )
        lena = User.objects.create(username="lena", password="not-a-real-hash")
        times = {"enqueued_at": "2026-11-30T10:00:00Z", "started_at": "2026-11-30T10:00:05Z"}
        submission = apps.get_model("grader", "Submission").objects.create(
            user=lena, rung=rung, rung_version=version, kind="submit", code="x = 1\n", channel="channel-1", **CLAIM, **times
        )
        rejudge = apps.get_model("grader", "Rejudge").objects.create(target="current")
        result = apps.get_model("grader", "RejudgeResult").objects.create(
            rejudge=rejudge, submission=submission, old_version=version, new_version=version, old_outcome="passed", **CLAIM, **times
        )
        draft = apps.get_model("authoring", "RungDraft").objects.create(module=module, slug="kv-cache", title="KV cache")
        check = apps.get_model("authoring", "RungCheck").objects.create(draft=draft, content_hash="c" * 64, files={"reference.py": "x = 1\n"},
                                                                        **CLAIM, **times)
        # Submission.enqueued_at was auto_now_add: the row holds the time it was saved, whatever was passed.
        before = {model: model.objects.filter(pk=pk).values(*CLAIM, "enqueued_at", "started_at", "finished_at").get()
                  for model, pk in [(type(submission), submission.pk), (type(result), result.pk), (type(check), check.pk)]}
    finally:
        apps = _migrate(_head())

    for old_model, row in before.items():
        model = apps.get_model(old_model._meta.app_label, old_model._meta.model_name)
        assert model.objects.values(*CLAIM, "enqueued_at", "started_at", "finished_at").get() == row
    assert apps.get_model("grader", "Submission").objects.get().channel == "channel-1"
    assert apps.get_model("authoring", "RungCheck").objects.get().files == {"reference.py": "x = 1\n"}
    assert apps.get_model("authoring", "RungDraft").objects.get().speed == {}  # added later (issue 60): no speed section

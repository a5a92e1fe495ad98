"""A draft carries a speed section (issue 60): the rung editor holds rung.yaml's speed
section and its two files, checks the section exactly as the loader checks rung.yaml
(each problem names its key), its Check times the reference (one that misses its own
target cannot be published), and Publish keeps the section and files in the new
version. The inputs and the baseline are hidden material: a module's content roles
read them, never course staff or learners."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from authoring import services, transfer
from authoring.models import ModuleRole, RungDraft
from courses.constants import CourseRole, EnrolSource
from courses.membership import enrol
from courses.models import Course
from exercises.exceptions import CatalogError
from exercises.models import Module, Rung, Track
from grader import lifecycle
from sandbox.jobs import Job, JobResult, SpeedFacts
from sandbox.testing import FakeRunner

from .conftest import ADD_RUNG

pytestmark = pytest.mark.django_db

EDITOR = "/author/modules/warm-ups/rungs/add-two/"
SPEED_SECTION = "entry: add\r\nsizes:\r\n  - {n: 1000}\r\nbaseline: naive\r\ntarget: {speedup: 1.5}\r\nbudget_s: 10\r\n"
INPUTS = "def make_inputs(rng, n):\r\n    return [int(rng.integers(n)), int(rng.integers(n))]\r\n"
BASELINE = "def add(a, b):\r\n    total = a\r\n    for _ in range(b):\r\n        total += 1\r\n    return total\r\n"
# The section as the form stores it (the schema's dump), and as the version keeps it.
SECTION = {"entry": "add", "sizes": [{"n": 1000}], "baseline": "naive", "target": {"speedup": 1.5}, "budget_s": 10}
SPEED = {"speed_yaml": SPEED_SECTION, "speed_inputs_code": INPUTS, "speed_baseline_code": BASELINE}


@pytest.fixture
def checks(monkeypatch: Any) -> list[int]:
    """Checks queued after commit, run by the test itself instead of a worker."""
    queued: list[int] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda kind, pk, queue: queued.append(pk))
    return queued


def _timed(verdict: str) -> FakeRunner:
    """Runs the tests in this process; a job with a speed phase gets ``verdict`` for it (2.0x the baseline, or 1.1x)."""
    inner = FakeRunner.in_process()

    def grade(job: Job) -> JobResult:
        result = inner.run(job)
        if not job.speed or result.outcome != "passed":
            return result
        ratio = 2.0 if verdict == "pass" else 1.1
        facts = SpeedFacts(
            verdict, target=float(job.speed["min_ratio"]), ratio=ratio, ci_low=ratio - 0.1, ci_high=ratio + 0.1, confidence=0.998, rounds=10
        )
        return dataclasses.replace(result, speed=facts)

    return FakeRunner(grade)


def _author(client: Any, capture: Any, action: str = "save", **fields: str) -> Any:
    track = Track.objects.create(slug="basics", title="Basics")
    module = {"slug": "warm-ups", "external_id": "P0.warm-ups.01", "title": "Warm-ups", "order": "1", "track": track.pk}
    assert client.post("/author/modules/new", module).status_code == 302
    assert client.post("/author/modules/warm-ups/rungs/new", {"rung-slug": "add-two", "rung-title": "Add two numbers"}).status_code == 302
    with capture(execute=True):
        return client.post(EDITOR, {**ADD_RUNG, "action": action, **fields})


def test_the_editor_saves_the_speed_section_and_its_files_and_shows_them_again(client, instructor, django_capture_on_commit_callbacks):
    client.force_login(instructor)
    assert _author(client, django_capture_on_commit_callbacks, **SPEED).status_code == 302
    draft = RungDraft.objects.get(slug="add-two")
    assert draft.speed["section"] == SECTION
    assert draft.speed["files"] == {"speed_inputs.py": INPUTS.replace("\r\n", "\n"), "baseline.py": BASELINE.replace("\r\n", "\n")}
    files = services.build_draft(draft)  # the loader reads it as it reads a catalog rung
    assert files.speed_payload is not None and files.speed_payload["baseline"] == BASELINE.replace("\r\n", "\n")
    assert files.speed_payload["min_ratio"] == 1.5 and services.draft_state(draft)["problems"] == []
    page = client.get(EDITOR).content.decode()
    assert "total += 1" in page and "rng.integers(n)" in page and "speedup: 1.5" in page
    # A form without the speed fields (a script, an old page) keeps them.
    assert client.post(EDITOR, {**ADD_RUNG, "action": "save"}).status_code == 302
    assert RungDraft.objects.get(pk=draft.pk).speed == draft.speed
    # An emptied section and files: a rung graded on correctness alone again.
    assert (
        client.post(
            EDITOR, {**ADD_RUNG, "action": "save", "speed_yaml": "", "speed_inputs_code": "", "speed_baseline_code": ""}
        ).status_code
        == 302
    )
    assert RungDraft.objects.get(pk=draft.pk).speed == {}


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ("entry: add\nsizes: []\nbaseline: naive\ntarget: {speedup: 1.5}\n", "speed.sizes"),
        ("entry: add\nsizes: [{n: 3}]\nbaseline: naive\ntarget: {speedup: 1.5}\nbudget_s: 500\n", "speed.budget_s"),
        ("entry: add\nsizes: [{n: 3}]\nbaseline: naive\ntarget: {within: 1.25}\n", "speed"),
        ("entry: add\nsizes: [{n: 3}]\nbaseline: slow\ntarget: {speedup: 2}\nrounds: 3\n", "speed.baseline"),
    ],
)
def test_a_bad_speed_section_is_refused_in_the_loaders_words_naming_the_key(
    client, instructor, django_capture_on_commit_callbacks, section, key
):
    client.force_login(instructor)
    response = _author(client, django_capture_on_commit_callbacks, **{**SPEED, "speed_yaml": section})
    assert response.status_code == 200
    error = response.context["form"].errors["speed_yaml"][0]
    assert f"key '{key}': " in error
    # The loader's own words for the same section in rung.yaml (draft_files, as a Check reads it).
    draft = RungDraft.objects.get(slug="add-two")
    files = services.draft_files(draft)
    files["rung.yaml"] += "speed:\n" + "".join(f"  {line}\n" for line in section.splitlines())
    files.update({"speed_inputs.py": INPUTS, "baseline.py": BASELINE})
    with pytest.raises(CatalogError) as loader:
        transfer.read_rung_files(files, "add-two", 1)
    assert error in str(loader.value)


def test_a_missing_speed_file_is_a_problem_next_to_its_field(client, instructor, django_capture_on_commit_callbacks):
    client.force_login(instructor)
    assert _author(client, django_capture_on_commit_callbacks, **{**SPEED, "speed_baseline_code": "  \r\n"}).status_code == 302
    state = services.draft_state(RungDraft.objects.get(slug="add-two"))
    assert [str(problem) for problem in state["problems_by_field"]["speed_baseline_code"]] == ["Baseline: File is missing"]
    assert not state["publishable"]


@pytest.mark.parametrize("verdict", ["fail", "ambiguous"])
def test_a_draft_whose_reference_misses_its_own_speed_target_cannot_be_published(
    client, instructor, checks, settings, django_capture_on_commit_callbacks, verdict
):
    settings.MUTATION_MIN_SCORE = 0.0  # the speed gate alone is under test
    client.force_login(instructor)
    assert _author(client, django_capture_on_commit_callbacks, action="check", **SPEED).status_code == 302
    check = services.run_check(checks[0], runner=_timed(verdict))
    assert check is not None and not check.ok
    facts = {fact["claim"]: fact for fact in check.facts}
    reference = facts["reference reaches the speed target (1.5x the baseline)"]
    assert not reference["ok"] and reference["evidence"].startswith(f"{verdict}: 1.1x the baseline")
    response = client.post(f"{EDITOR}publish", follow=True)
    assert "Not published: the last Check failed" in response.content.decode()
    assert not Rung.objects.filter(slug="add-two").exists()


def test_publish_copies_the_speed_section_and_its_files_into_the_new_version(
    client, instructor, checks, settings, django_capture_on_commit_callbacks
):
    settings.MUTATION_MIN_SCORE = 0.0
    client.force_login(instructor)
    assert _author(client, django_capture_on_commit_callbacks, action="check", **SPEED).status_code == 302
    runner = _timed("pass")
    check = services.run_check(checks[0], runner=runner)
    assert check is not None
    assert check.ok, check.facts
    timed = [job for job in runner.jobs if job.speed]
    assert len(timed) == 3 and all(
        job.speed and "total += 1" in job.speed["baseline"] for job in timed
    )  # the reference and both alternatives
    assert client.post(f"{EDITOR}publish").status_code == 302
    version = Rung.objects.get(slug="add-two").current_version
    assert version is not None
    assert version.speed["section"] == SECTION
    assert version.speed["files"]["baseline.py"] == BASELINE.replace("\r\n", "\n")
    assert version.speed_payload == {
        "entry": "add",
        "generator": INPUTS.replace("\r\n", "\n"),
        "sizes": [{"n": 1000}],
        "baseline": BASELINE.replace("\r\n", "\n"),
        "min_ratio": 1.5,
        "budget_s": 10,
    }
    # The export writes it back whole, and an editor's import of that export changes nothing.
    exported = transfer.export_module(Module.objects.get(slug="warm-ups"))
    assert exported["basics/warm-ups/rungs/01-add-two/baseline.py"] == BASELINE.replace("\r\n", "\n")
    RungDraft.objects.all().delete()
    transfer.import_files(exported, instructor)
    assert not RungDraft.objects.exists()


# --- Hidden material: who reads the inputs and the baseline ------------------------------------

BASELINE_LINE = "out[row, token] = pages[page, token % page_size]"  # batched-kv-gather's baseline.py
INPUTS_LINE = "replace=False)] for n in lengths]"  # its speed_inputs.py
SPEED_RUNG_EDITOR = "/author/modules/inference-and-serving/rungs/batched-kv-gather/"


@pytest.fixture
def world(catalog: Any, django_user_model: Any, instructor: Any, learner: Any) -> dict[str, Any]:
    module = Module.objects.get(slug="inference-and-serving")
    viewer = django_user_model.objects.create_user(username="vera", password="viewer-pass-123")
    ModuleRole.objects.create(module=module, user=viewer, role="viewer")
    ModuleRole.objects.create(module=module, user=instructor, role="editor")
    course = Course.objects.create(slug="serving-course", title="Serving")
    course.modules.add(module)
    people = {"viewer": viewer, "editor": instructor, "learner": learner}
    for role in (CourseRole.OWNER, CourseRole.TEACHER, CourseRole.TA):
        people[role] = django_user_model.objects.create_user(username=f"staff-{role}", password="staff-pass-123")
        enrol(course, people[role], role, EnrolSource.STAFF)
    enrol(course, learner, CourseRole.LEARNER, EnrolSource.LINK)
    services.draft_from_version(module, Rung.objects.get(slug="batched-kv-gather")).save()  # a saved draft too
    return people


def _as(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("who", ["viewer", "editor"])
def test_content_roles_read_the_speed_inputs_and_the_baseline(world, who):
    client = _as(world[who])
    page = client.get(SPEED_RUNG_EDITOR).content.decode()
    assert BASELINE_LINE in page and INPUTS_LINE in page
    assert client.get("/author/modules/inference-and-serving/export.zip").status_code == 200


@pytest.mark.parametrize("who", ["owner", "teacher", "ta", "learner"])
def test_course_staff_and_learners_never_see_the_speed_inputs_or_the_baseline(world, who):
    client = _as(world[who])
    assert client.get(SPEED_RUNG_EDITOR).status_code == 403
    assert client.get("/author/modules/inference-and-serving/export.zip").status_code == 403
    seen = [
        client.get(reverse("rung", args=["batched-kv-gather"])).content.decode(),
        client.get(reverse("rung-reference", args=["batched-kv-gather"])).content.decode(),
        client.get(reverse("module", args=["inference-and-serving"])).content.decode(),
    ]
    for text in seen:
        assert BASELINE_LINE not in text and INPUTS_LINE not in text and "make_inputs" not in text

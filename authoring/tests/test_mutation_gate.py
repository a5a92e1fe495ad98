"""The mutation gate: a Check lists the reference's surviving mutants, Publish
is refused below MUTATION_MIN_SCORE, and an author's equivalent mutants
(with reasons) count out of the score and survive export and import."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from authoring import services, transfer
from authoring.models import RungCheck, RungDraft
from exercises.models import Rung, RungVersion, Track
from grader import lifecycle

from .conftest import ADD_RUNG

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
EDITOR = "/author/modules/warm-ups/rungs/add-two/"
# Every fact holds (the wrong solutions fail these tests), yet a * b passes both: 2 * 2 == 4, 0 * 0 == 0.
WEAK = {
    "hidden_tests": "def test_doubles(solution):\r\n    assert solution.add(2, 2) == 4\r\n\r\n\r\ndef test_zero(solution):\r\n    assert solution.add(0, 0) == 0\r\n",
    "hidden-0-name": "test_doubles",
    "hidden-0-description": "Two equal numbers.",
    "hidden-1-name": "test_zero",
    "hidden-1-description": "Zero and zero.",
    "wrong-0-name": "minus.py",
    "wrong-0-description": "Subtracts.",
    "wrong-0-code": "def add(a, b):\r\n    return a - b\r\n",
    "wrong-1-name": "off_by_one.py",
    "wrong-1-description": "Adds one too many.",
    "wrong-1-code": "def add(a, b):\r\n    return a + b + 1\r\n",
    "wrong-2-name": "hard_coded.py",
    "wrong-2-description": "Returns the visible example's answer.",
    "wrong-2-code": "def add(a, b):\r\n    return 5\r\n",
}


@pytest.fixture
def checks(monkeypatch: Any) -> list[int]:
    """Checks queued after commit, run by the test itself instead of a worker."""
    queued: list[int] = []
    monkeypatch.setattr(lifecycle, "enqueue", lambda kind, pk, queue: queued.append(pk))
    return queued


def _author_weak_rung(client: Any, capture: Any, **overrides: str) -> None:
    track = Track.objects.create(slug="basics", title="Basics")
    module = {"slug": "warm-ups", "external_id": "P0.warm-ups.01", "title": "Warm-ups", "order": "1", "track": track.pk}
    assert client.post("/author/modules/new", module).status_code == 302
    assert client.post("/author/modules/warm-ups/rungs/new", {"rung-slug": "add-two", "rung-title": "Add two numbers"}).status_code == 302
    with capture(execute=True):
        response = client.post(EDITOR, {**ADD_RUNG, **WEAK, "action": "check", **overrides})
    assert response.status_code == 302, response.content.decode()[:3000]


def test_publish_is_refused_below_the_threshold_and_the_check_lists_the_surviving_mutant_as_a_diff(
    client, instructor, checks, in_process_runner, django_capture_on_commit_callbacks, settings
):
    assert settings.MUTATION_MIN_SCORE == 0.9  # the default
    client.force_login(instructor)
    _author_weak_rung(client, django_capture_on_commit_callbacks)
    check = services.run_check(checks[0], runner=in_process_runner)
    assert check is not None
    assert check.ok, check.facts  # every fact holds: only the score stands in the way
    assert (check.mutation["mutants"], check.mutation["killed"], check.mutation["mutation_score"]) == (6, 5, 0.8333)

    page = client.get(EDITOR).content.decode()
    assert 'id="mutation-score" class="badge failed">0.833<' in page
    assert "Surviving mutants (1)" in page
    survivor = re.search(r'data-mutant="(ReplaceBinaryOperator_Add_Mul-[0-9a-f]{8})"', page)
    assert survivor, page
    assert '<span class="removed">-    return a + b</span><span class="added">+    return a * b</span>' in page
    assert re.search(r'id="publish" disabled title="Publishing needs a mutation score of at least 0.9"', page)

    response = client.post(EDITOR + "publish", follow=True)
    assert "Not published: the hidden tests kill too few mutants of the reference: mutation score 0.833, below 0.9" in response.content.decode()
    assert not RungVersion.objects.exists()

    # The threshold is the setting: at 0.8 the same Check publishes.
    settings.MUTATION_MIN_SCORE = 0.8
    assert services.draft_state(RungDraft.objects.get(slug="add-two"))["publishable"]
    response = client.post(EDITOR + "publish", follow=True)
    assert "Published version 1" in response.content.decode()


def test_a_check_from_before_mutation_testing_cannot_publish(instructor) -> None:
    check = RungCheck(status="done", ok=True, mutation={})
    assert "ran before mutation testing existed" in (services.mutation_refusal(check) or "")
    assert services.mutation_refusal(RungCheck(status="done", ok=True, mutation={"mutation_score": 0.9, "surviving": []})) is None


def test_an_equivalent_mutant_marked_in_the_editor_counts_out_and_round_trips_through_export_and_import(
    client, instructor, checks, in_process_runner, django_capture_on_commit_callbacks
):
    client.force_login(instructor)
    _author_weak_rung(client, django_capture_on_commit_callbacks)
    services.run_check(checks[0], runner=in_process_runner)
    survivor = re.search(r'data-mutant="([^"]+)"', client.get(EDITOR).content.decode())
    assert survivor
    mutant_id = survivor.group(1)

    # A mark without a reason is refused with the key named.
    response = client.post(EDITOR, {**ADD_RUNG, **WEAK, "equivalent_mutants_yaml": f"- {{id: {mutant_id}}}\r\n", "action": "save"})
    assert response.status_code == 200 and "mutant 1: key &#x27;reason&#x27;: Field required" in response.content.decode()

    # (Not truly equivalent: a real author would add a test. The gate only counts what is marked.)
    marked = f"- id: {mutant_id}\r\n  reason: 'for the sake of the test: 2 * 2 == 2 + 2'\r\n"
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(EDITOR, {**ADD_RUNG, **WEAK, "equivalent_mutants_yaml": marked, "action": "check"}).status_code == 302
    draft = RungDraft.objects.get(slug="add-two")
    assert draft.equivalent_mutants == [{"id": mutant_id, "reason": "for the sake of the test: 2 * 2 == 2 + 2"}]
    check = services.run_check(checks[-1], runner=in_process_runner)
    assert check is not None and (check.mutation["equivalent"], check.mutation["mutation_score"], check.mutation["surviving"]) == (1, 1.0, [])
    page = client.get(EDITOR).content.decode()
    assert "1 marked equivalent" in page and mutant_id in page  # in the editor's field
    assert "Published version 1" in client.post(EDITOR + "publish", follow=True).content.decode()
    assert RungVersion.objects.get().equivalent_mutants == draft.equivalent_mutants

    exported = client.get("/author/modules/warm-ups/export.zip").content
    rung_yaml = yaml.safe_load(transfer.unzip_files(exported)["basics/warm-ups/rungs/01-add-two/rung.yaml"])
    assert rung_yaml["equivalent_mutants"] == draft.equivalent_mutants
    digest = RungVersion.objects.get().content_hash
    Rung.objects.update(current_version=None)
    Track.objects.all().delete()
    Track.objects.create(slug="basics", title="Basics")
    transfer.import_files(transfer.unzip_files(exported), instructor)
    # An instructor's import lands as a draft: its mark passes the gate again through a Check, then publishes.
    assert RungDraft.objects.get(slug="add-two").equivalent_mutants == draft.equivalent_mutants and not RungVersion.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(EDITOR + "check")
    services.run_check(checks[-1], runner=in_process_runner)
    assert "Published version 1" in client.post(EDITOR + "publish", follow=True).content.decode()
    version = RungVersion.objects.get()
    assert version.equivalent_mutants == draft.equivalent_mutants and version.content_hash == digest
    assert client.get("/author/modules/warm-ups/export.zip").content == exported


def _settings_value(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {key: val for key, val in os.environ.items() if key != "MUTATION_MIN_SCORE"}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}", "SECRET_KEY": "x"})
    if value is not None:
        env["MUTATION_MIN_SCORE"] = value
    code = "from django.conf import settings; print(settings.MUTATION_MIN_SCORE)"
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_threshold_is_read_strictly_from_the_environment() -> None:
    assert _settings_value(None).stdout.strip() == "0.9"
    assert _settings_value("0.95").stdout.strip() == "0.95"
    for bad in ("ninety", "1.5", "-0.1"):
        result = _settings_value(bad)
        assert result.returncode != 0, (bad, result.stdout)
    assert "MUTATION_MIN_SCORE=1.5 is not valid: expected a share between 0 and 1" in _settings_value("1.5").stderr

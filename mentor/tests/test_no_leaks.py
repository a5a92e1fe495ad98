"""Reference solutions, hidden tests and wrong solutions never reach a passage
or an answer, whoever asks."""

from __future__ import annotations

import json
import re

import pytest

from exercises.models import RungVersion
from mentor import search
from mentor.models import Passage

pytestmark = pytest.mark.django_db


def _distinctive_lines(code: str, public: str) -> list[str]:
    """Lines of ``code`` long enough to be distinctive that the public text does not also contain."""
    lines = {line.strip() for line in code.splitlines()}
    return [line for line in lines if len(line) >= 25 and not line.startswith("#") and line not in public]


def _secrets(version: RungVersion) -> list[str]:
    public = version.instructions_md + version.starter_code + version.visible_tests
    found = _distinctive_lines(version.hidden_tests, public) + _distinctive_lines(version.reference_code, public)
    for wrong in version.wrong_solutions.values():
        found += _distinctive_lines(wrong["code"], public)
    return found


def test_no_passage_holds_a_line_of_hidden_tests_references_or_wrong_solutions(module):
    search.ensure_index(module)
    indexed = "\n".join(Passage.objects.filter(module=module).values_list("text", flat=True))
    checked = 0
    for rung in module.rungs.filter(current_version__isnull=False):
        secrets = _secrets(rung.current_version)
        assert secrets, f"{rung.slug}: no distinctive line found to check"
        for line in secrets:
            assert line not in indexed, f"{rung.slug}: {line!r} reached the mentor's index"
            checked += 1
    assert checked > 50


def test_the_hidden_test_names_and_reference_bodies_are_not_searchable(module, learner_client):
    """Ask with the very words of the hidden tests and the reference: nothing of them comes back."""
    for rung in module.rungs.filter(current_version__isnull=False):
        version = rung.current_version
        names = re.findall(r"^def (test_\w+)", version.hidden_tests, re.M)
        reference_line = max(_distinctive_lines(version.reference_code, version.instructions_md + version.starter_code), key=len)
        for probe in [*names[:3], reference_line]:
            response = learner_client.post("/mentor/ask", {"module": module.slug, "rung": rung.slug, "question": probe[:1000]})
            assert response.status_code == 200
            body = json.dumps(response.json())
            assert probe not in body
            for name in names:
                assert name not in body, f"{rung.slug}: hidden test name {name} in an answer"

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
    for wrong in [*version.wrong_solutions.values(), *version.alternatives.values()]:
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


def test_text_the_page_does_not_show_is_not_in_the_mentor_either(module, learner_client):
    """HTML comments (authors' notes to each other) are dropped by the page's sanitiser: the mentor drops them too."""
    rung = module.rungs.get(slug="kv-cache-size")
    version = rung.current_version
    version.instructions_md += "\n\n<!-- note for co-authors: the zebrafish constant is 7919 -->\n\nMore text.\n\n<!--\nzebrafish, over\nthree lines -->\n"
    version.save(update_fields=["instructions_md"])
    module.reference_md += "\n\n<!-- zebrafish in the reference card -->\n"
    module.save(update_fields=["reference_md"])
    search.rebuild_index(module)
    page = learner_client.get(f"/rungs/{rung.slug}/").content.decode()
    assert "zebrafish" not in page and "More text." in page
    assert not Passage.objects.filter(module=module, text__contains="zebrafish").exists()
    answer = learner_client.post("/mentor/ask", {"module": module.slug, "rung": rung.slug, "question": "zebrafish constant"})
    assert answer.status_code == 200 and "zebrafish" not in json.dumps(answer.json())

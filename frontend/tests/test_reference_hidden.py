"""The reference solution and the hidden tests' text reach the learner only after a passing Submit."""

from __future__ import annotations

import json

from exercises.testcode import test_sources
from grader.constants import Kind, Outcome
from grader.models import Progress


def _secrets(version):
    lines = [line.strip() for line in version.reference_code.splitlines() if len(line.strip()) > 25 and line.strip() not in version.starter_code]
    descriptions = [meta["description"] for meta in version.hidden_test_meta.values() if meta.get("description")]
    return lines, descriptions


def test_the_workspace_html_holds_no_reference_before_passing(kv_rung, learner, learner_client, make_submission):
    make_submission(learner, kind=Kind.SUBMIT, outcome=Outcome.FAILED)
    version = kv_rung.current_version
    response = learner_client.get("/rungs/kv-cache-size/")
    page = response.content.decode()
    # The real workspace, not an error page that would hold nothing at all.
    assert response.status_code == 200 and version.title in page and 'id="editor-host"' in page
    lines, descriptions = _secrets(version)
    assert lines and descriptions
    for line in lines:
        assert line not in page
    for description in descriptions:
        assert description not in page
        assert description.replace('"', "&quot;").replace("'", "&#x27;") not in page
    assert learner_client.get("/rungs/kv-cache-size/reference").status_code == 403


def test_history_and_draft_do_not_carry_the_reference(kv_rung, learner_client):
    version = kv_rung.current_version
    lines, _ = _secrets(version)
    learner_client.post("/rungs/kv-cache-size/draft", {"code": version.starter_code})
    history, draft = learner_client.get("/rungs/kv-cache-size/history"), learner_client.get("/rungs/kv-cache-size/draft")
    assert (history.status_code, draft.status_code) == (200, 200)
    assert draft.json()["code"] == version.starter_code  # a real draft came back
    bodies = history.content.decode() + draft.content.decode()
    assert lines and not any(line in bodies for line in lines)


def test_after_a_passing_submit_the_reference_comes_with_your_solution(kv_rung, learner, learner_client, make_submission):
    make_submission(learner, kind=Kind.SUBMIT, code="my_passing = True\n", outcome=Outcome.PASSED)
    Progress.objects.create(user=learner, rung=kv_rung, best_outcome=Outcome.PASSED, solved_at=kv_rung.current_version.created_at)
    data = learner_client.get("/rungs/kv-cache-size/reference").json()
    assert data["reference"] == kv_rung.current_version.reference_code
    assert data["your_solution"] == "my_passing = True\n"
    assert {t["name"] for t in data["hidden_tests"]} == set(kv_rung.current_version.hidden_test_meta)


def _mark_after_solve(version, name):
    version.hidden_test_meta = {**version.hidden_test_meta, name: {**version.hidden_test_meta[name], "visibility": "after_solve"}}
    version.save(update_fields=["hidden_test_meta"])


def _body_lines(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines()[1:] if len(line.strip()) > 20]


def test_a_hidden_test_marked_after_solve_shows_its_code_only_once_solved(kv_rung, learner, learner_client, make_submission):
    version = kv_rung.current_version
    shown, *kept = list(version.hidden_test_meta)
    _mark_after_solve(version, shown)
    sources = test_sources(version.hidden_tests)
    assert _body_lines(sources[shown]), "the test has a body to look for"

    make_submission(learner, kind=Kind.SUBMIT, outcome=Outcome.FAILED)
    page = learner_client.get("/rungs/kv-cache-size/").content.decode()
    assert learner_client.get("/rungs/kv-cache-size/reference").status_code == 403
    assert not any(line in page for line in _body_lines(sources[shown]))

    Progress.objects.create(user=learner, rung=kv_rung, best_outcome=Outcome.PASSED, solved_at=version.created_at)
    data = learner_client.get("/rungs/kv-cache-size/reference").json()
    by_name = {test["name"]: test for test in data["hidden_tests"]}
    assert by_name[shown]["source"] == sources[shown]
    assert sources[shown].lstrip().startswith(("def ", "@", "async def ")) and f"def {shown}(" in sources[shown]
    # The tests left ``hidden`` keep their code to themselves, solved or not.
    assert all("source" not in by_name[name] for name in kept)
    body = json.dumps(data)
    for name in kept:
        assert not any(line in body for line in _body_lines(sources[name]) if line not in sources[shown])


def test_the_shown_source_of_a_test_keeps_its_decorators_and_nothing_around_it() -> None:
    tests = (
        "import pytest\n\nSECRET_INPUT = 12345\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n@pytest.mark.slow\ndef test_one(solution, n):\n    assert solution.f(n)\n\n"
        "async def test_two(solution):\n    assert True\n\nclass TestThree:\n    def test_in_class(self):\n        pass\n"
    )
    sources = test_sources(tests)
    assert sources == {
        "test_one": "@pytest.mark.parametrize('n', [1, 2])\n@pytest.mark.slow\ndef test_one(solution, n):\n    assert solution.f(n)\n",
        "test_two": "async def test_two(solution):\n    assert True\n",
    }
    assert test_sources("def test_x(:\n") == {} and test_sources("\x00") == {}

"""Every refusal a Run or Submit can get is one plain sentence, never Django's
form text (issue 18): an empty editor, code over the real limit (65,536
bytes, counted in UTF-8), bytes that are not text, a stale page, a job in
flight, the rate limit and a full queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from grader import messages
from grader.constants import Kind, Status
from grader.models import Submission

pytestmark = pytest.mark.sqlite_pass

RUN_URL = "/rungs/kv-cache-size/run"
FRAMEWORK_WORDS = ("This field is required", "Ensure this value", "characters", "Invalid request", "Enter a whole number")


def _refused(response, status: int) -> str:
    assert response.status_code == status, response.content
    text = response.json()["error"]
    assert text and not any(words in text for words in FRAMEWORK_WORDS), text
    return str(text)


def test_an_empty_editor_is_refused_with_a_sentence_that_offers_the_starter(kv_rung, learner_client):
    for code in ("", "   \n\n"):
        text = _refused(learner_client.post(RUN_URL, {"code": code, "version": kv_rung.current_version.number}), 400)
        assert text == messages.CODE_EMPTY and "starter" in text
    assert not Submission.objects.exists()


def test_code_over_the_limit_gives_the_real_limit_in_bytes(kv_rung, learner_client, settings):
    assert settings.GRADER_MAX_CODE_BYTES == 65_536
    response = learner_client.post(RUN_URL, {"code": "é" * 32_769, "version": kv_rung.current_version.number})  # 65,538 bytes
    text = _refused(response, 413)
    assert "65,538 bytes" in text and "the limit is 65,536 bytes" in text and response.json()["code"] == "too_large"
    big = learner_client.post(RUN_URL, {"code": "x" * 2_000_000, "version": kv_rung.current_version.number})
    assert "the limit is 65,536 bytes" in _refused(big, 413)


def test_code_of_exactly_the_limit_is_accepted(kv_rung, learner_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        response = learner_client.post(RUN_URL, {"code": "#" * 65_536, "version": kv_rung.current_version.number})
    assert response.status_code == 202


def test_bytes_that_are_not_text_are_refused_in_words(kv_rung, learner_client):
    response = learner_client.post(RUN_URL, b"code=%FF%FE&version=1", content_type="application/x-www-form-urlencoded")
    assert _refused(response, 400) == messages.CODE_NOT_TEXT
    nul = learner_client.post(RUN_URL, {"code": "x = 1\x00", "version": kv_rung.current_version.number})
    assert _refused(nul, 400) == messages.CODE_NOT_TEXT


def test_the_run_the_draft_and_submit_solution_refuse_code_by_one_rule(kv_rung, learner, learner_client):
    from grader.exceptions import CodeRejected
    from grader.services import submit_solution

    too_large, nul = "é" * 32_769, "x = 1\x00"
    for code, reason, status in ((too_large, "too_large", 413), (nul, "not_text", 400)):
        run = learner_client.post(RUN_URL, {"code": code, "version": kv_rung.current_version.number})
        draft = learner_client.post("/rungs/kv-cache-size/draft", {"code": code})
        with pytest.raises(CodeRejected) as refused:
            submit_solution(user=learner, rung=kv_rung, kind=Kind.RUN, code=code)
        sentence = _refused(run, status)
        assert _refused(draft, status) == sentence == str(refused.value)
        assert run.json()["code"] == draft.json()["code"] == refused.value.reason == reason
        assert refused.value.http_status == status
    assert not Submission.objects.exists()


def test_a_page_without_or_behind_the_version_is_told_to_reload(kv_rung, learner_client):
    assert _refused(learner_client.post(RUN_URL, {"code": "x = 1\n"}), 400) == messages.STALE_PAGE
    assert _refused(learner_client.post(RUN_URL, {"code": "x = 1\n", "version": "abc"}), 400) == messages.STALE_PAGE
    behind = learner_client.post(RUN_URL, {"code": "x = 1\n", "version": kv_rung.current_version.number + 1})
    assert _refused(behind, 409) == messages.VERSION_CHANGED


def test_a_job_in_flight_the_rate_limit_and_a_full_queue_each_have_their_sentence(kv_rung, learner, other_learner, learner_client, settings):
    version = kv_rung.current_version
    running = Submission.objects.create(user=learner, rung=kv_rung, rung_version=version, kind=Kind.SUBMIT, code="x = 1\n", status=Status.RUNNING)
    assert _refused(learner_client.post("/rungs/kv-cache-size/submit", {"code": "x = 1\n", "version": version.number}), 409) == messages.IN_FLIGHT
    Submission.objects.filter(pk=running.pk).update(status=Status.DONE, outcome="failed")

    settings.GRADER_RATE_LIMIT_PER_MIN = 1
    assert "too often (at most" in _refused(learner_client.post(RUN_URL, {"code": "x = 1\n", "version": version.number}), 429)
    settings.GRADER_RATE_LIMIT_PER_MIN = 100

    Submission.objects.filter(user=learner).update(enqueued_at=timezone.now() - timedelta(minutes=5))
    settings.GRADER_MAX_QUEUED = 1
    Submission.objects.create(user=other_learner, rung=kv_rung, rung_version=version, kind=Kind.RUN, code="y = 2\n")
    assert "The grader is busy" in _refused(learner_client.post(RUN_URL, {"code": "x = 1\n", "version": version.number}), 503)


def test_a_draft_over_the_limit_is_refused_in_the_same_words(kv_rung, learner_client):
    text = _refused(learner_client.post("/rungs/kv-cache-size/draft", {"code": "x" * 65_537}), 413)
    assert "the limit is 65,536 bytes" in text

"""Checks are bounded (issue 55, finding 5): one in flight per draft, a
finished Check of the same files is reused, and an instructor may have
AUTHORING_MAX_CHECKS_IN_FLIGHT at once; a refusal says why in a sentence
and when to try again (Retry-After)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from authoring import services
from authoring.models import RungCheck, RungDraft
from exercises.models import Module, Rung
from grader.constants import Status

MODULE = "inference-and-serving"
pytestmark = pytest.mark.django_db


def _draft(slug: str) -> RungDraft:
    draft = services.draft_from_version(Module.objects.get(slug=MODULE), Rung.objects.get(slug=slug))
    draft.save()
    return draft


def _check(client: Client, slug: str) -> Any:
    return client.post(f"/author/modules/{MODULE}/rungs/{slug}/check", follow=False)


def _said(client: Client) -> str:
    return client.get(f"/author/modules/{MODULE}/rungs/kv-cache-size/").content.decode()


@pytest.fixture
def author(catalog: Any, admin_user: Any, enqueued: list[Any]) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def test_three_checks_of_an_unchanged_draft_leave_one_in_flight(author: Client, enqueued: list[Any], django_capture_on_commit_callbacks: Any) -> None:
    _draft("kv-cache-size")
    with django_capture_on_commit_callbacks(execute=True):
        answers = [_check(author, "kv-cache-size") for _ in range(3)]
    assert [answer.status_code for answer in answers] == [302] * 3
    assert RungCheck.objects.filter(status__in=(Status.QUEUED, Status.RUNNING)).count() == 1
    assert len(enqueued) == 1


def test_a_changed_draft_waits_for_the_check_in_flight_with_a_sentence_and_retry_after(author: Client, enqueued: list[Any], django_capture_on_commit_callbacks: Any) -> None:
    draft = _draft("kv-cache-size")
    with django_capture_on_commit_callbacks(execute=True):
        assert "Retry-After" not in _check(author, "kv-cache-size")
    draft.instructions_md += "\nOne more sentence.\n"
    draft.save()
    refused = _check(author, "kv-cache-size")
    assert refused.status_code == 302 and int(refused["Retry-After"]) >= 5
    assert "A Check of this draft is still running" in _said(author)
    assert len(enqueued) == 1


def test_a_finished_check_of_the_same_files_is_reused(author: Client, enqueued: list[Any], django_capture_on_commit_callbacks: Any) -> None:
    draft = _draft("kv-cache-size")
    with django_capture_on_commit_callbacks(execute=True):
        _check(author, "kv-cache-size")
    first = RungCheck.objects.get()
    RungCheck.objects.filter(pk=first.pk).update(status=Status.DONE, ok=True, seconds=12.0, facts=[{"claim": "reference passes", "ok": True, "evidence": ""}])
    original = draft.instructions_md
    draft.instructions_md += "\nA change.\n"
    draft.save()
    with django_capture_on_commit_callbacks(execute=True):
        _check(author, "kv-cache-size")  # other files: a new Check
    assert len(enqueued) == 2
    RungCheck.objects.exclude(pk=first.pk).update(status=Status.DONE, ok=False)
    draft.instructions_md = original
    draft.save()
    with django_capture_on_commit_callbacks(execute=True):
        _check(author, "kv-cache-size")  # back to the first files: its result again, nothing enqueued
    assert len(enqueued) == 2
    latest = draft.checks.first()
    assert latest is not None and latest.pk not in (first.pk,) and latest.ok and latest.status == Status.DONE
    assert latest.facts == [{"claim": "reference passes", "ok": True, "evidence": ""}]
    assert services.draft_state(draft)["check_fresh"]
    assert "This content was checked already" in _said(author)


def test_an_instructor_may_have_one_check_in_flight(author: Client, enqueued: list[Any], django_capture_on_commit_callbacks: Any, settings: Any) -> None:
    assert settings.AUTHORING_MAX_CHECKS_IN_FLIGHT == 1
    _draft("kv-cache-size")
    _draft("quantization-arithmetic")
    with django_capture_on_commit_callbacks(execute=True):
        _check(author, "kv-cache-size")
        refused = _check(author, "quantization-arithmetic")
    assert int(refused["Retry-After"]) >= 5
    assert len(enqueued) == 1
    page = author.get(f"/author/modules/{MODULE}/rungs/quantization-arithmetic/").content.decode()
    assert "the most one instructor may have at once (1)" in page


def test_every_file_of_the_draft_counts_for_the_reuse_whatever_its_kind() -> None:
    files = {"rung.yaml": "title: x\n", "reference.py": "x = 1\n", "alternatives/a.py": "x = 1\n"}
    assert services.files_digest(files) != services.files_digest({**files, "alternatives/a.py": "x = 2\n"})
    assert services.files_digest(files) != services.files_digest({**files, "anything-new/b.py": ""})
    assert services.files_digest(files) == services.files_digest(dict(reversed(files.items())))

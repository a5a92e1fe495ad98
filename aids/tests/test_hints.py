"""Hints: revealed one at a time and in order, counted once, never graded."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from aids import messages, services
from aids.models import HintReveal
from grader.models import Progress, Submission

pytestmark = pytest.mark.django_db


def _reveal(client, rung, number):
    return client.post(f"/aids/rungs/{rung.slug}/hints/reveal", {"number": number})


def test_every_shipped_rung_has_two_or_three_hints(catalog):
    from exercises.models import Rung, RungVersion

    current = RungVersion.objects.filter(pk__in=Rung.objects.values("current_version")).select_related("rung")
    counts = {version.rung.slug: len(version.hints) for version in current}
    assert len(counts) == Rung.objects.count() >= 11 and all(2 <= count <= 3 for count in counts.values()), counts


def test_the_workspace_shows_no_hint_text_until_one_is_revealed(kv_rung, learner_client):
    html = learner_client.get(f"/rungs/{kv_rung.slug}/").content.decode()
    assert 'id="reveal-hint"' in html and "Show hint 1 of 3" in html
    for hint in kv_rung.current_version.hints:
        assert hint[:40] not in html


def test_hints_are_revealed_one_at_a_time_as_rendered_markdown(kv_rung, learner_client, learner):
    first = _reveal(learner_client, kv_rung, 1)
    assert first.status_code == 200
    data = first.json()
    assert data["total"] == 3 and [hint["number"] for hint in data["revealed"]] == [1]
    assert data["revealed"][0]["html"].startswith("<p>")
    second = _reveal(learner_client, kv_rung, 2).json()
    assert [hint["number"] for hint in second["revealed"]] == [1, 2]
    assert "<code>" in second["revealed"][1]["html"]  # backticks became code, not raw text
    html = learner_client.get(f"/rungs/{kv_rung.slug}/").content.decode()
    assert "Show hint 3 of 3" in html and html.count('class="hint"') == 2


def test_a_hint_cannot_be_skipped_to(kv_rung, learner_client):
    response = _reveal(learner_client, kv_rung, 3)
    assert response.status_code == 409 and response.json()["error"] == messages.HINT_OUT_OF_ORDER.format(expected=1)
    assert not HintReveal.objects.exists()


def test_a_double_click_counts_once(kv_rung, learner_client, learner):
    for _ in range(3):
        assert _reveal(learner_client, kv_rung, 1).status_code == 200
    assert HintReveal.objects.filter(learner=learner, rung=kv_rung).count() == 1
    assert services.reveal_hint(learner, kv_rung, 1) == 1


def test_a_hint_past_the_last_is_not_found(kv_rung, learner_client):
    for number in (1, 2, 3):
        _reveal(learner_client, kv_rung, number)
    assert _reveal(learner_client, kv_rung, 4).status_code == 404
    assert _reveal(learner_client, kv_rung, 0).status_code == 400


def test_reveals_are_per_learner(kv_rung, learner_client, learner, other_learner):
    _reveal(learner_client, kv_rung, 1)
    assert services.revealed_count(other_learner, kv_rung) == 0
    assert services.revealed_count(learner, kv_rung) == 1


def test_revealing_needs_a_login_and_a_post(kv_rung, learner_client):
    assert _reveal(Client(), kv_rung, 1).status_code == 401
    assert learner_client.get(f"/aids/rungs/{kv_rung.slug}/hints/reveal").status_code == 405


def test_revealing_a_hint_changes_no_grade(kv_rung, learner, learner_client):
    Progress.objects.create(user=learner, rung=kv_rung, attempts=2, best_outcome="failed")
    before = list(Progress.objects.values()), Submission.objects.count()
    for number in (1, 2, 3):
        _reveal(learner_client, kv_rung, number)
    assert (list(Progress.objects.values()), Submission.objects.count()) == before


def test_hint_use_counts_hints_revealed_before_the_first_pass(kv_rung, learner, other_learner, django_user_model):
    third = django_user_model.objects.create_user(username="tara", password="learner-pass-789")
    now = timezone.now()
    # lena: two hints, then passes; omar: passes without hints, then reveals one; tara: one hint, no pass.
    services.reveal_hint(learner, kv_rung, 1)
    services.reveal_hint(learner, kv_rung, 2)
    Progress.objects.create(user=learner, rung=kv_rung, attempts=3, best_outcome="passed", solved_at=now + timedelta(minutes=5))
    Progress.objects.create(user=other_learner, rung=kv_rung, attempts=1, best_outcome="passed", solved_at=now - timedelta(minutes=5))
    services.reveal_hint(other_learner, kv_rung, 1)
    services.reveal_hint(third, kv_rung, 1)
    use = services.hint_use(kv_rung)
    assert use.hints == 3 and use.learners_revealing == 3 and use.solvers == 2
    assert use.reveals_per_hint == [3, 1, 0]
    assert use.before_first_pass == {2: 1, 0: 1}
    assert use.before_first_pass_rows == [(0, 1), (1, 0), (2, 1), (3, 0)]


def test_the_mentor_never_hands_out_a_hint(kv_rung, learner_client):
    """Hints are revealed one at a time; a question to the mentor must not bypass that."""
    from mentor import search
    from mentor.models import Passage

    search.ensure_index(kv_rung.module)
    indexed = "\n".join(Passage.objects.filter(module=kv_rung.module).values_list("text", flat=True))
    for hint in kv_rung.current_version.hints:
        assert hint[:60] not in indexed
    data = learner_client.post("/mentor/ask", {"module": kv_rung.module.slug, "question": kv_rung.current_version.hints[0]}).json()
    assert all(kv_rung.current_version.hints[0][:60] not in passage["text"] for passage in data["passages"])

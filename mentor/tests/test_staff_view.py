from __future__ import annotations

import pytest

from mentor.models import Question
from mentor.text import normalise_question

pytestmark = pytest.mark.django_db


def _ask(user, module, text):
    return Question.objects.create(learner=user, module=module, text=text, normalised_text=normalise_question(text))


def test_a_learner_cannot_see_the_questions_view(module, learner_client):
    assert learner_client.get(f"/mentor/modules/{module.slug}/questions").status_code == 403


def test_an_anonymous_visitor_is_sent_to_log_in(module, client):
    response = client.get(f"/mentor/modules/{module.slug}/questions")
    assert response.status_code == 302 and "/login" in response["Location"]


def test_staff_see_questions_grouped_most_common_first(module, learner, other_learner, admin_user, client):
    _ask(learner, module, "What is GQA?")
    _ask(other_learner, module, "what is gqa")
    _ask(learner, module, "What is GQA")
    _ask(learner, module, "Why the factor 2?")
    client.force_login(admin_user)
    response = client.get(f"/mentor/modules/{module.slug}/questions")
    assert response.status_code == 200
    rows = response.context["rows"]
    assert [(row["normalised_text"], row["count"], row["learners"]) for row in rows] == [("what is gqa", 3, 2), ("why the factor 2", 1, 1)]
    assert response.context["total"] == 4
    html = response.content.decode()
    assert html.index("What is GQA") < html.index("Why the factor 2?")


def test_an_unknown_module_is_a_404_for_staff(admin_user, client, db):
    client.force_login(admin_user)
    assert client.get("/mentor/modules/nope/questions").status_code == 404

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.test import Client, RequestFactory

from mentor import messages
from mentor.models import Question

pytestmark = pytest.mark.django_db


def test_a_question_is_answered_with_the_module_passages(module, learner_client):
    response = learner_client.post("/mentor/ask", {"module": module.slug, "question": "What is copy-on-write in paged attention?"})
    assert response.status_code == 200
    data = response.json()
    assert data["answered_by_model"] is False
    # The module's authored explanation is the answer (issue 59); the passages follow it.
    assert data["answer"].startswith("Reserving one contiguous cache region") and data["answer"].endswith(messages.EXPLANATION_FURTHER)
    assert 1 <= len(data["passages"]) <= 2
    first = data["passages"][0]
    assert set(first) >= {"title", "url", "text"}
    assert first["url"] == "/rungs/paged-attention/"


def test_each_question_is_stored_with_the_passages_shown(module, learner, learner_client):
    rung = module.rungs.get(slug="kv-cache-size")
    data = learner_client.post("/mentor/ask", {"module": module.slug, "rung": rung.slug, "question": "  Why the factor 2?  "}).json()
    learner_client.post("/mentor/ask", {"module": module.slug, "question": "What is the bonus token?"})
    assert Question.objects.count() == 2
    question = Question.objects.get(rung=rung)
    assert question.learner == learner and question.module == module
    assert question.text == "Why the factor 2?"
    assert question.normalised_text == "why the factor 2"
    # Recorded: the explanation that answered (issue 59), then the passages listed under it.
    assert question.passages_shown[0]["key"] == "explain:kv-cache-size"
    assert question.passages_shown[1:] == [{"key": p["key"], "title": p["title"], "url": p["url"]} for p in data["passages"]]
    assert question.answered_by_model is False


def test_asking_needs_a_login(module, client):
    response = client.post("/mentor/ask", {"module": module.slug, "question": "What is GQA?"})
    assert response.status_code == 401
    assert not Question.objects.exists()


def test_asking_needs_the_csrf_token(module, learner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    response = client.post("/mentor/ask", {"module": module.slug, "question": "What is GQA?"})
    assert response.status_code == 403
    assert not Question.objects.exists()


def test_only_post_is_allowed(module, learner_client):
    assert learner_client.get("/mentor/ask", {"module": module.slug, "question": "x"}).status_code == 405


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"question": ""}, 400),
        ({"question": "x" * 1001}, 400),
        ({"module": "no-such-module"}, 404),
        ({"rung": "no-such-rung"}, 404),
    ],
)
def test_bad_questions_are_refused(module, learner_client, fields, status):
    data = {"module": module.slug, "question": "What is GQA?", **fields}
    assert learner_client.post("/mentor/ask", data).status_code == status
    assert not Question.objects.exists()


def test_a_rung_of_another_module_is_refused(module, learner_client):
    from exercises.models import Module

    other = Module.objects.create(track=module.track, slug="other-module", title="Other")
    response = learner_client.post("/mentor/ask", {"module": other.slug, "rung": "kv-cache-size", "question": "What is GQA?"})
    assert response.status_code == 404


def test_a_learner_past_the_hourly_limit_is_asked_to_wait(module, learner_client, settings):
    settings.MENTOR_MAX_QUESTIONS_PER_HOUR = 2
    for _ in range(2):
        assert learner_client.post("/mentor/ask", {"module": module.slug, "question": "What is GQA?"}).status_code == 200
    response = learner_client.post("/mentor/ask", {"module": module.slug, "question": "What is GQA?"})
    assert response.status_code == 429
    assert response.json()["error"] == messages.TOO_MANY_QUESTIONS
    assert Question.objects.count() == 2


def test_questions_sent_at_once_keep_the_hourly_limit(module, learner, settings, with_model, all_at_once):
    settings.MENTOR_MAX_QUESTIONS_PER_HOUR = 2

    def ask(_: int) -> int:
        client = Client()
        client.force_login(learner)
        return client.post("/mentor/ask", {"module": module.slug, "question": "What is the KV cache?"}).status_code

    statuses = all_at_once(8, ask)
    assert sorted(statuses) == [200, 200] + [429] * 6
    assert Question.objects.filter(learner=learner).count() == 2
    assert len(with_model.requests) == 2  # the model was asked twice, not eight times


@pytest.mark.parametrize(
    ("slug", "question"),
    [
        ("inference-and-serving", "How much memory do the weights of a " + "9" * 320 + "B model need in fp16?"),
        ("inference-and-serving", "KV cache of Llama-3-70B at " + "9" * 320 + " tokens, batch 1, fp16?"),
        ("training-at-scale", "ZeRO stage 3 training memory for a " + "9" * 320 + "B model on 8 GPUs"),
    ],
)
def test_a_count_too_large_for_any_model_is_asked_for_again_not_a_500(learner_client, catalog, slug, question):
    response = learner_client.post("/mentor/ask", {"module": slug, "question": question})
    assert response.status_code == 200
    assert "below 1,000,000,000,000,000" in response.json()["calculation"]["markdown"]


def test_the_ask_box_renders_a_form_for_the_module_and_rung(module, learner):
    request = RequestFactory().get("/")
    request.user = learner
    rung = module.rungs.get(slug="kv-cache-size")
    html = render_to_string("mentor/ask_box.html", {"module": module, "rung": rung, "user": learner}, request=request)
    assert 'action="/mentor/ask"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert f'name="module" value="{module.slug}"' in html
    assert 'name="rung" value="kv-cache-size"' in html
    assert 'aria-live="polite"' in html
    assert "mentor/ask.js" in html


def test_the_ask_box_asks_an_anonymous_visitor_to_log_in(module):
    from django.contrib.auth.models import AnonymousUser

    request = RequestFactory().get("/modules/inference-and-serving/")
    request.user = AnonymousUser()
    html = render_to_string("mentor/ask_box.html", {"module": module, "user": request.user}, request=request)
    assert "<form" not in html and "Log in</a> to ask the mentor" in html

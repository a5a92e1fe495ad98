"""The generated path, against a local server speaking the OpenAI
chat-completions protocol: streamed and whole answers, and its failures."""

from __future__ import annotations

import json
import socket

import pytest

from mentor import messages
from mentor.models import Question

from .conftest import ANSWER_PIECES

pytestmark = pytest.mark.django_db

QUESTION = "Why is decoding limited by memory bandwidth?"


def _ask(client, module, stream=False, **extra):
    url = "/mentor/ask?stream=1" if stream else "/mentor/ask"
    return client.post(url, {"module": module.slug, "question": QUESTION, **extra})


def _events(response):
    assert response["Content-Type"] == "application/x-ndjson"
    body = b"".join(response.streaming_content).decode()
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def test_a_whole_answer_comes_from_the_model_given_only_the_passages(module, learner_client, with_model):
    response = _ask(learner_client, module)
    data = response.json()
    assert data["answer"] == "".join(ANSWER_PIECES)
    assert data["answered_by_model"] is True
    assert data["passages"]
    request = with_model.requests[0]
    assert with_model.paths == ["/v1/chat/completions"]
    assert with_model.headers_seen[0]["Authorization"] == "Bearer test-key"
    assert request["model"] == "test-model" and request["stream"] is False
    system, user = request["messages"]
    assert system["role"] == "system" and "ONLY the numbered passages" in system["content"]
    assert f"\"{module.title}\"" in system["content"]
    assert "[1]" in system["content"] and "does not cover" in system["content"]
    assert f"[1] {data['passages'][0]['title']}" in user["content"]
    assert user["content"].endswith(f"Question: {QUESTION}")
    assert Question.objects.get().answered_by_model is True


def test_a_streamed_answer_arrives_in_pieces_after_the_passages(module, learner_client, with_model):
    events = _events(_ask(learner_client, module, stream=True))
    assert events[0]["type"] == "passages" and events[0]["passages"]
    assert [e["text"] for e in events if e["type"] == "delta"] == ANSWER_PIECES
    done = events[-1]
    assert done["type"] == "done" and done["answered_by_model"] is True
    assert done["answer_html"] == "<p>" + "".join(ANSWER_PIECES) + "</p>"
    assert done["label"] == messages.LABEL_MODEL
    assert with_model.requests[0]["stream"] is True
    question = Question.objects.get()
    assert question.answered_by_model is True
    assert [p["key"] for p in question.passages_shown] == [p["key"] for p in events[0]["passages"]]


def test_a_server_error_is_reported_plainly_and_the_passages_still_shown(module, learner_client, with_model):
    with_model.mode = "error"
    data = _ask(learner_client, module).json()
    assert data["answered_by_model"] is False
    assert data["error"] == data["answer"] == messages.MODEL_HTTP_ERROR.format(status=500)
    assert data["passages"]
    assert Question.objects.get().answered_by_model is False


def test_a_server_error_while_streaming_ends_the_stream_with_the_message(module, learner_client, with_model):
    with_model.mode = "error"
    events = _events(_ask(learner_client, module, stream=True))
    assert events[0]["type"] == "passages" and events[0]["passages"]
    assert events[-1] == {"type": "error", "message": messages.MODEL_HTTP_ERROR.format(status=500), "answered_by_model": False}
    assert Question.objects.get().answered_by_model is False


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_reported_plainly(module, learner_client, settings):
    settings.MENTOR_LLM_URL = f"http://127.0.0.1:{_closed_port()}"
    settings.MENTOR_LLM_MODEL = "test-model"
    data = _ask(learner_client, module).json()
    assert data["error"] == messages.MODEL_UNREACHABLE
    assert data["answered_by_model"] is False and data["passages"]
    events = _events(_ask(learner_client, module, stream=True))
    assert events[-1]["type"] == "error" and events[-1]["message"] == messages.MODEL_UNREACHABLE


def test_a_server_that_does_not_answer_in_time_is_reported(module, learner_client, with_model):
    with_model.mode = "slow"
    data = _ask(learner_client, module).json()
    assert data["error"] == messages.MODEL_TIMEOUT and data["passages"]


def test_a_stream_that_stalls_part_way_says_so(module, learner_client, with_model):
    with_model.mode = "break"
    events = _events(_ask(learner_client, module, stream=True))
    assert [e["text"] for e in events if e["type"] == "delta"] == ANSWER_PIECES[:1]
    assert events[-1]["type"] == "error" and events[-1]["message"] == messages.MODEL_STOPPED
    assert Question.objects.get().answered_by_model is False


def test_the_model_is_not_asked_when_no_passage_matches(module, learner_client, with_model):
    data = learner_client.post("/mentor/ask", {"module": module.slug, "question": "zanzibar spice"}).json()
    assert data["answer"] == messages.NO_PASSAGES and data["passages"] == [] and data["answered_by_model"] is False
    assert data["label"] == messages.LABEL_MODULE and data["calculation"] is None
    assert with_model.requests == []


def test_without_a_model_stream_1_answers_with_plain_json(module, learner_client):
    response = _ask(learner_client, module, stream=True)
    assert response["Content-Type"] == "application/json"
    data = response.json()
    # The module's explanation of the question, or its passages: from the module either way.
    assert data["answer"] and data["label"] == messages.LABEL_MODULE and data["answered_by_model"] is False


def test_a_streamed_calculator_answer_sends_the_working_first_and_gives_it_to_the_model(module, learner_client, with_model):
    events = _events(_ask(learner_client, module, stream=True, question="KV cache of Llama-3-70B at 8192 tokens, batch 4, fp16?"))
    first = events[0]
    assert first["type"] == "passages" and first["calculation"]["total_bytes"] == 10_737_418_240
    assert "10,737,418,240 bytes" in first["calculation"]["html"]
    assert events[-1]["type"] == "done" and events[-1]["answered_by_model"] is True
    assert "10,737,418,240 bytes" in with_model.requests[0]["messages"][1]["content"]
    assert Question.objects.get().calculator == "kv_cache"

"""Answers reach the page rendered the way module pages are: Markdown to
sanitised HTML, math left for KaTeX, and calculator working as a list."""

from __future__ import annotations

import re

import pytest

from mentor import messages
from mentor.models import Question

pytestmark = pytest.mark.django_db

KV_QUESTION = "KV cache of Llama-3-70B at 8192 tokens, batch 4, fp16?"


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def _ask(client, module, question):
    response = client.post("/mentor/ask", {"module": module.slug, "question": question})
    assert response.status_code == 200
    return response.json()


def test_a_calculator_question_gets_the_exact_bytes_and_its_working(module, learner_client):
    data = _ask(learner_client, module, KV_QUESTION)
    assert data["label"] == messages.LABEL_MODULE == "From the module"
    calculation = data["calculation"]
    assert calculation["kind"] == "kv_cache" and calculation["total_bytes"] == 10_737_418_240
    html = calculation["html"]
    assert "<ol>" in html and html.count("<li>") == 5
    assert "10,737,418,240 bytes" in _text(html)
    assert "`" not in html and "**" not in html and "$" not in html
    assert 'href="https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json"' in html
    assert Question.objects.get().calculator == "kv_cache"


def test_a_question_missing_a_number_is_told_which(module, learner_client):
    data = _ask(learner_client, module, "KV cache of Llama-3-70B for batch 4?")
    assert data["calculation"]["total_bytes"] is None
    assert "sequence length" in data["calculation"]["html"]


def test_a_table_in_a_passage_arrives_as_a_table_not_pipes(module, learner_client):
    data = _ask(learner_client, module, "How do MHA, GQA and MQA compare in KV heads and cache size?")
    tables = [p for p in data["passages"] if "<table>" in p["html"]]
    assert tables, [p["key"] for p in data["passages"]]
    for passage in data["passages"]:
        text = _text(passage["html"])
        assert "| ---" not in text and "`" not in text and not re.search(r"^\s*\|", text, re.M)


def test_math_in_a_passage_is_left_whole_for_katex(module, learner_client):
    data = _ask(learner_client, module, "Which K/V head does query head h use in grouped-query attention?")
    for passage in data["passages"]:
        # every formula is complete: an even number of $ signs in each excerpt
        assert passage["text"].count("$") % 2 == 0, passage["text"]
        assert "<script" not in passage["html"]


def test_answers_without_arithmetic_have_no_calculation(module, learner_client):
    data = _ask(learner_client, module, "What happens to a request that generates zero output tokens?")  # no explanation covers it
    assert data["calculation"] is None and data["answer_html"] == f"<p>{messages.NO_MODEL_INTRO}</p>"
    assert Question.objects.get().calculator == ""


def test_a_model_is_given_the_calculator_result_to_cite(module, learner_client, with_model):
    data = _ask(learner_client, module, KV_QUESTION)
    assert data["answered_by_model"] is True and data["label"] == messages.LABEL_MODEL
    user = with_model.requests[0]["messages"][1]["content"]
    assert "[C] The platform's calculator" in user and "10,737,418,240 bytes" in user
    assert "[C]" in with_model.requests[0]["messages"][0]["content"]


def test_the_ask_box_has_a_full_width_input_and_an_honest_note(module, learner_client):
    html = learner_client.get(f"/modules/{module.slug}/").content.decode()
    assert 'href="/static/mentor/mentor.css"' in html
    assert "Answers come from this module's own pages" in html


def test_module_02_gets_the_zero_calculator_by_its_id(catalog):
    from exercises.models import Module
    from mentor.calculators.answer import calculate

    kv_module = Module.objects.get(slug="inference-and-serving")
    assert calculate(kv_module, "ZeRO-3 training memory of a 7.5B model on 64 GPUs") is None
    training = Module.objects.get(external_id="P10.llm-systems-frontier.02")  # shipped in the catalog now
    answer = calculate(training, "ZeRO-3 training memory of a 7.5B model on 64 GPUs")
    assert answer is not None and answer.kind == "zero" and answer.total_bytes == 1_875_000_000
    assert calculate(training, "KV cache of Llama-3-70B at 8192 tokens, batch 4, fp16?") is None

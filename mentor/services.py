"""The mentor: answer a learner's question from the module's passages, with a
model when one is configured. Passages are cut in ``passages`` and found in
``search``.

Only text a learner can already read is indexed; reference solutions, hidden
tests and wrong solutions are never read here. Questions are recorded for
the instructors and never affect grading.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Min
from django.utils import timezone

from core.learner_lock import lock_learner
from core.markdown import render_markdown
from core.types import User
from exercises.models import Module, Rung

from . import llm, messages
from .calculators.answer import CalculatorAnswer, calculate
from .constants import (
    CONTEXT_CHARS_PER_PASSAGE,
    PassageKind,
)
from .exceptions import ModelError, QuestionRejected
from .models import Question
from .search import Hit, search
from .text import normalise_question

log = logging.getLogger(__name__)


# --- Asking -------------------------------------------------------------------


@dataclass
class Answer:
    question: Question
    hits: list[Hit]
    text: str
    answered_by_model: bool
    error: str = ""
    passages: list[dict[str, str]] = field(default_factory=list)
    calculation: CalculatorAnswer | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "answer": self.text,
            "answer_html": str(render_markdown(self.text)),
            "label": messages.LABEL_MODEL if self.answered_by_model else messages.LABEL_MODULE,
            "passages": self.passages,
            "answered_by_model": self.answered_by_model,
            "calculation": calculation_json(self.calculation),
        }
        if self.error:
            data["error"] = self.error
        return data


def calculation_json(calculation: CalculatorAnswer | None) -> dict[str, Any] | None:
    """A calculator's answer for the page: its working rendered like the module pages."""
    if calculation is None:
        return None
    return {**calculation.as_json(), "markdown": calculation.markdown, "html": str(render_markdown(calculation.markdown))}


def passages_json(hits: list[Hit]) -> list[dict[str, str]]:
    """The passages shown under an answer, each excerpt also rendered to safe HTML."""
    return [{**hit.as_json(), "html": str(render_markdown(hit.excerpt))} for hit in hits]


def check_rate(user: User) -> None:
    """Refuse a question past the per-learner hourly limit (0 = no limit)."""
    limit = settings.MENTOR_MAX_QUESTIONS_PER_HOUR
    if limit and Question.objects.filter(learner=user, created_at__gte=timezone.now() - timedelta(hours=1)).count() >= limit:
        raise QuestionRejected(messages.TOO_MANY_QUESTIONS, status=429)


def explained(hits: list[Hit]) -> bool:
    """Whether the first hit is an authored explanation: then it is the answer, and the other hits are further reading."""
    return bool(hits) and hits[0].passage.kind == PassageKind.EXPLANATION


def shown_passages(hits: list[Hit]) -> list[Hit]:
    """The passages listed under an answer: all hits but an explanation that is the answer itself."""
    return hits[1:] if explained(hits) else hits


def passages_answer(hits: list[Hit], calculation: CalculatorAnswer | None = None) -> str:
    """The answer given without a model: the calculator's working, then an authored explanation, or the passages speak for themselves."""
    parts = [calculation.markdown] if calculation is not None else []
    if explained(hits):
        parts.append(hits[0].passage.text)
        if len(hits) > 1:
            parts.append(messages.EXPLANATION_FURTHER)
    elif hits:
        parts.append(messages.NO_MODEL_INTRO)
    elif calculation is None:
        parts.append(messages.NO_PASSAGES)
    return "\n\n".join(parts)


def build_chat(module: Module, question: str, hits: list[Hit], calculation: CalculatorAnswer | None = None) -> list[dict[str, str]]:
    """The messages sent to the model: the rules, the numbered passages, the calculator's working, the question."""
    blocks = [f"[{n}] {hit.passage.title}\n{hit.passage.text[:CONTEXT_CHARS_PER_PASSAGE]}" for n, hit in enumerate(hits, start=1)]
    user = "Passages from the module:\n\n" + "\n\n".join(blocks)
    if calculation is not None:
        user += "\n\n[C] The platform's calculator (exact, cite it as [C]):\n" + calculation.markdown
    user += f"\n\nQuestion: {question}"
    return [{"role": "system", "content": messages.SYSTEM_PROMPT.format(module=module.title)}, {"role": "user", "content": user}]


def record_question(*, user: User, module: Module, rung: Rung | None, text: str, hits: list[Hit], calculator: str = "") -> Question:
    return Question.objects.create(
        learner=user,
        module=module,
        rung=rung,
        text=text,
        normalised_text=normalise_question(text),
        calculator=calculator,
        passages_shown=[{"key": hit.passage.key, "title": hit.passage.title, "url": hit.passage.url} for hit in hits],
    )


def _prepare(user: User, module: Module, rung: Rung | None, text: str) -> tuple[Question, list[Hit], CalculatorAnswer | None]:
    # The search and the calculator come before the transaction: it holds the
    # learner's row, and on SQLite the database's one write lock, so only the
    # count and the insert may happen inside (core.write_guard). A question
    # past the limit is refused before any work; the locked count decides.
    check_rate(user)
    hits = search(module, text, rung=rung)
    calculation = calculate(module, text)
    with transaction.atomic():
        # The learner's questions wait for each other from the count to the
        # stored question: ten sent at once were all answered against a limit
        # of two. The model is asked after this, outside the lock.
        lock_learner(user)
        check_rate(user)
        question = record_question(user=user, module=module, rung=rung, text=text, hits=hits, calculator=calculation.kind if calculation else "")
    return question, hits, calculation


def answer_question(*, user: User, module: Module, rung: Rung | None, text: str) -> Answer:
    """Answer ``text`` in one piece: from the model when one is configured, else from the calculator and the passages."""
    question, hits, calculation = _prepare(user, module, rung, text)
    answer = Answer(question, hits, passages_answer(hits, calculation), False, passages=passages_json(shown_passages(hits)), calculation=calculation)
    endpoint = llm.Endpoint.from_settings()
    if endpoint is None or not (hits or calculation):
        return answer
    try:
        answer.text = llm.complete(endpoint, build_chat(module, text, hits, calculation))
    except ModelError as exc:
        log.warning("mentor: model failed: %s", exc.detail or exc.message)
        answer.error = exc.message
        answer.text = exc.message
        return answer
    answer.answered_by_model = True
    answer.passages = passages_json(hits)  # the model cites them all by number, an explanation too
    Question.objects.filter(pk=question.pk).update(answered_by_model=True)
    return answer


def stream_answer(*, user: User, module: Module, rung: Rung | None, text: str) -> Iterator[dict[str, Any]]:
    """Answer ``text`` as a series of events for a streaming response.

    The question is searched and recorded before this returns (so a rate
    limit raises here, not mid-stream); the events then are: ``passages``,
    any number of ``delta`` pieces, and ``done`` or ``error``.
    """
    question, hits, calculation = _prepare(user, module, rung, text)
    endpoint = llm.Endpoint.from_settings()
    # The model cites every hit by number; without one, an explanation is the answer and is not listed again.
    passages = passages_json(hits if endpoint is not None and (hits or calculation) else shown_passages(hits))

    def events() -> Iterator[dict[str, Any]]:
        yield {"type": "passages", "passages": passages, "calculation": calculation_json(calculation)}
        if endpoint is None or not (hits or calculation):
            fallback = passages_answer(hits, calculation)
            yield {"type": "done", "answer": fallback, "answer_html": str(render_markdown(fallback)), "label": messages.LABEL_MODULE, "answered_by_model": False}
            return
        written: list[str] = []
        try:
            for piece in llm.stream(endpoint, build_chat(module, text, hits, calculation)):
                written.append(piece)
                yield {"type": "delta", "text": piece}
        except ModelError as exc:
            log.warning("mentor: model failed while streaming: %s", exc.detail or exc.message)
            yield {"type": "error", "message": exc.message, "answered_by_model": False}
            return
        Question.objects.filter(pk=question.pk).update(answered_by_model=True)
        yield {"type": "done", "answer_html": str(render_markdown("".join(written))), "label": messages.LABEL_MODEL, "answered_by_model": True}

    return events()


# --- For the instructors ---------------------------------------------------------


def common_questions(module: Module, limit: int = 200) -> list[dict[str, Any]]:
    """The module's questions grouped by their normalised text, most asked first."""
    rows = (
        Question.objects.filter(module=module)
        .values("normalised_text")
        .annotate(count=Count("id"), learners=Count("learner", distinct=True), example=Min("text"), last_asked=Max("created_at"))
        .order_by("-count", "-last_asked")[:limit]
    )
    return [dict(row) for row in rows]

"""The mentor: cut a module's teaching text into passages, find the ones that
answer a question (BM25), and answer from them, with a model when one is
configured.

Only text a learner can already read is indexed; reference solutions, hidden
tests and wrong solutions are never read here. Questions are recorded for
the instructors and never affect grading.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Min
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify

from exercises.models import Module, Rung

from . import llm, messages
from .constants import (
    BM25_B,
    BM25_K1,
    CONTEXT_CHARS_PER_PASSAGE,
    EXCERPT_CHARS,
    INDEX_VERSION,
    TITLE_REPEAT,
    TOP_K,
    PassageKind,
)
from .exceptions import ModelError, QuestionRejected
from .models import ModuleIndex, Passage, Question
from .text import normalise_question, query_terms, terms

log = logging.getLogger(__name__)

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_MARKDOWN_NOISE = re.compile(r"^#{1,6}[ \t]+|\*\*|__", re.M)


# --- Cutting the module into passages --------------------------------------


@dataclass(frozen=True)
class PassageDraft:
    key: str
    kind: str
    title: str
    url: str
    text: str
    rung: Rung | None = None


def reference_anchor(heading: str) -> str:
    """The id the module page gives a quick-reference block: ``ref-<slug of its heading>``."""
    return f"ref-{slugify(heading)}"


def split_sections(markdown: str, levels: tuple[int, ...]) -> list[tuple[str | None, str]]:
    """``markdown`` cut at headings of the given levels: (heading or None for the text before the first, body).

    Fenced code is never cut, so a ``## comment`` inside a code block stays text.
    """
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    fence: str | None = None
    for line in markdown.splitlines():
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            fence = marker if fence is None else (None if marker == fence else fence)
        elif fence is None:
            heading = _HEADING.match(line)
            if heading and len(heading.group(1)) in levels:
                sections.append((heading.group(2).strip(), []))
                continue
        sections[-1][1].append(line)
    result: list[tuple[str | None, str]] = []
    for title, lines in sections:
        body = "\n".join(lines).strip()
        if title is not None or body:
            result.append((title, body))
    return result


def _plain(heading: str) -> str:
    return heading.replace("`", "").replace("**", "").strip()


def _unique(key: str, seen: set[str]) -> str:
    candidate, n = key, 2
    while candidate in seen:
        candidate, n = f"{key}-{n}", n + 1
    seen.add(candidate)
    return candidate


def module_passages(module: Module) -> list[PassageDraft]:
    """Every passage of ``module``, in page order. Reads only learner-visible text."""
    module_url = reverse("module", args=[module.slug])
    drafts: list[PassageDraft] = []
    concept = "\n\n".join(part for part in (module.summary, module.concept_md, module.why_it_matters and f"Why it matters: {module.why_it_matters}") if part)
    if concept.strip():
        drafts.append(PassageDraft("concept", PassageKind.CONCEPT, f"{module.title}: the idea", f"{module_url}#concept", concept))
    if module.worked_example_md.strip():
        drafts.append(
            PassageDraft("worked-example", PassageKind.WORKED_EXAMPLE, f"{module.title}: worked example", f"{module_url}#worked-example", module.worked_example_md)
        )
    seen: set[str] = set()
    for heading, body in split_sections(module.reference_md, (2,)):
        if heading is None:
            drafts.append(PassageDraft("ref", PassageKind.REFERENCE, "Quick reference", f"{module_url}#reference", body))
            continue
        slug = _unique(slugify(heading) or "block", seen)
        drafts.append(PassageDraft(f"ref:{slug}", PassageKind.REFERENCE, _plain(heading), f"{module_url}#ref-{slug}", body or heading))
    for n, line in enumerate(module.one_liners, start=1):
        drafts.append(PassageDraft(f"one-liner:{n}", PassageKind.ONE_LINER, "Remember", f"{module_url}#one-liners", str(line)))
    if module.sources:
        lines = []
        for source in module.sources:
            authors = f", {source.get('authors')}" if source.get("authors") else ""
            year = f" ({source.get('year')})" if source.get("year") else ""
            lines.append(f"- {source.get('kind', 'source')}: {source.get('title', '')}{authors}{year}")
        drafts.append(PassageDraft("sources", PassageKind.SOURCES, "Go further: sources", f"{module_url}#sources", "\n".join(lines)))
    rungs = Rung.objects.filter(module=module, current_version__isnull=False).select_related("current_version").order_by("order", "slug")
    for rung in rungs:
        version = rung.current_version
        assert version is not None
        rung_url = reverse("rung", args=[rung.slug])
        seen = set()
        # NOTE: instructions only. reference_code, hidden_tests and
        # wrong_solutions are never read here.
        for heading, body in split_sections(version.instructions_md, (2, 3)):
            if heading is None:
                text = "\n\n".join(part for part in (version.summary, body) if part)
                drafts.append(PassageDraft(f"rung:{rung.slug}", PassageKind.RUNG, version.title, rung_url, text, rung))
                continue
            section = _unique(slugify(heading) or "section", seen)
            drafts.append(
                PassageDraft(f"rung:{rung.slug}:{section}", PassageKind.RUNG, f"{version.title}: {_plain(heading)}", rung_url, body or heading, rung)
            )
    return drafts


def source_hash(module: Module) -> str:
    """A digest of everything the module's passages are cut from."""
    rungs = sorted(
        Rung.objects.filter(module=module, current_version__isnull=False).values_list("slug", "order", "current_version__content_hash")
    )
    payload: list[Any] = [
        INDEX_VERSION,
        module.slug,
        module.title,
        module.summary,
        module.why_it_matters,
        module.concept_md,
        module.worked_example_md,
        module.reference_md,
        module.one_liners,
        module.sources,
        rungs,
    ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _passage_terms(draft: PassageDraft) -> list[str]:
    return terms(draft.title) * TITLE_REPEAT + terms(draft.text)


def _build(module: Module, digest: str) -> int:
    drafts = module_passages(module)
    Passage.objects.filter(module=module).delete()
    rows = []
    for order, draft in enumerate(drafts):
        found = _passage_terms(draft)
        rows.append(
            Passage(
                module=module,
                rung=draft.rung,
                key=draft.key,
                kind=draft.kind,
                title=draft.title[:300],
                url=draft.url,
                text=draft.text,
                terms=" ".join(found),
                length=len(found),
                order=order,
            )
        )
    Passage.objects.bulk_create(rows)
    ModuleIndex.objects.filter(module=module).update(source_hash=digest, built_at=timezone.now(), passages=len(rows))
    return len(rows)


def ensure_index(module: Module) -> None:
    """Rebuild ``module``'s passages when its text changed since the last build.

    Called before every search, so a ``load_exercises`` needs no extra step.
    The row lock makes concurrent first questions build the index once.
    """
    digest = source_hash(module)
    index, _ = ModuleIndex.objects.get_or_create(module=module)
    if index.source_hash == digest:
        return
    with transaction.atomic():
        index = ModuleIndex.objects.select_for_update().get(pk=index.pk)
        if index.source_hash == digest:
            return
        count = _build(module, digest)
    log.info("mentor: indexed %s (%d passages)", module.slug, count)


def rebuild_index(module: Module | None = None) -> dict[str, int]:
    """Rebuild the passages of ``module`` (or of every module) now; {slug: passages}."""
    modules = [module] if module is not None else list(Module.objects.all())
    built = {}
    for each in modules:
        ModuleIndex.objects.get_or_create(module=each)
        with transaction.atomic():
            ModuleIndex.objects.select_for_update().get(module=each)
            built[each.slug] = _build(each, source_hash(each))
    return built


# --- Searching ---------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float
    excerpt: str

    def as_json(self) -> dict[str, str]:
        return {"key": self.passage.key, "title": self.passage.title, "url": self.passage.url, "text": self.excerpt}


def excerpt(text: str, weights: dict[str, float], limit: int = EXCERPT_CHARS) -> str:
    """The paragraph of ``text`` that shares most with the question, and what follows it, cut to ``limit``."""
    paragraphs = [p.strip() for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
    if not paragraphs:
        return ""
    scores = [sum(weights.get(term, 0.0) for term in set(terms(p))) for p in paragraphs]
    best = max(range(len(paragraphs)), key=lambda i: (scores[i], -i))
    chosen = "\n\n".join(paragraphs[best:])
    chosen = _MARKDOWN_NOISE.sub("", chosen).strip()
    if len(chosen) <= limit:
        return chosen
    cut = chosen[:limit].rsplit(None, 1)[0] if " " in chosen[:limit] else chosen[:limit]
    return cut.rstrip(",;:") + " …"


def search(module: Module, question: str, *, limit: int = TOP_K, rung: Rung | None = None) -> list[Hit]:
    """The ``limit`` passages of ``module`` that best answer ``question``, best first (BM25).

    Passages of ``rung`` (the exercise the learner is on) get a small lift.
    """
    ensure_index(module)
    weights = query_terms(question)
    passages = list(Passage.objects.filter(module=module).order_by("order"))
    if not weights or not passages:
        return []
    documents = [passage.terms.split() for passage in passages]
    average_length = sum(len(doc) for doc in documents) / len(documents) or 1.0
    frequency = Counter(term for doc in documents for term in set(doc) if term in weights)
    total = len(documents)
    idf = {term: math.log(1 + (total - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}
    scored: list[tuple[float, int, Passage]] = []
    for passage, doc in zip(passages, documents, strict=True):
        counts = Counter(term for term in doc if term in idf)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / average_length)
        score = sum(weights[term] * idf[term] * count * (BM25_K1 + 1) / (count + norm) for term, count in counts.items())
        if score > 0 and rung is not None and passage.rung_id == rung.pk:
            score *= 1.15
        if score > 0:
            scored.append((score, passage.order, passage))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [Hit(passage, round(score, 4), excerpt(passage.text, weights)) for score, _, passage in scored[:limit]]


# --- Asking -------------------------------------------------------------------


@dataclass
class Answer:
    question: Question
    hits: list[Hit]
    text: str
    answered_by_model: bool
    error: str = ""
    passages: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"answer": self.text, "passages": self.passages, "answered_by_model": self.answered_by_model}
        if self.error:
            data["error"] = self.error
        return data


def check_rate(user: Any) -> None:
    """Refuse a question past the per-learner hourly limit (0 = no limit)."""
    limit = settings.MENTOR_MAX_QUESTIONS_PER_HOUR
    if limit and Question.objects.filter(learner=user, created_at__gte=timezone.now() - timedelta(hours=1)).count() >= limit:
        raise QuestionRejected(messages.TOO_MANY_QUESTIONS, status=429)


def passages_answer(hits: list[Hit]) -> str:
    """The answer given without a model: the passages speak for themselves."""
    return messages.NO_MODEL_INTRO if hits else messages.NO_PASSAGES


def build_chat(module: Module, question: str, hits: list[Hit]) -> list[dict[str, str]]:
    """The messages sent to the model: the rules, the numbered passages, the question."""
    blocks = [f"[{n}] {hit.passage.title}\n{hit.passage.text[:CONTEXT_CHARS_PER_PASSAGE]}" for n, hit in enumerate(hits, start=1)]
    user = "Passages from the module:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}"
    return [{"role": "system", "content": messages.SYSTEM_PROMPT.format(module=module.title)}, {"role": "user", "content": user}]


def record_question(*, user: Any, module: Module, rung: Rung | None, text: str, hits: list[Hit]) -> Question:
    return Question.objects.create(
        learner=user,
        module=module,
        rung=rung,
        text=text,
        normalised_text=normalise_question(text),
        passages_shown=[{"key": hit.passage.key, "title": hit.passage.title, "url": hit.passage.url} for hit in hits],
    )


def _prepare(user: Any, module: Module, rung: Rung | None, text: str) -> tuple[Question, list[Hit]]:
    check_rate(user)
    hits = search(module, text, rung=rung)
    return record_question(user=user, module=module, rung=rung, text=text, hits=hits), hits


def answer_question(*, user: Any, module: Module, rung: Rung | None, text: str) -> Answer:
    """Answer ``text`` in one piece: from the model when one is configured, else from the passages."""
    question, hits = _prepare(user, module, rung, text)
    answer = Answer(question, hits, passages_answer(hits), False, passages=[hit.as_json() for hit in hits])
    endpoint = llm.Endpoint.from_settings()
    if endpoint is None or not hits:
        return answer
    try:
        answer.text = llm.complete(endpoint, build_chat(module, text, hits))
    except ModelError as exc:
        log.warning("mentor: model failed: %s", exc.detail or exc.message)
        answer.error = exc.message
        answer.text = exc.message
        return answer
    answer.answered_by_model = True
    Question.objects.filter(pk=question.pk).update(answered_by_model=True)
    return answer


def stream_answer(*, user: Any, module: Module, rung: Rung | None, text: str) -> Iterator[dict[str, Any]]:
    """Answer ``text`` as a series of events for a streaming response.

    The question is searched and recorded before this returns (so a rate
    limit raises here, not mid-stream); the events then are: ``passages``,
    any number of ``delta`` pieces, and ``done`` or ``error``.
    """
    question, hits = _prepare(user, module, rung, text)
    endpoint = llm.Endpoint.from_settings()
    passages = [hit.as_json() for hit in hits]

    def events() -> Iterator[dict[str, Any]]:
        yield {"type": "passages", "passages": passages}
        if endpoint is None or not hits:
            yield {"type": "done", "answer": passages_answer(hits), "answered_by_model": False}
            return
        try:
            for piece in llm.stream(endpoint, build_chat(module, text, hits)):
                yield {"type": "delta", "text": piece}
        except ModelError as exc:
            log.warning("mentor: model failed while streaming: %s", exc.detail or exc.message)
            yield {"type": "error", "message": exc.message, "answered_by_model": False}
            return
        Question.objects.filter(pk=question.pk).update(answered_by_model=True)
        yield {"type": "done", "answered_by_model": True}

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

"""Finding the passages that answer a question: the per-module index and BM25."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.constants import MARKDOWN_MAX_CHARS
from core.untrusted_patterns import untrusted
from core.write_guard import outside_write_transaction
from exercises.models import Module, Rung

from .constants import (
    BM25_B,
    BM25_K1,
    EXCERPT_CHARS,
    EXCERPT_MAX_CHARS,
    EXPLANATION_FIRST_SHARE,
    TITLE_REPEAT,
    TOP_K,
    PassageKind,
)
from .models import ModuleIndex, Passage
from .passages import PassageDraft, module_passages, source_hash
from .text import query_terms, terms

log = logging.getLogger(__name__)

# Markdown markers stripped from an excerpt (headings, bold).
_MARKDOWN_NOISE = untrusted(r"^#{1,6}[ \t]+|\*\*|__", max_chars=MARKDOWN_MAX_CHARS, reads="an author's passage", flags=re.M)
_PARAGRAPH_BREAK = untrusted(r"\n[ \t]*\n", max_chars=MARKDOWN_MAX_CHARS, reads="an author's passage")
_SENTENCE_END = untrusted(r"[.!?](?=\s)", max_chars=MARKDOWN_MAX_CHARS, reads="an author's passage")


def _passage_terms(draft: PassageDraft) -> list[str]:
    return (terms(draft.title) + terms(draft.search_text)) * TITLE_REPEAT + terms(draft.text)


def _passage_rows(module: Module) -> list[Passage]:
    """The module's passages cut and their terms computed: the slow part, done before any transaction."""
    rows = []
    for order, draft in enumerate(module_passages(module)):
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
    return rows


def _store(module: Module, rows: list[Passage], digest: str) -> int:
    """Replace the module's passages with ``rows``; inside the caller's transaction, writes only."""
    Passage.objects.filter(module=module).delete()
    Passage.objects.bulk_create(rows)
    ModuleIndex.objects.filter(module=module).update(source_hash=digest, built_at=timezone.now(), passages=len(rows))
    return len(rows)


def ensure_index(module: Module) -> None:
    """Rebuild ``module``'s passages when its text changed since the last build.

    Called before every search, so a ``load_exercises`` needs no extra step.
    The passages are cut outside the transaction (core.write_guard); the
    row lock then makes concurrent first questions store them once.
    """
    digest = source_hash(module)
    index, _ = ModuleIndex.objects.get_or_create(module=module)
    if index.source_hash == digest:
        return
    rows = _passage_rows(module)
    with transaction.atomic():
        index = ModuleIndex.objects.select_for_update().get(pk=index.pk)
        if index.source_hash == digest:
            return
        count = _store(module, rows, digest)
    log.info("mentor: indexed %s (%d passages)", module.slug, count)


def rebuild_index(module: Module | None = None) -> dict[str, int]:
    """Rebuild the passages of ``module`` (or of every module) now; {slug: passages}."""
    modules = [module] if module is not None else list(Module.objects.all())
    built = {}
    for each in modules:
        ModuleIndex.objects.get_or_create(module=each)
        digest = source_hash(each)
        rows = _passage_rows(each)
        with transaction.atomic():
            ModuleIndex.objects.select_for_update().get(module=each)
            built[each.slug] = _store(each, rows, digest)
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
    """The paragraph of ``text`` that shares most with the question, and the paragraphs after it up to ``limit``.

    Only whole paragraphs are taken, so a formula, a table or a code block is
    never cut in half (a half formula would show raw ``$`` signs). A single
    paragraph longer than ``EXCERPT_MAX_CHARS`` is cut at its last sentence
    end that leaves no formula or code span open.
    """
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    if not paragraphs:
        return ""
    scores = [sum(weights.get(term, 0.0) for term in set(terms(p))) for p in paragraphs]
    best = max(range(len(paragraphs)), key=lambda i: (scores[i], -i))
    chosen = [paragraphs[best]]
    for paragraph in paragraphs[best + 1 :]:
        if sum(len(p) + 2 for p in chosen) + len(paragraph) > limit:
            break
        chosen.append(paragraph)
    result = _MARKDOWN_NOISE.sub("", "\n\n".join(chosen)).strip()
    if len(result) > EXCERPT_MAX_CHARS:
        result = _cut_outside_spans(result, EXCERPT_MAX_CHARS)
    return result


def _explanation_first(scored: list[tuple[float, int, Passage]]) -> None:
    """Put the best authored explanation first when it scores near the best passage: it is the answer.

    Only the best one: a second explanation, like every other passage, keeps its place by score.
    """
    best = next((i for i, (_, _, passage) in enumerate(scored) if passage.kind == PassageKind.EXPLANATION), None)
    if best and scored[best][0] >= EXPLANATION_FIRST_SHARE * scored[0][0]:
        scored.insert(0, scored.pop(best))


def _cut_outside_spans(text: str, limit: int) -> str:
    """``text`` cut at the last sentence end before ``limit`` where no ``$`` or backtick span is open."""
    for match in reversed(list(_SENTENCE_END.finditer(text[:limit]))):
        head = text[: match.end()]
        if head.count("$") % 2 == 0 and head.count("`") % 2 == 0 and head.count("```") % 2 == 0:
            return head + " …"
    return text


@outside_write_transaction
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
    _explanation_first(scored)
    # An explanation is short and shown whole: it is an answer, not an excerpt.
    return [
        Hit(passage, round(score, 4), passage.text if passage.kind == PassageKind.EXPLANATION else excerpt(passage.text, weights))
        for score, _, passage in scored[:limit]
    ]

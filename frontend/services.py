"""Drafts and learner-facing summaries; views call these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q

from exercises.models import Module, Rung
from grader.models import Progress, Submission

from .models import Draft

HISTORY_PAGE = 10


@dataclass(frozen=True)
class Attempt:
    submission: Submission
    passed: int
    total: int


@dataclass(frozen=True)
class HistoryPage:
    attempts: list[Attempt]
    has_more: bool


def save_draft(*, user: Any, rung: Rung, code: str) -> Draft:
    """Create or replace ``user``'s draft for ``rung`` (size is checked by the form)."""
    draft, _ = Draft.objects.update_or_create(user=user, rung=rung, defaults={"code": code})
    return draft


def opening_code(user: Any, rung: Rung) -> str:
    """What the editor opens with: the draft, else the last attempt, else the starter."""
    draft = Draft.objects.filter(user=user, rung=rung).only("code").first()
    if draft is not None:
        return draft.code
    last = Submission.objects.filter(user=user, rung=rung).only("code").first()
    if last is not None:
        return last.code
    version = rung.current_version
    return version.starter_code if version is not None else ""


def attempt_history(user: Any, rung: Rung, *, page: int = 1) -> HistoryPage:
    """One page of the learner's own Runs and Submits of ``rung``, newest
    first, each with ``passed_count`` and ``test_count`` (its score)."""
    start = (page - 1) * HISTORY_PAGE
    rows = list(
        Submission.objects.filter(user=user, rung=rung)
        .select_related("rung_version")
        .only("id", "kind", "status", "outcome", "code", "channel", "enqueued_at", "rung_version__number")
        .annotate(test_count=Count("test_results"), passed_count=Count("test_results", filter=Q(test_results__outcome="passed")))
        # NOTE: explicit, since a query with aggregates ignores Meta.ordering.
        .order_by("-enqueued_at", "-pk")
        [start : start + HISTORY_PAGE + 1]
    )
    attempts = [Attempt(row, int(getattr(row, "passed_count", 0)), int(getattr(row, "test_count", 0))) for row in rows[:HISTORY_PAGE]]
    return HistoryPage(attempts=attempts, has_more=len(rows) > HISTORY_PAGE)


def next_rung(rung: Rung) -> Rung | None:
    """The next published rung of ``rung``'s module, in ladder order."""
    later = Rung.objects.filter(module_id=rung.module_id, current_version__isnull=False).exclude(pk=rung.pk)
    return later.filter(Q(order__gt=rung.order) | Q(order=rung.order, slug__gt=rung.slug)).order_by("order", "slug").first()


def module_progress(user: Any, modules: list[Module]) -> dict[int, tuple[int, int]]:
    """For each module id: (rungs solved by ``user``, published rungs)."""
    totals: dict[int, int] = {}
    rung_module: dict[int, int] = {}
    for rung_id, module_id in Rung.objects.filter(module__in=modules, current_version__isnull=False).values_list("id", "module_id"):
        totals[module_id] = totals.get(module_id, 0) + 1
        rung_module[rung_id] = module_id
    solved: dict[int, int] = {}
    if user.is_authenticated:
        for rung_id in Progress.objects.filter(user=user, rung_id__in=rung_module, solved_at__isnull=False).values_list("rung_id", flat=True):
            solved[rung_module[rung_id]] = solved.get(rung_module[rung_id], 0) + 1
    return {module.pk: (solved.get(module.pk, 0), totals.get(module.pk, 0)) for module in modules}

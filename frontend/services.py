"""Drafts and learner-facing summaries; views call these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber

from core.types import User, Visitor
from exercises.models import Module, Rung
from exercises.schema import is_web_address
from grader.models import Progress, Submission
from grader.retention import with_test_counts

from .models import Draft

HISTORY_PAGE = 10
# More pages than any learner's attempts fill: a page past it is empty
# without asking the database for an offset it cannot hold (a 500 before).
HISTORY_LAST_PAGE = 1_000_000


@dataclass(frozen=True)
class Attempt:
    submission: Submission
    passed: int
    total: int
    # The learner's own count of attempts at the rung: 1, 2, 3... (ids are global, with gaps).
    number: int = 0


@dataclass(frozen=True)
class HistoryPage:
    attempts: list[Attempt]
    has_more: bool


def save_draft(*, user: User, rung: Rung, code: str) -> Draft:
    """Create or replace ``user``'s draft for ``rung`` (size is checked by the form)."""
    draft, _ = Draft.objects.update_or_create(user=user, rung=rung, defaults={"code": code})
    return draft


def opening_code(user: User, rung: Rung) -> str:
    """What the editor opens with: the draft, else the last attempt, else the starter."""
    draft = Draft.objects.filter(user=user, rung=rung).only("code").first()
    if draft is not None:
        return draft.code
    last = Submission.objects.filter(user=user, rung=rung).only("code").first()
    if last is not None:
        return last.code
    version = rung.current_version
    return version.starter_code if version is not None else ""


def attempt_history(user: User, rung: Rung, *, page: int = 1) -> HistoryPage:
    """One page of the learner's own Runs and Submits of ``rung``, newest
    first, each with ``passed_count`` and ``test_count`` (its score)."""
    if page > HISTORY_LAST_PAGE:
        return HistoryPage(attempts=[], has_more=False)
    start = (page - 1) * HISTORY_PAGE
    rows = list(
        # Counted from the rows, or from an old Run's compacted ones (grader.retention).
        with_test_counts(
            Submission.objects.filter(user=user, rung=rung)
            .select_related("rung_version")
            .only("id", "kind", "status", "outcome", "timings", "code", "channel", "enqueued_at", "rung_version__number")
        )
        # Numbered over all of the learner's attempts at the rung (a window is worked out before the page's LIMIT).
        .annotate(number=Window(RowNumber(), order_by=[F("enqueued_at").asc(), F("pk").asc()]))
        # NOTE: explicit, since a query with aggregates ignores Meta.ordering.
        .order_by("-enqueued_at", "-pk")
        [start : start + HISTORY_PAGE + 1]
    )
    attempts = [
        Attempt(row, int(getattr(row, "passed_count", 0)), int(getattr(row, "test_count", 0)), int(getattr(row, "number", 0)))
        for row in rows[:HISTORY_PAGE]
    ]
    return HistoryPage(attempts=attempts, has_more=len(rows) > HISTORY_PAGE)


def next_rung(rung: Rung) -> Rung | None:
    """The next published rung of ``rung``'s module, in ladder order."""
    later = Rung.objects.filter(module_id=rung.module_id, current_version__isnull=False).exclude(pk=rung.pk)
    # Ladder order is (senior, order, slug): senior rungs come after all the others.
    after = Q(senior=rung.senior) & (Q(order__gt=rung.order) | Q(order=rung.order, slug__gt=rung.slug))
    if not rung.senior:
        after |= Q(senior=True)
    return later.filter(after).order_by("senior", "order", "slug").first()


def module_progress(user: Visitor, modules: list[Module]) -> dict[int, tuple[int, int]]:
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


@dataclass(frozen=True)
class LadderStep:
    """One rung as the module page lists it."""

    rung: Rung
    label: str  # "Rung 2" or "Senior rung"
    state: str  # "solved", "attempted" or "not started"
    regrade: Any = None  # the learner's latest rejudge of this rung, if any

    @property
    def version(self) -> Any:
        return self.rung.current_version


def rung_states(user: Visitor, rungs: list[Rung]) -> dict[int, str]:
    """For each rung id ``user`` has touched: "solved" or "attempted"."""
    if not user.is_authenticated:
        return {}
    states = {}
    for progress in Progress.objects.filter(user=user, rung__in=rungs):
        states[progress.rung_id] = "solved" if progress.solved_at else "attempted"
    attempted = Submission.objects.filter(user=user, rung__in=rungs).values_list("rung_id", flat=True).distinct()
    for rung_id in attempted:
        states.setdefault(rung_id, "attempted")
    return states


def build_ladder(user: Visitor, rungs: list[Rung], regrades: dict[int, Any] | None = None) -> list[LadderStep]:
    """The published rungs in ladder order (senior rungs last), numbered and labelled."""
    ordered = sorted((rung for rung in rungs if rung.current_version is not None), key=lambda rung: (rung.senior, rung.order, rung.slug))
    states = rung_states(user, ordered)
    steps = []
    number = 0
    for rung in ordered:
        if rung.senior:
            label = "Senior rung"
        else:
            number += 1
            label = f"Rung {number}"
        steps.append(LadderStep(rung=rung, label=label, state=states.get(rung.pk, "not started"), regrade=(regrades or {}).get(rung.pk)))
    return steps


def next_step(ladder: list[LadderStep]) -> LadderStep | None:
    """The first rung not solved yet, in ladder order; None when all are."""
    return next((step for step in ladder if step.state != "solved"), None)


def _linkable(source: dict[str, Any]) -> dict[str, Any]:
    """A stored source as the page may link it: a url that is not an http(s)
    address (stored before the catalog refused them) is shown unlinked."""
    shown = dict(source)
    if shown.get("url") and not is_web_address(shown["url"]):
        shown["url"] = None
    return shown


def module_neighbours(module: Module) -> tuple[list[Module], list[dict[str, Any]]]:
    """In one query: the modules after ``module`` in its track, in order, and
    the module's sources, each in-app one with ``target``: the Module it
    names (None when that module is not loaded, so the page shows it unlinked)."""
    ids = [source["module"] for source in module.sources if source.get("module")]
    found = list(Module.objects.filter(Q(track_id=module.track_id) | Q(external_id__in=ids)).order_by("order", "slug"))
    siblings = [other for other in found if other.track_id == module.track_id]
    position = next(i for i, sibling in enumerate(siblings) if sibling.pk == module.pk)
    targets = {other.external_id: other for other in found if other.external_id in ids}
    sources = [dict(source, target=targets.get(source["module"])) if source.get("module") else _linkable(source) for source in module.sources]
    return siblings[position + 1 :], sources


DIFFICULTY_ORDER = ("easy", "medium", "hard")


def module_sizes(modules: list[Module]) -> dict[int, dict[str, Any]]:
    """For each module id: the minutes of its published rungs and the span of
    their difficulties ("easy", "easy to hard"; "" when it has none)."""
    minutes: dict[int, int] = {module.pk: 0 for module in modules}
    levels: dict[int, set[str]] = {module.pk: set() for module in modules}
    published = Rung.objects.filter(module__in=modules, current_version__isnull=False)
    for module_id, rung_minutes, difficulty in published.values_list("module_id", "current_version__minutes", "current_version__difficulty"):
        minutes[module_id] += rung_minutes
        levels[module_id].add(difficulty)
    sizes = {}
    for module_id, found in levels.items():
        ordered = [level for level in DIFFICULTY_ORDER if level in found]
        span = "" if not ordered else ordered[0] if len(ordered) == 1 else f"{ordered[0]} to {ordered[-1]}"
        sizes[module_id] = {"minutes": minutes[module_id], "difficulty": span}
    return sizes

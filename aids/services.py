"""Hints and problem reports: the learner's side and the instructors' side.

Nothing here reads or writes a grade: a hint revealed or a report filed
changes no submission, progress or outcome row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from core.learner_lock import lock_learner
from core.notifications import notify
from core.types import User
from exercises.models import Module, Rung
from grader.models import Progress, Submission

from . import messages
from .constants import REPORT_CODE_MAX_CHARS, REPORT_MESSAGE_MAX_CHARS, REPORT_NOTE_MAX_CHARS, REPORTS_PER_HOUR, ReportStatus
from .exceptions import AidRefused
from .models import HintReveal, ProblemReport

# --- Hints ---------------------------------------------------------------------------


def rung_hints(rung: Rung) -> list[str]:
    """The hints of the rung's current version, in order (Markdown)."""
    version = rung.current_version
    return [str(hint) for hint in (version.hints if version is not None else [])]


def revealed_count(user: User, rung: Rung) -> int:
    """How many of the rung's hints ``user`` has revealed (they are revealed in order)."""
    return min(HintReveal.objects.filter(learner=user, rung=rung).count(), len(rung_hints(rung)))


def reveal_hint(user: User, rung: Rung, number: int) -> int:
    """Reveal hint ``number`` (1-based) to ``user``; returns how many are now revealed.

    Revealing one already revealed changes nothing, so a double click or a
    second tab never counts twice (the unique constraint settles a race).
    Hints are revealed in order: hint n needs hint n - 1.
    """
    hints = rung_hints(rung)
    if not hints:
        raise AidRefused(messages.NO_HINTS, status=404)
    if not 1 <= number <= len(hints):
        raise AidRefused(messages.NO_SUCH_HINT, status=404)
    shown = revealed_count(user, rung)
    if number <= shown:
        return shown
    if number != shown + 1:
        raise AidRefused(messages.HINT_OUT_OF_ORDER.format(expected=shown + 1), status=409)
    try:
        with transaction.atomic():
            HintReveal.objects.create(learner=user, rung=rung, number=number, rung_version=rung.current_version)
    except IntegrityError:
        pass  # the same reveal from another request won the race: it counts once
    return revealed_count(user, rung)


@dataclass(frozen=True)
class HintUse:
    """How a rung's hints are used, for its dashboard."""

    hints: int
    learners_revealing: int
    reveals_per_hint: list[int]
    # Among learners who solved the rung: {hints revealed before the first pass: learners}.
    before_first_pass: dict[int, int]
    solvers: int

    @property
    def solvers_without_hints(self) -> int:
        return self.before_first_pass.get(0, 0)

    @property
    def before_first_pass_rows(self) -> list[tuple[int, int]]:
        return [(count, self.before_first_pass.get(count, 0)) for count in range(self.hints + 1)]


def hint_use(rung: Rung) -> HintUse:
    """Reveals per hint, and how many hints each solver had revealed before their first pass."""
    hints = len(rung_hints(rung))
    reveals = list(HintReveal.objects.filter(rung=rung).values_list("learner_id", "number", "revealed_at"))
    per_hint = Counter(number for _, number, _ in reveals)
    solved = {user_id: solved_at for user_id, solved_at in Progress.objects.filter(rung=rung).values_list("user_id", "solved_at") if solved_at}
    before: Counter[int] = Counter({user_id: 0 for user_id in solved})
    for learner_id, _, revealed_at in reveals:
        if learner_id in solved and revealed_at <= solved[learner_id]:
            before[learner_id] += 1
    distribution = Counter(before[user_id] for user_id in solved)
    return HintUse(
        hints=hints,
        learners_revealing=len({learner_id for learner_id, _, _ in reveals}),
        reveals_per_hint=[per_hint.get(number, 0) for number in range(1, max([hints, *per_hint]) + 1)] if per_hint or hints else [],
        before_first_pass=dict(distribution),
        solvers=len(solved),
    )


# --- Problem reports ---------------------------------------------------------------------


def _clean_text(text: str, limit: int) -> str:
    """A learner's text made safe to store: no NUL, no invalid Unicode, capped."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")[:limit]


def file_report(*, user: User, rung: Rung, message: str, code: str) -> ProblemReport:
    """Record a learner's report on ``rung``, with their editor code and their latest attempt attached."""
    message = _clean_text(message, REPORT_MESSAGE_MAX_CHARS).strip()
    if not message:
        raise AidRefused(messages.REPORT_EMPTY)
    with transaction.atomic():
        lock_learner(user)  # reports sent at once are counted one after another
        if ProblemReport.objects.filter(learner=user, created_at__gte=timezone.now() - timedelta(hours=1)).count() >= REPORTS_PER_HOUR:
            raise AidRefused(messages.TOO_MANY_REPORTS, status=429)
        latest = Submission.objects.filter(user=user, rung=rung).order_by("-enqueued_at", "-pk").first()
        return ProblemReport.objects.create(
            learner=user,
            rung=rung,
            rung_version=rung.current_version,
            submission=latest,
            code=_clean_text(code, REPORT_CODE_MAX_CHARS),
            message=message,
        )


def learner_reports(user: User, rung: Rung) -> QuerySet[ProblemReport]:
    """``user``'s own reports on ``rung``, newest first. Never anyone else's."""
    return ProblemReport.objects.filter(learner=user, rung=rung).select_related("resolved_by")


def report_queue(module: Module, status: str | None = None) -> QuerySet[ProblemReport]:
    """The module's reports, open ones first, newest first (read through the (rung, status) index; page it).

    The queue shows the attempt's kind and outcome only: the report's and the attempt's code and output stay unread.
    """
    reports = (ProblemReport.objects.filter(rung__module=module).select_related("learner", "rung", "submission", "resolved_by")
               .defer("code", "submission__code", "submission__stdout", "submission__stderr", "submission__timings", "submission__machine",
                      "submission__archived_tests"))
    if status in ReportStatus.values:
        reports = reports.filter(status=status)
    return reports.order_by("status", "-created_at", "-pk") if status is None else reports


def open_report_count(module: Module) -> int:
    return ProblemReport.objects.filter(rung__module=module, status=ReportStatus.OPEN).count()


def resolve_report(report: ProblemReport, *, by: Any, note: str) -> None:
    """Mark an open report resolved with a note for the learner.

    A conditional UPDATE: when two instructors resolve the same report at
    once, the second is told, and the first one's note stays. The learner
    is notified with the same commit (one notification per resolve).
    """
    with transaction.atomic():
        changed = ProblemReport.objects.filter(pk=report.pk, status=ReportStatus.OPEN).update(
            status=ReportStatus.RESOLVED, note=_clean_text(note, REPORT_NOTE_MAX_CHARS).strip(), resolved_by=by, resolved_at=timezone.now()
        )
        if changed != 1:
            raise AidRefused(messages.REPORT_ALREADY_RESOLVED, status=409)
        report.refresh_from_db()
        _notify_reply(report)


def _notify_reply(report: ProblemReport) -> None:
    """Tell the learner their report was answered: a notification leads to the rung's report box, open."""
    rung = Rung.objects.select_related("current_version").get(pk=report.rung_id)
    title = rung.current_version.title if rung.current_version is not None else rung.slug
    notify(report.learner, "report_reply", {"rung": title}, reverse("rung", args=[rung.slug]) + "#report-problem")


def reopen_report(report: ProblemReport) -> None:
    """Put a resolved report back in the queue (its note stays until it is resolved again)."""
    changed = ProblemReport.objects.filter(pk=report.pk, status=ReportStatus.RESOLVED).update(status=ReportStatus.OPEN, resolved_at=None)
    if changed != 1:
        raise AidRefused(messages.REPORT_ALREADY_OPEN, status=409)
    report.refresh_from_db()

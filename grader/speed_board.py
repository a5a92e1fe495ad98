"""Speed rungs beyond the verdict: predictions, standings, boards and the dashboard's figures (issue 60, items 7 and 8).

Everything here reads and writes three small tables (``SpeedPrediction``,
``SpeedStanding``, ``BoardName``), never a scan of the submissions: a
standing is one row per learner, rung and machine kind, moved on by a
conditional UPDATE when a measured Submit is recorded, and every board or
figure is an indexed query on one rung's standings, capped in rows.

Names: a learner appears on a public board under the name they chose
(``BoardName``) or as an anonymous learner; their own row says "You". Only a
course's staff see usernames, and only on their own course's board.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.db.models import Count, F, Q, QuerySet

from core.types import User
from exercises.models import Rung, RungVersion

from . import messages
from .constants import Kind, Outcome
from .exceptions import SubmissionRejected
from .models import BoardName, SpeedPrediction, SpeedStanding, Submission

# What a machine kind is called when nothing names it.
MACHINE_UNKNOWN = "unknown machine"
MAX_MACHINE = 120
# Rows a board shows, and machine kinds a page shows boards for.
BOARD_ROWS = 10
BOARD_MACHINES = 3
# Rows a course's staff see: a whole class, within reason.
COURSE_BOARD_ROWS = 300
PredictMode = Literal["optional", "required"]
Names = Literal["public", "roster"]

# The dashboard's bins: measured ratios (times the baseline's speed), and a
# prediction's miss, predicted / measured (below 1: the class underestimates).
RATIO_EDGES = (0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
MISS_EDGES = (1 / 4, 1 / 2, 1 / 1.25, 1.25, 2.0, 4.0)
MISS_WORDS = (
    "measured over 4x faster than predicted",
    "2x to 4x faster than predicted",
    "1.25x to 2x faster than predicted",
    "within 1.25x of the prediction",
    "1.25x to 2x slower than predicted",
    "2x to 4x slower than predicted",
    "over 4x slower than predicted",
)


def machine_kind(machine: dict[str, Any]) -> str:
    """The kind of machine a Submit was measured on: its GPU's name, else the worker's CPU model.

    The CPU model is the worker's own reading (``sandbox.host``), never the
    report's; the GPU's name comes from the harness's process, which learner
    code does not run in. Both are bounded, one-line text already.
    """
    device = machine.get("device")
    if machine.get("gpu") is True and isinstance(device, str) and device:
        return device[:MAX_MACHINE]
    cpu = machine.get("host_cpu")
    if isinstance(cpu, str) and cpu:
        return cpu[:MAX_MACHINE]
    return device[:MAX_MACHINE] if isinstance(device, str) and device else MACHINE_UNKNOWN


def prediction_mode(version: RungVersion | None) -> PredictMode | None:
    """Whether the version's speed section asks for a prediction before Submit ("optional", "required"), else None."""
    section = (version.speed or {}).get("section") if version is not None else None
    mode = section.get("predict") if isinstance(section, dict) else None
    return mode if mode in ("optional", "required") else None


def check_prediction(version: RungVersion, kind: str, prediction: float | None) -> float | None:
    """The prediction a Submit keeps: None where the rung asks for none or it is a Run; refused when required and missing."""
    mode = prediction_mode(version)
    if kind != Kind.SUBMIT or mode is None:
        return None
    if prediction is None:
        if mode == "required":
            raise SubmissionRejected(messages.PREDICTION_REQUIRED)
        return None
    if isinstance(prediction, bool) or not math.isfinite(prediction) or not messages.PREDICTION_MIN <= prediction <= messages.PREDICTION_MAX:
        raise SubmissionRejected(messages.PREDICTION_INVALID)
    return float(prediction)


def record_prediction(submission: Submission, predicted: float | None) -> None:
    """Keep a Submit's prediction (inside the transaction that stores the Submit)."""
    if predicted is not None:
        SpeedPrediction.objects.create(submission=submission, predicted=predicted)


def _measured(timings: dict[str, Any]) -> tuple[str, float] | None:
    """A stored speed record's verdict and ratio (``grader.results.speed_record``), when it measured one."""
    speed = timings.get("speed")
    if not isinstance(speed, dict):
        return None
    ratio, verdict = speed.get("ratio"), speed.get("verdict")
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not math.isfinite(ratio) or ratio <= 0 or not isinstance(verdict, str):
        return None
    return verdict, float(ratio)


def predicted_for(submission: Submission) -> float | None:
    """The speed-up ``submission``'s learner predicted; None without one (one query, on speed rungs only)."""
    if not submission.rung_version.speed:
        return None
    return SpeedPrediction.objects.filter(submission_id=submission.pk).values_list("predicted", flat=True).first()


def with_prediction(submission: Submission, message: str, timings: dict[str, Any]) -> str:
    """``message`` with the learner's prediction beside the ratio measured, when both exist."""
    measured = _measured(timings)
    if measured is None:
        return message
    predicted = predicted_for(submission)
    if predicted is None:
        return message
    return f"{message} {messages.prediction_sentence(predicted, measured[1])}".strip()


def record_standing(submission: Submission, outcome: str, timings: dict[str, Any], machine: dict[str, Any]) -> None:
    """Move the learner's standing on with a graded Submit's measurement (inside the grade's transaction).

    Conditional UPDATEs, so two grades finishing at once each keep the
    better figure: the best ratio of a pass (the board), the best ratio
    measured at all (the distribution), and the first prediction with the
    ratio its Submit measured (how well the class predicts).
    """
    measured = _measured(timings)
    if submission.kind != Kind.SUBMIT or measured is None:
        return
    verdict, ratio = measured
    key = {"user_id": submission.user_id, "rung_id": submission.rung_id, "machine": machine_kind(machine)}
    SpeedStanding.objects.bulk_create([SpeedStanding(**key)], ignore_conflicts=True)
    rows = SpeedStanding.objects.filter(**key)
    rows.filter(Q(measured_ratio__isnull=True) | Q(measured_ratio__lt=ratio)).update(measured_ratio=ratio)
    if verdict == "pass" and outcome == Outcome.PASSED:
        rows.filter(Q(best_ratio__isnull=True) | Q(best_ratio__lt=ratio)).update(
            best_ratio=ratio, best_submission=submission, best_at=submission.enqueued_at
        )
    predicted = predicted_for(submission)
    if predicted is not None:
        rows.filter(predicted__isnull=True).update(predicted=predicted, predicted_measured=ratio)


# ---- Boards ----


@dataclass(frozen=True)
class BoardRow:
    rank: int
    name: str
    ratio: float
    at: datetime | None
    you: bool = False


@dataclass(frozen=True)
class Board:
    machine: str
    rows: list[BoardRow]
    # How many learners are on it, and the viewer's own row when it is below the top rows.
    entries: int
    own: BoardRow | None = None


def _on_board(rung: Rung, machine: str, learners: QuerySet[Any] | None) -> QuerySet[SpeedStanding]:
    rows = SpeedStanding.objects.filter(rung=rung, machine=machine, best_ratio__isnull=False)
    return rows if learners is None else rows.filter(user__in=learners)


def board_machines(rung: Rung, learners: QuerySet[Any] | None = None, viewer: User | None = None) -> dict[str, int | None]:
    """The machine kinds with someone on ``rung``'s board, with their entries: the viewer's own first, then by
    entries (at most BOARD_MACHINES; None: not counted here, the viewer's own outside the busiest)."""
    rows = SpeedStanding.objects.filter(rung=rung, best_ratio__isnull=False)
    if learners is not None:
        rows = rows.filter(user__in=learners)
    counted = rows.values("machine").annotate(entries=Count("pk")).order_by("-entries", "machine")[: BOARD_MACHINES * 4]
    machines: dict[str, int | None] = {str(row["machine"]): int(row["entries"]) for row in counted}
    if viewer is not None:
        mine = rows.filter(user=viewer).order_by("-best_ratio").values_list("machine", flat=True).first()
        if mine is not None:
            machines = {mine: machines.get(mine), **machines}
    return dict(list(machines.items())[:BOARD_MACHINES])


def _name(standing: SpeedStanding, viewer: User | None, names: Names) -> str:
    user = standing.user
    if names == "roster":
        return str(user.get_username())
    if viewer is not None and standing.user_id == viewer.pk:
        return messages.BOARD_YOU
    chosen = getattr(user, "board_name", None)
    return chosen.name if isinstance(chosen, BoardName) else messages.BOARD_ANONYMOUS


def speed_board(
    rung: Rung,
    machine: str,
    *,
    viewer: User | None = None,
    learners: QuerySet[Any] | None = None,
    names: Names = "public",
    size: int = BOARD_ROWS,
    entries: int | None = None,
) -> Board:
    """``rung``'s board on ``machine``: the best ratio of each learner's passing Submits, best first (earlier first on a tie).

    ``learners`` narrows it to some users (a course's learners); ``names``
    is "public" (chosen names, else anonymous; the viewer is "You") or
    "roster" (usernames: a course's staff, on its own board). At most
    ``size`` rows, plus the viewer's own row and rank when below them.
    """
    rows = _on_board(rung, machine, learners)
    top = list(rows.select_related("user__board_name").order_by("-best_ratio", "best_at", "pk")[:size])
    shown = [
        BoardRow(rank=rank, name=_name(standing, viewer, names), ratio=float(standing.best_ratio or 0), at=standing.best_at,
                 you=viewer is not None and standing.user_id == viewer.pk)
        for rank, standing in enumerate(top, start=1)
    ]  # fmt: skip
    own = None
    if viewer is not None and not any(row.you for row in shown):
        mine = rows.filter(user=viewer).first()
        if mine is not None and mine.best_ratio is not None:
            ahead = rows.filter(Q(best_ratio__gt=mine.best_ratio) | Q(best_ratio=mine.best_ratio, best_at__lt=mine.best_at)).count()
            own = BoardRow(rank=ahead + 1, name=messages.BOARD_YOU, ratio=mine.best_ratio, at=mine.best_at, you=True)
    return Board(machine=machine, rows=shown, entries=rows.count() if entries is None else entries, own=own)


def speed_boards(
    rung: Rung, *, viewer: User | None = None, learners: QuerySet[Any] | None = None, names: Names = "public", size: int = BOARD_ROWS
) -> list[Board]:
    """``rung``'s boards, one per machine kind (at most BOARD_MACHINES), ``size`` rows each."""
    return [
        speed_board(rung, machine, viewer=viewer, learners=learners, names=names, size=size, entries=entries)
        for machine, entries in board_machines(rung, learners, viewer if names == "public" else None).items()
    ]


# ---- The learner's name on boards ----


def board_name_of(user: User) -> str:
    """The name ``user`` shows on boards; "" while anonymous."""
    return BoardName.objects.filter(user=user).values_list("name", flat=True).first() or ""


def board_name_taken(user: User, name: str) -> bool:
    """Whether another learner shows ``name`` (or has it as their username): no one may pass for someone else."""
    others_names = BoardName.objects.filter(name__iexact=name).exclude(user=user).exists()
    return others_names or User.objects.filter(username__iexact=name).exclude(pk=user.pk).exists()


def set_board_name(user: User, name: str) -> None:
    """Show ``user`` on boards as ``name`` (validated by the form), or anonymous when ``name`` is ""."""
    if not name:
        BoardName.objects.filter(user=user).delete()
        return
    BoardName.objects.update_or_create(user=user, defaults={"name": name})


# ---- The rung dashboard's figures ----


@dataclass(frozen=True)
class Bin:
    words: str
    learners: int
    share: float


@dataclass(frozen=True)
class SpeedFigures:
    """The rung dashboard's speed section: the distribution of measured ratios, and of predictions' misses."""

    target: float | None
    measured: int
    ratio_bins: list[Bin] = field(default_factory=list)
    predicted: int = 0
    miss_bins: list[Bin] = field(default_factory=list)
    # Learners whose first prediction was within 1.25x of the measurement, as a share of those who predicted.
    within: float | None = None


def _bins(counts: list[int], words: list[str]) -> list[Bin]:
    total = sum(counts)
    return [Bin(words=text, learners=count, share=count / total if total else 0.0) for text, count in zip(words, counts, strict=True)]


def _ratio_words() -> list[str]:
    edges = RATIO_EDGES
    return [f"under {edges[0]:g}x", *(f"{low:g}x to {high:g}x" for low, high in itertools.pairwise(edges)), f"{edges[-1]:g}x or more"]


def speed_figures(rung: Rung) -> SpeedFigures | None:
    """The figures for ``rung``'s dashboard (None for a rung that is not speed-graded): one aggregate query on its standings.

    Each learner counts once per machine kind: their best measured ratio,
    and their first prediction's miss (predicted over measured).
    """
    version = rung.current_version
    if version is None or not version.speed:
        return None
    rows = SpeedStanding.objects.filter(rung=rung)
    counts: dict[str, Any] = {"n_measured": Count("pk", filter=Q(measured_ratio__isnull=False))}
    bounds = [None, *RATIO_EDGES, None]
    for index, (low, high) in enumerate(itertools.pairwise(bounds)):
        condition = Q(measured_ratio__isnull=False)
        condition &= Q(measured_ratio__gte=low) if low is not None else Q()
        condition &= Q(measured_ratio__lt=high) if high is not None else Q()
        counts[f"ratio_{index}"] = Count("pk", filter=condition)
    # predicted / measured in [low, high), without a division: predicted >= low * measured.
    bounds = [None, *MISS_EDGES, None]
    predicted = Q(predicted__isnull=False, predicted_measured__isnull=False)
    counts["n_predicted"] = Count("pk", filter=predicted)
    for index, (low, high) in enumerate(itertools.pairwise(bounds)):
        condition = predicted
        condition &= Q(predicted__gte=F("predicted_measured") * low) if low is not None else Q()
        condition &= Q(predicted__lt=F("predicted_measured") * high) if high is not None else Q()
        counts[f"miss_{index}"] = Count("pk", filter=condition)
    found = rows.aggregate(**counts)
    ratio_bins = _bins([found[f"ratio_{i}"] for i in range(len(RATIO_EDGES) + 1)], _ratio_words())
    miss_bins = _bins([found[f"miss_{i}"] for i in range(len(MISS_EDGES) + 1)], list(MISS_WORDS))
    middle = len(MISS_EDGES) // 2
    target = version.speed.get("min_ratio")
    return SpeedFigures(
        target=float(target) if type(target) in (int, float) else None,
        measured=found["n_measured"],
        ratio_bins=ratio_bins,
        predicted=found["n_predicted"],
        miss_bins=miss_bins,
        within=miss_bins[middle].share if found["n_predicted"] else None,
    )

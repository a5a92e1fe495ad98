"""What a pass counts for in an assignment: on time, late with a penalty, or practice after the close.

Pure functions over an assignment's dates (and a learner's extension): the
gradebook, the workspace and grade passback all decide the same way here.
A pass before the open date counts: the rungs are the shared catalog's,
and solving one early is not a reason to lose it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum

from .constants import LatePolicy
from .models import Assignment, Extension


class Timing(StrEnum):
    ON_TIME = "on_time"
    LATE = "late"
    AFTER_CLOSE = "after_close"  # graded for practice, never counted


@dataclass(frozen=True)
class Deadlines:
    """One learner's deadlines for one assignment (the assignment's, or their extension's)."""

    opens_at: dt.datetime
    due_at: dt.datetime
    # The last moment a pass counts at all: due_at when late work is refused.
    closes_at: dt.datetime
    late_factor: float

    def timing(self, at: dt.datetime) -> Timing:
        if at <= self.due_at:
            return Timing.ON_TIME
        if at <= self.closes_at:
            return Timing.LATE
        return Timing.AFTER_CLOSE

    def credit(self, passed_at: dt.datetime | None) -> float:
        """What the first pass at ``passed_at`` counts for: 1, the late factor, or 0."""
        if passed_at is None:
            return 0.0
        timing = self.timing(passed_at)
        if timing is Timing.ON_TIME:
            return 1.0
        return self.late_factor if timing is Timing.LATE else 0.0


def deadlines_for(assignment: Assignment, extension: Extension | None = None) -> Deadlines:
    """``assignment``'s deadlines, moved by a learner's ``extension`` when they have one."""
    due_at = extension.due_at if extension is not None else assignment.due_at
    if assignment.late_policy == LatePolicy.PENALTY:
        hard = (extension.hard_close_at if extension is not None and extension.hard_close_at else None) or assignment.hard_close_at
        closes_at = max(hard, due_at) if hard is not None else due_at
        factor = assignment.late_factor
    else:
        closes_at, factor = due_at, 0.0
    return Deadlines(opens_at=assignment.opens_at, due_at=due_at, closes_at=closes_at, late_factor=factor)

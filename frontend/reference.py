"""What a learner sees once a rung's reference unlocks (after a passing Submit).

The reference solution, the learner's own passing code beside it, and the
hidden tests: each one's name and description, and the source of those its
author marked ``visibility: after_solve`` in rung.yaml. The source of a
test marked ``hidden`` (the default) never reaches a learner, solved or not.
The caller checks the unlock (``may_see_reference``).
"""

from __future__ import annotations

from typing import Any

from core.types import User
from courses.permissions import teaches_rung
from exercises.constants import TestVisibility
from exercises.models import Rung, RungVersion
from exercises.testcode import test_sources
from grader.constants import Kind, Outcome
from grader.models import Submission
from grader.services import can_see_reference


def may_see_reference(user: User, rung: Rung) -> bool:
    """A learner who passed the rung and site staff (``grader.services.can_see_reference``), and the staff
    of a course that uses it (issue 57): they see what a learner who solved it sees, to teach it."""
    return can_see_reference(user, rung) or teaches_rung(user, rung)


def hidden_tests_once_solved(version: RungVersion) -> list[dict[str, str]]:
    """The hidden tests as a learner who passed sees them, in the author's order."""
    sources = test_sources(version.hidden_tests)
    shown = []
    for name, meta in version.hidden_test_meta.items():
        entry = {"name": name, "description": str(meta.get("description", ""))}
        if meta.get("visibility") == TestVisibility.AFTER_SOLVE and name in sources:
            entry["source"] = sources[name]
        shown.append(entry)
    return shown


def unlocked_reference(user_id: int, rung: Rung) -> dict[str, Any]:
    """The reference panel's data for a learner who may see it."""
    version = rung.current_version
    assert version is not None
    passing = Submission.objects.filter(user_id=user_id, rung=rung, kind=Kind.SUBMIT, outcome=Outcome.PASSED).only("code").first()
    return {
        "reference": version.reference_code,
        "hidden_tests": hidden_tests_once_solved(version),
        "your_solution": passing.code if passing else None,
    }

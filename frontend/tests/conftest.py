from __future__ import annotations

from typing import Any

import pytest

from exercises.models import Rung
from grader.constants import Kind, Outcome, Status
from grader.models import Submission


@pytest.fixture
def make_submission(kv_rung: Rung):
    """A graded submission row, without a worker (the tests here are about who may see it)."""

    def make(user: Any, *, kind: str = Kind.RUN, code: str = "x = 1\n", outcome: str = Outcome.FAILED, status: str = Status.DONE) -> Submission:
        assert kv_rung.current_version is not None
        return Submission.objects.create(
            user=user, rung=kv_rung, rung_version=kv_rung.current_version, kind=kind, code=code, status=status, outcome=outcome if status == Status.DONE else ""
        )

    return make

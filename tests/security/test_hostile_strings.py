"""Bytes from the sandbox that a database refuses: NUL, invalid UTF-8, lone surrogates.

They reach the host in the learner's output and in its exception messages.
The runner cleans every string of a report, so the submission is recorded
(and never stays ``running``).
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from grader.constants import Kind, Status

from .support import REFERENCE, Sandbox, grade_through_the_site

pytestmark = [pytest.mark.docker, pytest.mark.security]

HOSTILE_OUTPUT = REFERENCE + textwrap.dedent(
    """
    import os

    def kv_cache_bytes(*args, **kwargs):
        os.write(1, b"nul:\\x00 bad utf-8:\\xff\\xfe\\xed\\xa0\\x80 end\\n")
        os.write(2, b"\\x00\\x00\\x00")
        raise ValueError("lone \\ud800 surrogate and a nul \\x00 here")
    """
)


def test_hostile_strings_are_stored_clean(sandbox: Sandbox, kv_rung: Any, learner: Any, django_capture_on_commit_callbacks: Any) -> None:
    submission = grade_through_the_site(sandbox, learner, kv_rung, Kind.RUN, HOSTILE_OUTPUT, django_capture_on_commit_callbacks)
    assert submission.status == Status.DONE
    assert submission.outcome == "failed", (submission.outcome, submission.message)
    texts = [submission.message, submission.stdout, submission.stderr]
    texts += [text for row in submission.test_results.all() for text in (row.name, row.message, row.detail)]
    for text in texts:
        assert "\x00" not in text
        text.encode("utf-8")
    assert "nul: bad utf-8:" in submission.stdout
    shown = " ".join(row.message + row.detail for row in submission.test_results.all())
    assert "lone \ufffd surrogate and a nul  here" in shown, shown

"""Signals other apps connect to, so grading never imports them.

``submit_passed`` is sent after the transaction that recorded a passing
Submit has committed (a fresh grade, or a rejudge applied that turned a
Submit into a pass). Receivers get ``submission_id``, ``user_id`` and
``rung_id``. It is sent with ``send_robust`` from a robust on-commit
callback: a receiver that fails is logged and never undoes or fails the
grade. The LTI app posts grades back to the LMS from it.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

log = logging.getLogger(__name__)

submit_passed = Signal()


def _send_submit_passed(submission_id: int, user_id: int, rung_id: int) -> None:
    for receiver, result in submit_passed.send_robust(sender=None, submission_id=submission_id, user_id=user_id, rung_id=rung_id):
        if isinstance(result, Exception):
            log.error("submission %s: a receiver of submit_passed failed (%r): %s", submission_id, receiver, result)


def announce_submit_passed_on_commit(submission_id: int, user_id: int, rung_id: int) -> None:
    """Send ``submit_passed`` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: _send_submit_passed(submission_id, user_id, rung_id), robust=True)

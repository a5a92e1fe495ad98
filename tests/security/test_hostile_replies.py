"""Replies the learner's process writes itself, in a Submit's re-run.

Learner code can reach the socket and the session of its own process and
answer the harness as it likes. The re-run's fresh processes come from a
server without torch when the rung names none (``dojo_harness.lean``): code
can tell them from the first run's by that (docs/security.md lists such
ways), and lie only there. Whatever it sends, the Submit gets the learner's
grade, never ``infra_error``: an error of ours is reported as "the team has
been told" and not retried, so a crash here would let a learner hide a
failing Submit as our failure.
"""

from __future__ import annotations

import textwrap

import pytest

from .support import REFERENCE, Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.security]

# In the re-run's fresh processes only (no torch there), ``_child`` is the
# frame of the learner process's own loop, which holds its socket and session.
IN_THE_RERUN = """
import sys

_child = None
if "tor" + "ch" not in sys.modules:
    _child = sys._getframe()
    while _child is not None and _child.f_code.co_name != "_run_child":
        _child = _child.f_back
"""

# Answer the harness's "load" with an exception description that is not a
# dict (once crashed the harness in ``dict(reply["exc"])``: harness_crashed).
BAD_LOAD_REPLY_IN_THE_RERUN = (
    IN_THE_RERUN
    + """
if _child is not None:
    from dojo_harness.protocol import send_message

    send_message(_child.f_locals["sock"], {"ok": False, "exc": "not the description of an exception"})
"""
)

# Wrong on every hidden test.
WRONG = """
def kv_cache_bytes(config, seq_len, batch_size=1, dtype="fp16"):
    return 0


def max_sequences(gpu_bytes, weight_bytes, config, seq_len, dtype="fp16"):
    return 0
"""

# A handle written as the list of its key-value pairs in the re-run's fresh
# processes: the tape's digest once wrote objects that way too, so the reply
# matched the first run's, and the next call naming the object crashed the
# replay (KeyError: harness_crashed).
BOX = """
class Box:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value
"""
HANDLES_AS_LISTS_IN_THE_RERUN = (
    IN_THE_RERUN
    + """
if _child is not None:
    _session = _child.f_locals["session"]

    def _as_pairs(value, _session=_session):
        handle_id = len(_session.handles) + 1
        _session.handles[handle_id] = value
        return [["__t", "handle"], ["id", handle_id], ["type", type(value).__name__]]

    _session._to_handle = _as_pairs
"""
)
BOX_TESTS = {
    "test_hidden.py": textwrap.dedent(
        """
        def test_a_box_keeps_its_value(solution):
            box = solution.Box(3)
            assert box.get() == 3


        def test_another_box(solution):
            assert solution.Box("x").get() == "x"
        """
    )
}


def test_a_bad_load_reply_in_the_rerun_cannot_hide_a_failed_submit(sandbox: Sandbox) -> None:
    graded = sandbox.attack(WRONG + BAD_LOAD_REPLY_IN_THE_RERUN, mode="submit")
    assert graded.outcome == "failed", graded.describe()
    assert graded.result.error_code == "", graded.describe()
    assert sum(test.outcome == "failed" for test in graded.result.tests) >= 10, graded.describe()


def test_a_bad_load_reply_in_the_rerun_fails_a_right_submit(sandbox: Sandbox) -> None:
    # Right in the first run, but its fresh processes refuse to load: the re-run cannot vouch for it.
    graded = sandbox.attack(REFERENCE + BAD_LOAD_REPLY_IN_THE_RERUN, mode="submit")
    assert graded.outcome not in ("passed", "infra_error"), graded.describe()
    assert graded.result.error_code == "", graded.describe()
    assert graded.result.rerun_failure, graded.describe()


def test_a_handle_sent_as_a_list_in_the_rerun_is_not_the_same_reply(sandbox: Sandbox) -> None:
    # The same code passes when nothing lies: the handles are real in the first run.
    honest = sandbox.grade(BOX, mode="submit", tests=BOX_TESTS)
    assert honest.outcome == "passed", honest.describe()
    graded = sandbox.attack(BOX + HANDLES_AS_LISTS_IN_THE_RERUN, mode="submit", tests=BOX_TESTS)
    assert graded.outcome == "failed", graded.describe()
    assert graded.result.error_code == "", graded.describe()

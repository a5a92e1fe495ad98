"""A timeout says where the code was stuck: while loading (top-level code),
blaming no test, or in a named test (issue 18). Real sandbox."""

from __future__ import annotations

import pytest

from tests.security.support import REFERENCE, Sandbox


@pytest.mark.docker
def test_a_loop_at_the_top_level_is_reported_as_stuck_while_loading(sandbox: Sandbox) -> None:
    graded = sandbox.grade(REFERENCE + "\nwhile True:\n    pass\n", time_s=4, memory_mb=512)
    assert graded.outcome == "timeout", graded.describe()
    # Facts, not sentences: grader.messages words them (grader/tests/test_stopped_early.py).
    assert (graded.result.stopped, graded.result.limit, graded.result.message) == ("loading", 4, ""), graded.describe()
    first = graded.result.tests[0]
    assert first.outcome == "timeout" and first.message == ""


@pytest.mark.docker
def test_a_loop_inside_a_function_blames_the_test_that_called_it(sandbox: Sandbox) -> None:
    looping = REFERENCE + "\n\ndef kv_cache_bytes(*args, **kwargs):\n    while True:\n        pass\n"
    graded = sandbox.grade(looping, time_s=4, memory_mb=512)
    assert graded.outcome == "timeout", graded.describe()
    assert (graded.result.stopped, graded.result.limit, graded.result.message) == ("", 4, ""), graded.describe()
    stuck = [test for test in graded.result.tests if test.outcome == "timeout"]
    assert len(stuck) == 1 and stuck[0].message == ""

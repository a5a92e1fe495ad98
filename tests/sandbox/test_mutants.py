"""The harness's batch mode: many mutants of a reference in one container,
each graded as a Submit; a mutant that loops, hangs or eats memory is killed,
never an infrastructure error, and the rest still get graded in the same
container."""

from __future__ import annotations

import pytest

from sandbox.jobs import Limits
from sandbox.mutants import Mutant, MutantBatch, run_mutants
from sandbox.runner import SandboxRunner

REFERENCE = "def total(n):\n    result = 0\n    for i in range(n):\n        result += i\n    return result\n"
HIDDEN = """\
import random

import grading
import reference


def test_small(solution):
    assert solution.total(4) == 6


def test_zero(solution):
    assert solution.total(0) == 0


def test_matches_the_reference_on_a_seeded_input(solution):
    n = random.Random(grading.job_seed()).randint(5, 50)
    assert solution.total(n) == reference.total(n)
"""
MUTANTS = {
    "survives": REFERENCE.replace("result += i", "result = result + i"),
    "off-by-one": REFERENCE.replace("return result", "return result + 1"),
    "loops-forever": REFERENCE.replace("    return result", "    while n >= 0:\n        result += 1\n    return result"),
    "eats-memory": REFERENCE.replace("    return result", "    hog = []\n    while True:\n        hog.append(bytearray(2**28))"),
    "hangs-on-import": REFERENCE + "\nimport time\ntime.sleep(3600)\n",
    "raises": REFERENCE.replace("return result", "return result // (n - n)"),
    "graded-after-the-hang": REFERENCE.replace("range(n)", "range(n - 1)"),
}


@pytest.mark.docker
def test_a_batch_kills_every_wrong_mutant_and_survives_the_ones_that_hang_or_eat_memory(sandbox_image: str) -> None:
    runner = SandboxRunner(sandbox_image, grace_s=5)
    batch = MutantBatch(
        mutants=[Mutant(mutant_id, source) for mutant_id, source in MUTANTS.items()],
        tests={"test_hidden.py": HIDDEN},
        reference=REFERENCE,
        limits=Limits(time_s=4),
        time_s=4,
        seed=7,
    )
    run = run_mutants(runner, batch)
    assert not run.error, run
    outcomes = {verdict.id: verdict.outcome for verdict in run.verdicts}
    # Out of memory: the OOM killer, or, on an engine that cannot floor the
    # harness's oom_score_adj, a learner stuck reclaiming until the wall clock.
    assert outcomes.pop("eats-memory") in ("memory_limit", "timeout"), run.verdicts
    assert outcomes == {
        "survives": "passed",
        "off-by-one": "failed",
        "loops-forever": "timeout",  # its own CPU limit ended it
        "hangs-on-import": "timeout",  # the wall clock; the launcher then kills it and starts a new server
        "raises": "failed",
        "graded-after-the-hang": "failed",
    }, run.verdicts
    assert [verdict.killed for verdict in run.verdicts].count(False) == 1
    assert "used more than its CPU time limit" in next(v.detail for v in run.verdicts if v.id == "loops-forever")
    # One container for all of them: a hung learner is killed by the launcher, not by a new container.
    assert run.containers == 1, run
    assert all("per-test CPU limits" in note for note in run.notes), run.notes


@pytest.mark.docker  # the image, though no container starts
def test_a_batch_past_its_callers_deadline_stops_and_says_what_it_did_not_grade(sandbox_image: str) -> None:
    import time

    batch = MutantBatch(mutants=[Mutant("a", REFERENCE)], tests={"test_hidden.py": HIDDEN}, reference=REFERENCE, limits=Limits(), time_s=4)
    run = run_mutants(SandboxRunner(sandbox_image), batch, stop_at=time.monotonic() - 1)
    assert run.error == "out of time: 1 of 1 mutants not graded" and run.verdicts == [] and run.containers == 0


@pytest.mark.docker
def test_a_reference_that_fails_its_own_tests_grades_no_mutant_and_says_why(sandbox_image: str) -> None:
    broken = REFERENCE.replace("return result", "return result + 1")
    batch = MutantBatch(mutants=[Mutant("a", REFERENCE)], tests={"test_hidden.py": HIDDEN}, reference=broken, limits=Limits(time_s=4), time_s=4)
    run = run_mutants(SandboxRunner(sandbox_image), batch)
    # Not "every mutant killed": the tests fail whatever the code, so they judge nothing.
    assert run.verdicts == [] and run.containers == 1, run
    assert "the reference itself does not pass here" in run.error and "test_small failed" in run.error, run.error

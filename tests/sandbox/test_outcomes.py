"""What the runner reports when the harness itself cannot: the outer limits."""

from __future__ import annotations

import textwrap
import time

import pytest

from sandbox.jobs import Job, Limits
from sandbox.runner import SandboxRunner
from tests.security.support import REFERENCE, Sandbox, processes_in_container, sandbox_containers


@pytest.mark.docker
def test_a_passing_job_reports_its_phases_and_peak_memory(sandbox: Sandbox) -> None:
    graded = sandbox.grade(REFERENCE)
    assert graded.outcome == "passed", graded.describe()
    timings = graded.result.timings
    assert timings["container_start_s"] < timings["harness_ready_s"] < timings["total_s"]
    assert timings["run_s"] < timings["total_s"] - timings["harness_ready_s"] + 0.5
    assert graded.result.peak_memory_bytes is not None and graded.result.peak_memory_bytes > 10 * 2**20
    assert [kind for kind, _ in graded.events][:2] == ["container", "running"]


@pytest.mark.docker
def test_a_hung_harness_is_killed_from_outside_at_the_wall_limit(sandbox_image: str) -> None:
    hang = textwrap.dedent(
        """
        import time

        def test_hangs_the_harness_itself(solution):
            time.sleep(10**6)
        """
    )
    runner = SandboxRunner(sandbox_image, startup_s=120, grace_s=3)
    ids: list[str] = []
    started = time.monotonic()
    result = runner.run(
        Job(mode="run", source=REFERENCE, tests={"test_hang.py": hang}, limits=Limits(time_s=3)),
        on_event=lambda kind, data: ids.append(data["id"]) if kind == "container" else None,
    )
    elapsed = time.monotonic() - started
    assert result.outcome == "timeout", result
    # Killed at time_s + grace after the harness held the job, plus the kill itself.
    assert result.timings["total_s"] - result.timings["harness_ready_s"] < 3 + 3 + 5, result.timings
    assert elapsed < result.timings["total_s"] + 5
    assert ids and ids[0] not in sandbox_containers() and not processes_in_container(ids[0])


@pytest.mark.docker
def test_tests_that_cannot_be_collected_are_ours_not_the_learners(sandbox: Sandbox) -> None:
    graded = sandbox.grade(REFERENCE, tests={"test_broken.py": "import no_such_module\n"})
    assert graded.outcome == "infra_error", graded.describe()
    assert graded.result.error_code == "report_infra"


@pytest.mark.docker
def test_a_missing_image_is_an_infra_error() -> None:
    result = SandboxRunner("llm-dojo-sandbox:no-such-tag").run(Job(mode="run", source="", tests={}))
    assert (result.outcome, result.error_code) == ("infra_error", "image_missing")


@pytest.mark.docker
def test_a_harness_that_starts_too_slowly_is_ours_not_a_learners_timeout(sandbox_image: str) -> None:
    ids: list[str] = []
    result = SandboxRunner(sandbox_image, startup_s=0.3).run(
        Job(mode="run", source=REFERENCE, tests={"test_x.py": "def test_x(solution):\n    pass\n"}, limits=Limits(time_s=5)),
        on_event=lambda kind, data: ids.append(data["id"]) if kind == "container" else None,
    )
    assert (result.outcome, result.error_code) == ("infra_error", "start_timeout"), result
    assert ids and ids[0] not in sandbox_containers()


@pytest.mark.docker
def test_a_submit_says_when_its_rerun_begins_after_its_first_runs_tests(sandbox: Sandbox) -> None:
    # The worker writes the first run's held test rows then (grader.live).
    submit = sandbox.grade(REFERENCE, mode="submit")
    assert submit.outcome == "passed", submit.describe()
    kinds = [kind for kind, _ in submit.events]
    assert kinds.count("rerun") == 1
    assert "test" not in kinds[kinds.index("rerun") :]
    assert kinds.count("test") == len(submit.result.tests) > 1
    run = sandbox.grade(REFERENCE)
    assert run.outcome == "passed" and "rerun" not in [kind for kind, _ in run.events]


@pytest.mark.docker
def test_a_pass_that_leaves_out_a_test_the_file_defines_is_not_believed(sandbox: Sandbox) -> None:
    # pytest never collects the first test (the file deletes it), so the
    # harness honestly reports one test, passed. The host counts the test
    # functions the file defines, and a pass must cover them all.
    tests = textwrap.dedent(
        """
        def test_defined_but_never_collected(solution):
            assert False

        def test_trivial(solution):
            assert True

        del test_defined_but_never_collected
        """
    )
    graded = sandbox.grade(REFERENCE, tests={"test_visible.py": tests})
    assert (graded.outcome, graded.result.error_code) == ("infra_error", "report_contradicted"), graded.describe()
    assert graded.result.tests == []

"""Submit code through the real grading path and check what it left behind.

``SandboxRunner.run`` is the grading path minus the queue: the worker task
calls it with the same kind of ``Job``. Every helper here checks, after each
job, that its container is gone and that no host process still sits in its
cgroup, so a test cannot pass while an attack leaves something running.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.jobs import Failure, Job, JobResult, Limits, Mode
from sandbox.runner import LABEL, SandboxRunner

ROOT = Path(__file__).resolve().parents[2]
KV_DIR = ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
REFERENCE = (KV_DIR / "reference.py").read_text()
VISIBLE_TESTS = {"test_visible.py": (KV_DIR / "test_visible.py").read_text()}
HIDDEN_TESTS = {"test_hidden.py": (KV_DIR / "test_hidden.py").read_text()}

# Jobs a pooled container serves before it is replaced, as a worker's default
# (``SANDBOX_REUSE_JOBS``).
REUSE_JOBS = 100

# Small limits keep the suite fast; each attack overrides what it probes.
ATTACK_LIMITS: dict[str, Any] = {"time_s": 8, "memory_mb": 512}


def sandbox_containers() -> set[str]:
    """Full ids of every sandbox container on this engine, running or not."""
    out = subprocess.run(
        ["docker", "ps", "-a", "--no-trunc", "-q", "--filter", f"label={LABEL}"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    return set(out.split())


def processes_in_container(container_id: str) -> list[int]:
    """Host pids whose cgroup belongs to the container (cgroup v1 and v2).

    A process whose main thread ended alone is a zombie leader that may no
    longer name the container's cgroup while its other threads, in it, run
    on: its threads are looked at too.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if container_id in (entry / "cgroup").read_text() or (
                _state(entry) in ("Z", "X") and any(container_id in (task / "cgroup").read_text() for task in (entry / "task").iterdir())
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _state(entry: Path) -> str:
    """The state letter of a process or thread (``/proc/<pid>`` or ``/proc/<pid>/task/<tid>``)."""
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]


def run_in_pool(runner: SandboxRunner, source: str, mode: Mode = "run", **limits: Any) -> tuple[JobResult, str]:
    """Run ``source`` against the visible tests (a Submit: the hidden ones) on ``runner``; its result and the container it ran in."""
    ids: list[str] = []
    tests, reference = (HIDDEN_TESTS, REFERENCE) if mode == "submit" else (VISIBLE_TESTS, "")
    job = Job(mode=mode, source=source, tests=tests, limits=Limits(**{**ATTACK_LIMITS, **limits}), reference=reference)
    result = runner.run(job, on_event=lambda kind, data: ids.append(str(data["id"])) if kind == "container" else None)
    return result, ids[0]


def host_process_count() -> int:
    return sum(1 for entry in Path("/proc").iterdir() if entry.name.isdigit())


# Job n of a reused container runs learner code as uid 1000 + 2n.
LEARNER_UIDS = range(1002, 1000 + 2 * REUSE_JOBS + 2, 2)


def stray_learner_processes(learner_uids: range = LEARNER_UIDS) -> list[int]:
    """Host pids running as a learner uid outside every container.

    A process that left its container's cgroup would be an escape; inside
    another job's container it belongs to that job.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid in learner_uids and "docker" not in (entry / "cgroup").read_text():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _facts(failure: Failure | None) -> str:
    """Every field of a failure record, as text (the learner's traceback whole)."""
    return "" if failure is None else f"{failure.code} status={failure.status} signal={failure.signal} {failure.detail}\n{failure.traceback}"


@dataclass
class Graded:
    result: JobResult
    container_id: str
    elapsed_s: float
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        return self.result.outcome

    def everything(self) -> str:
        """All text the host got back from the job."""
        result = self.result
        parts = [result.outcome, result.message, _facts(result.failure), result.stdout, result.stderr, result.error_code, *result.state_leaks]
        parts += [f"{test.name} {test.outcome} {test.message} {_facts(test.failure)}" for test in result.tests]
        return "\n".join(parts)

    def describe(self) -> str:
        return f"outcome={self.outcome} after {self.elapsed_s:.1f}s\n{self.everything()[:6000]}"


def check_measurements(graded: Graded, limits: Limits, runtime: str = "") -> None:
    """Phase timings and peak memory are reported whatever the job did.

    Under gVisor the container's cgroup files are not visible inside it, so
    no peak memory is reported there.
    """
    result, timings = graded.result, graded.result.timings
    assert 0 < timings["container_start_s"] <= timings["total_s"] <= graded.elapsed_s + 0.5, timings
    if result.outcome == "infra_error":
        return
    assert 0 < timings["harness_ready_s"] <= timings["total_s"], timings
    if "run_s" in timings:  # absent only when the outer watchdog had to kill the container
        assert 0 <= timings["run_s"] <= timings["total_s"], timings
        if runtime == "runsc":
            return
        assert result.peak_memory_bytes is not None and 0 < result.peak_memory_bytes <= limits.memory_mb * 2**20, result.peak_memory_bytes


def assert_nothing_of_the_job_survived(runner: SandboxRunner, container_id: str) -> None:
    """The job's container is gone with everything in it, or it waits in the
    pool for its next job with no process of any job it served still running."""
    if container_id not in sandbox_containers():
        assert not processes_in_container(container_id), "processes of the job survived it"
        return
    served = runner.pool.jobs_served(container_id) if runner.pool is not None else None
    assert served is not None, "the job's container survived the job outside the pool"
    # Live now: PID 1 and the job master (root), and the next job's process,
    # launcher and fork server, started ahead of it (root, and the next
    # job's learner uid). None may run as the harness uid or as the learner
    # uid of any job this container has served (job n: 1000 + 2n).
    served_uids = {1001, *(1000 + 2 * n for n in range(1, served + 1))}
    left = {pid: uid for pid in processes_in_container(container_id) if not _is_zombie(pid) and (uid := _uid(pid)) in served_uids}
    assert not left, f"processes of the job survived it in its reused container: {left}"


def _uid(pid: int) -> int:
    try:
        return (Path("/proc") / str(pid)).stat().st_uid
    except OSError:
        return -1


def _is_zombie(pid: int) -> bool:
    """A killed process that PID 1 has not reaped yet: it holds nothing, and goes.

    Every thread of it a zombie: a zombie leader with a live thread is alive.
    """
    try:
        return all(_state(task) in ("Z", "X") for task in (Path("/proc") / str(pid) / "task").iterdir())
    except (OSError, IndexError):
        return True


class Sandbox:
    """One runner shared by a test session, like one worker slot."""

    def __init__(self, image: str, runtime: str = "") -> None:
        # A generous start-up clock: on a loaded test machine the harness's
        # imports can take long, and no learner code runs before it is ready
        # (tests/sandbox/test_outcomes.py checks that clock on its own).
        # Jobs with the attack limits run in pre-started containers, as in
        # production; attacks asking for other limits start theirs cold.
        # Both paths face the suite.
        self.runtime = runtime
        # A pooled container serves up to REUSE_JOBS jobs, as in production
        # (under runsc each container serves one): every attack also faces
        # a container an earlier job has used, and leaves one for the next.
        self.runner = SandboxRunner(image, startup_s=120, pool_size=1, pool_limits=Limits(**ATTACK_LIMITS), runtime=runtime, reuse_jobs=REUSE_JOBS)

    def grade(
        self,
        source: str,
        *,
        mode: Mode = "run",
        tests: dict[str, str] | None = None,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
        **limits: Any,
    ) -> Graded:
        """Grade ``source`` and check that nothing of the job survived it."""
        if tests is None:
            tests = HIDDEN_TESTS if mode == "submit" else VISIBLE_TESTS
        events: list[tuple[str, dict[str, Any]]] = []

        def record(kind: str, data: dict[str, Any]) -> None:
            events.append((kind, data))
            if on_event is not None:
                on_event(kind, data)

        started = time.monotonic()
        # Hidden tests compare with the reference, which the harness (never the learner) gets.
        reference = REFERENCE if mode == "submit" else ""
        job = Job(mode=mode, source=source, tests=tests, limits=Limits(**{**ATTACK_LIMITS, **limits}), reference=reference, seed=7)
        result = self.runner.run(job, on_event=record)
        graded = Graded(result, next((data["id"] for kind, data in events if kind == "container"), ""), time.monotonic() - started, events)
        assert graded.container_id, f"the runner never reported its container\n{graded.describe()}"
        assert_nothing_of_the_job_survived(self.runner, graded.container_id)
        check_measurements(graded, Limits(**{**ATTACK_LIMITS, **limits}), self.runtime)
        return graded

    def attack(self, source: str, **kwargs: Any) -> Graded:
        """Grade an attack, then prove the same runner still grades a correct solution right."""
        graded = self.grade(source, **kwargs)
        self.assert_correct_still_passes()
        return graded

    def assert_correct_still_passes(self) -> None:
        after = self.grade(REFERENCE)
        assert after.outcome == "passed", f"a correct solution graded after the attack did not pass:\n{after.describe()}"
        assert [test.outcome for test in after.result.tests] == ["passed"] * 3


class TrackingRunner:
    """The shared runner as ``grade_submission`` sees it, remembering its containers."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.container_ids: list[str] = []

    def run(self, job: Job, on_event: Callable[[str, dict[str, Any]], None] | None = None) -> JobResult:
        def record(kind: str, data: dict[str, Any]) -> None:
            if kind == "container":
                self.container_ids.append(data["id"])
            if on_event is not None:
                on_event(kind, data)

        result = self.sandbox.runner.run(job, on_event=record)
        assert self.container_ids, "the runner never reported its container"
        assert_nothing_of_the_job_survived(self.sandbox.runner, self.container_ids[-1])
        return result

    def stop(self, container_id: str) -> None:
        self.sandbox.runner.stop(container_id)


def grade_through_the_site(sandbox: Sandbox, learner: Any, rung: Any, kind: str, code: str, capture: Any) -> Any:
    """Store a submission as the site does, then grade it as the worker does.

    ``capture`` is pytest-django's ``django_capture_on_commit_callbacks``:
    no Celery here, the test is the worker. Returns the refreshed row.
    """
    from grader import services
    from grader.constants import Status

    with capture(execute=False):
        submission = services.submit_solution(user=learner, rung=rung, kind=kind, code=code)
    graded = services.grade_submission(submission.pk, runner=TrackingRunner(sandbox))
    assert graded is not None
    submission.refresh_from_db()
    assert submission.status == Status.DONE
    # Every phase is recorded, the queue wait by the grader and the rest by the runner.
    assert {"queue_wait_s", "container_start_s", "harness_ready_s", "run_s", "total_s"} <= set(submission.timings), submission.timings
    assert submission.peak_memory_bytes and submission.peak_memory_bytes > 0
    return submission

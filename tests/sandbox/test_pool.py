"""Pre-started containers: warm when they can be, cold when they cannot,
one job each, and they recover when their containers die."""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest

from sandbox.jobs import Job, Limits
from sandbox.pool import POOL_LABEL
from sandbox.runner import SandboxRunner, remove_stale_containers

pytestmark = [pytest.mark.docker]

KV = Path(__file__).resolve().parents[2] / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
JOB = Job(mode="run", source=(KV / "reference.py").read_text(), tests={"test_visible.py": (KV / "test_visible.py").read_text()}, limits=Limits(time_s=20))


def wait_ready(runner: SandboxRunner, timeout: float = 60) -> None:
    assert runner.pool is not None
    deadline = time.monotonic() + timeout
    while runner.pool.ready < runner.pool.size:
        assert time.monotonic() < deadline, "the pool never filled"
        time.sleep(0.1)


OWNER = f"test-pool-{uuid.uuid4().hex[:8]}"


def pool_containers(owner: str = OWNER) -> list[str]:
    """This test's pre-started containers (other suites keep pools of their own)."""
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={POOL_LABEL}={owner}"], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.fixture
def pooled(sandbox_image):
    runner = SandboxRunner(sandbox_image, pool_size=1, startup_s=120, pool_owner=OWNER)
    yield runner
    runner.close()


def test_a_job_takes_a_warm_container_and_the_pool_refills_with_a_new_one(pooled):
    wait_ready(pooled)
    (first,) = pool_containers()
    result = pooled.run(JOB)
    assert result.outcome == "passed" and result.timings["warm"] is True
    wait_ready(pooled)
    (second,) = pool_containers()
    assert second != first  # never reused: each container serves one job
    assert first not in subprocess.run(["docker", "ps", "-aq", "--no-trunc"], capture_output=True, text=True).stdout


def test_a_cold_start_works_when_the_pool_is_empty_or_the_limits_differ(pooled):
    other = Job(mode="run", source=JOB.source, tests=JOB.tests, limits=Limits(time_s=20, memory_mb=768))
    result = pooled.run(other)
    assert result.outcome == "passed" and result.timings["warm"] is False


def test_a_rung_that_prefers_a_gpu_takes_a_warm_container_where_there_is_none(pooled):
    # On a CPU worker it runs as any other rung (its GPU-only tests skip): no reason to start cold.
    wait_ready(pooled)
    prefers = Job(mode="run", source=JOB.source, tests=JOB.tests, limits=Limits(time_s=20, gpu=True))
    result = pooled.run(prefers)
    assert result.outcome == "passed" and result.timings["warm"] is True


def test_the_pool_recovers_when_its_containers_die(pooled):
    wait_ready(pooled)
    (warm,) = pool_containers()
    subprocess.run(["docker", "kill", warm], check=True, capture_output=True)  # as a Docker restart would
    used: list[str] = []
    result = pooled.run(JOB, on_event=lambda kind, data: used.append(data["id"]) if kind == "container" else None)
    # The dead one was noticed, not used: the job waited for its replacement.
    assert result.outcome == "passed" and used and not used[0].startswith(warm)
    wait_ready(pooled)
    assert pool_containers() and warm not in pool_containers()


def test_a_restarted_worker_removes_the_containers_its_previous_life_kept_warm(sandbox_image):
    owner = f"{OWNER}-host:123"
    runner = SandboxRunner(sandbox_image, pool_size=1, pool_owner=owner)
    wait_ready(runner)
    runner.pool._stopped.set()  # type: ignore[union-attr]  # the worker "dies" without cleaning up
    assert pool_containers(owner)
    remove_stale_containers(max_age_s=3600, pool_owner_prefix=f"{OWNER}-host:")
    assert pool_containers(owner) == []


def test_a_restarted_worker_leaves_another_workers_containers_on_the_same_engine(sandbox_image):
    # Two workers on one Docker engine (two Celery nodes on one host, or two
    # test sessions): one starting over must not take the other's warm
    # container, nor one that has just exited while its runner reads it.
    other = f"{OWNER}-other@host:7"
    runner = SandboxRunner(sandbox_image, pool_size=1, pool_owner=other)
    try:
        wait_ready(runner)
        (warm,) = pool_containers(other)
        exited = subprocess.run(
            ["docker", "run", "-d", "--label", "llm-dojo.sandbox=1", "--label", f"{POOL_LABEL}={other}", "--entrypoint", "true", sandbox_image],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        subprocess.run(["docker", "wait", exited], capture_output=True, check=True)
        remove_stale_containers(max_age_s=3600, pool_owner_prefix=f"{OWNER}-restarting@host:")
        assert set(pool_containers(other)) == {warm, exited[:12]}
    finally:
        runner.close()
        subprocess.run(["docker", "rm", "-f", *pool_containers(other)], capture_output=True)


def test_one_container_serves_job_after_job_while_the_other_waits_warm(sandbox_image):
    # Taken in turn, two containers would reach their last job together and
    # leave the next job to a replacement still importing torch.
    owner = f"test-pool-{uuid.uuid4().hex[:8]}"
    runner = SandboxRunner(sandbox_image, pool_size=2, reuse_jobs=3, startup_s=120, pool_owner=owner)
    try:
        wait_ready(runner)
        assert runner.pool is not None
        served = []
        for _ in range(2):
            assert runner.run(JOB).outcome == "passed"
            wait_ready(runner)  # given back once its harness said it is clean
            ids = subprocess.run(["docker", "ps", "-q", "--no-trunc", "--filter", f"label={POOL_LABEL}={owner}"], capture_output=True, text=True, check=True).stdout.split()
            served.append(sorted(runner.pool.jobs_served(cid) or 0 for cid in ids))
        # The same container served both jobs; the spare served none.
        assert served == [[0, 1], [0, 2]], served
        third = runner.run(JOB)  # the first container's last job: it is removed
        assert third.outcome == "passed" and third.timings["reused"] is True
        # The next job takes the spare, warm since the start, not the replacement.
        fourth = runner.run(JOB)
        assert fourth.outcome == "passed" and fourth.timings["reused"] is False, fourth.timings
        assert fourth.timings["harness_ready_s"] < 1.0, fourth.timings
    finally:
        runner.close()


def test_a_pre_started_container_is_lent_only_once_it_is_warm(sandbox_image):
    # Counted ready as soon as it started, a container made the job that took
    # it wait for its whole torch import.
    owner = f"test-pool-{uuid.uuid4().hex[:8]}"
    runner = SandboxRunner(sandbox_image, pool_size=1, startup_s=120, pool_owner=owner)
    try:
        assert runner.pool is not None
        started = time.monotonic()
        wait_ready(runner)
        assert time.monotonic() - started > 1.0  # torch and pytest take seconds to import
        result = runner.run(JOB)
        assert result.outcome == "passed" and result.timings["reused"] is False
        assert result.timings["harness_ready_s"] < 1.0, result.timings
    finally:
        runner.close()


def test_submits_keep_to_their_own_container_so_runs_never_wait_for_a_clean_one(sandbox_image):
    # A container whose learner code saw hidden inputs serves Submits only
    # (docs/security.md, "Reused containers"). Mixed in any order, no Run
    # meets a container a Submit used, and none finds only marked ones and
    # waits for a replacement to import torch: two containers serve all.
    from tests.security.support import HIDDEN_TESTS

    owner = f"test-pool-{uuid.uuid4().hex[:8]}"
    runner = SandboxRunner(sandbox_image, pool_size=2, reuse_jobs=100, startup_s=120, pool_owner=owner, cleanup_in_background=True)
    submit = Job(mode="submit", source=JOB.source, tests=HIDDEN_TESTS, limits=JOB.limits, reference=JOB.source)
    try:
        wait_ready(runner)
        served: list[tuple[str, str]] = []
        ids: list[str] = []
        for job in (JOB, submit, submit, JOB, submit, submit, JOB, JOB, submit):
            # Each job's container is back before the next starts. (A Submit
            # waits only SUBMIT_WAITS_FOR_MARKED_S for a marked one; on a host
            # loaded far past its cores, a clean-clone run beside busy
            # helpers, a cleanup alone took longer and the Submit rightly
            # took the clean one, and then a Run waited for a replacement.)
            wait_ready(runner)
            result = runner.run(job, on_event=lambda kind, data: ids.append(str(data["id"])) if kind == "container" else None)
            assert result.outcome == "passed", result
            served.append((job.mode, ids[-1]))
        assert len({container for _, container in served}) == 2, served
        for at, (mode, container) in enumerate(served):
            if mode == "submit":
                assert ("run", container) not in served[at + 1 :], served
        # After the first Submit, each kind keeps to its own container.
        first_submit = [mode for mode, _ in served].index("submit")
        later = served[first_submit:]
        assert len({c for m, c in later if m == "run"}) == 1 and len({c for m, c in later if m == "submit"}) == 1, served
    finally:
        runner.close()

"""Each grading process starts warming its sandbox containers when it starts.

Celery gives a lone learner's jobs to the same pool process, so the other
one used to meet its first job (often the first of a class's burst after a
restart) with no container at all, and graded it cold while starting its
pool. With SANDBOX_POOL_WARM_AT_START (the default) both pools warm up
before any job is sent.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exercises.models import Rung
from grader import services
from grader.constants import Kind, Outcome, Status
from grader.models import Submission
from sandbox.pool import POOL_LABEL
from tests.faults.test_faults import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

NODE = "warmstart@test"
KV = Path(__file__).resolve().parents[2] / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


def _docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout


def warm_pool_containers() -> dict[str, str]:
    """This worker's pool containers whose harness said it is warm, by owner ("<node>:<pid>")."""
    found: dict[str, str] = {}
    for line in _docker("ps", "--no-trunc", "--filter", f"label={POOL_LABEL}", "--format", f'{{{{.ID}}}} {{{{.Label "{POOL_LABEL}"}}}}').splitlines():
        container, _, owner = line.partition(" ")
        if not owner.startswith(f"{NODE}:"):
            continue
        logs = subprocess.run(["docker", "logs", container], capture_output=True, text=True).stdout
        if "@@DOJO-READY 0" in logs:
            found[owner] = container
    return found


def both_warm(excluding: frozenset[str] = frozenset()) -> dict[str, str] | None:
    """Two warm pool containers of this worker (one per grading process), none of ``excluding``; else None."""
    found = {owner: container for owner, container in warm_pool_containers().items() if container not in excluding}
    return found if len(found) == 2 else None


def test_both_grading_processes_warm_a_container_before_any_job(catalog, learner, worker_factory):
    worker = worker_factory(name=NODE).start(SANDBOX_POOL_WARM_AT_START="1")
    assert not Submission.objects.exists()

    # One pool per grading process (-c 2, SANDBOX_POOL_SIZE 1), each labelled
    # with its own pid, warm while nothing has been graded yet.
    warm = wait_for(both_warm, 180, "both pools to warm up", worker.log)
    assert len({owner.rsplit(":", 1)[1] for owner in warm}) == 2

    rung = Rung.objects.get(slug="kv-cache-size")
    submission = services.submit_solution(user=learner, rung=rung, kind=Kind.RUN, code=(KV / "reference.py").read_text())
    wait_for(lambda: Submission.objects.get(pk=submission.pk).status == Status.DONE, 120, "the Run to be graded", worker.log)
    submission.refresh_from_db()
    assert submission.outcome == Outcome.PASSED
    # It found a container already warm: no wait for torch to import in it.
    assert submission.timings["warm"] is True
    assert submission.timings["reused"] is False
    assert submission.timings["harness_ready_s"] < 1.0, submission.timings


def test_a_worker_that_comes_back_removes_its_old_containers_and_keeps_its_new_ones(catalog, worker_factory):
    worker = worker_factory(name=NODE).start(SANDBOX_POOL_WARM_AT_START="1")
    old = wait_for(both_warm, 180, "both pools to warm up", worker.log)
    worker.kill()  # as a crash would: its containers stay behind

    worker.start(SANDBOX_POOL_WARM_AT_START="1")
    new = wait_for(lambda: both_warm(frozenset(old.values())), 180, "both new pools to warm up", worker.log)
    running = set(_docker("ps", "-q", "--no-trunc", "--filter", f"label={POOL_LABEL}").split())
    assert not running & set(old.values())  # the previous life's are gone
    assert set(new.values()) <= running
    # The removal runs before the new pools start (worker_init), so it cannot
    # take a container they warm; one taken would be started again, with this warning.
    assert "could not start a container" not in worker.log(), worker.log()

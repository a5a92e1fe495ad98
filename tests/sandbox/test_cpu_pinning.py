"""A worker slot's containers run on the slot's own core (SANDBOX_PIN_CPUS).

The harness and the learner's process answer each other about a thousand
times in a Submit; pinned to one core, each answer wakes its reader where it
already runs. Slot i of a Celery worker pins to core i, so two slots never
share a core while another idles. Checked from Docker's side and from inside,
by the learner's own process and by its hidden test.
"""

from __future__ import annotations

import docker
import pytest

from core import runners
from sandbox.container import container_options, cpuset_for
from sandbox.jobs import Job, Limits
from sandbox.runner import SandboxRunner


def test_a_slot_gets_its_own_core_and_a_wider_job_the_next_ones() -> None:
    assert cpuset_for(0, 2, 1.0) == "0"
    assert cpuset_for(1, 2, 1.0) == "1"
    assert cpuset_for(2, 2, 1.0) == "0"  # more slots than cores: they wrap around
    assert cpuset_for(3, 8, 2.0) == "3,4"
    assert cpuset_for(7, 8, 1.5) == "7,0"
    assert cpuset_for(1, 8, 0.5) == "1"
    # Not pinned: no slot, an unknown core count, or a job that wants every core.
    assert cpuset_for(None, 8, 1.0) == ""
    assert cpuset_for(0, 0, 1.0) == ""
    assert cpuset_for(0, 2, 2.0) == ""


def test_only_a_pinned_runner_sets_a_cpuset() -> None:
    job = Job(mode="run", source="", tests={}, limits=Limits(cpus=1.0))
    assert "cpuset_cpus" not in container_options("image", job, gpu_enabled=False)
    assert container_options("image", job, gpu_enabled=False, cpuset="1")["cpuset_cpus"] == "1"


def test_only_a_celery_pool_slot_is_pinned(monkeypatch: pytest.MonkeyPatch, settings: object) -> None:
    from billiard.process import current_process

    # Outside a pool (a command or a test grading several jobs at once from
    # one runner) the kernel places the jobs.
    assert runners.pool_slot() is None
    assert runners.first_core_for_slot(runners.pool_slot()) is None
    monkeypatch.setattr(current_process(), "index", 1, raising=False)
    assert runners.pool_slot() == 1 and runners.slot_index() == 1
    assert runners.first_core_for_slot(runners.pool_slot()) == 1
    settings.SANDBOX_PIN_CPUS = False  # type: ignore[attr-defined]
    assert runners.first_core_for_slot(1) is None


PROBE = """
import os


def add(a, b):
    return a + b


def my_cores():
    return sorted(os.sched_getaffinity(0))
"""

TESTS = {
    "test_cores.py": (
        "import os\n\n\n"
        "def test_the_learner_and_the_harness_share_one_core(solution):\n"
        "    assert solution.add(2, 3) == 5\n"
        "    assert solution.my_cores() == [int(os.environ['EXPECT_CORE'])] == sorted(os.sched_getaffinity(0))\n"
    )
}


@pytest.mark.docker
def test_a_pinned_runner_runs_the_whole_job_on_its_core(sandbox_image: str) -> None:
    client = docker.from_env()
    cores = int(client.info()["NCPU"])
    if cores < 2:
        pytest.skip("pinning needs two cores to tell them apart")
    core = cores - 1  # not core 0, so a default placement cannot pass by chance
    seen: dict[str, str] = {}

    def on_event(kind: str, data: dict[str, object]) -> None:
        if kind == "container":
            seen["cpuset"] = client.api.inspect_container(str(data["id"]))["HostConfig"]["CpusetCpus"]

    runner = SandboxRunner(sandbox_image, first_core=core, startup_s=120)
    # The harness's own test reads its affinity: the harness process, not only the learner's, is on the core.
    tests = {name: text.replace("os.environ['EXPECT_CORE']", repr(str(core))) for name, text in TESTS.items()}
    result = runner.run(Job(mode="run", source=PROBE, tests=tests), on_event=on_event)
    assert result.outcome == "passed", (result.message, [(t.name, t.message) for t in result.tests])
    assert seen["cpuset"] == str(core)

    unpinned = SandboxRunner(sandbox_image, startup_s=120)
    seen.clear()
    result = unpinned.run(Job(mode="run", source="def add(a, b):\n    return a + b\n", tests={"test_add.py": "def test_add(solution):\n    assert solution.add(1, 1) == 2\n"}), on_event=on_event)
    assert result.outcome == "passed"
    assert seen["cpuset"] == ""

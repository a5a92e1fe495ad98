"""A GPU worker refuses to start when Docker cannot give its sandboxes a GPU; a required GPU rung without GPU workers is reported."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import docker.errors
import pytest
from django.core.exceptions import ImproperlyConfigured

from grader import checks
from sandbox.gpu import gpu_problems


class _Containers:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.asked: list[dict[str, Any]] = []

    def run(self, image: str, **options: Any) -> bytes:
        self.asked.append(options)
        if self.error is not None:
            raise self.error
        return b"/dev/nvidia0\n"


class FakeDocker:
    """Answers like an engine with the given runtimes; container runs fail with ``error``."""

    def __init__(self, runtimes: dict[str, Any], error: Exception | None = None) -> None:
        self.runtimes = runtimes
        self.containers = _Containers(error)
        self.images = SimpleNamespace(get=lambda name: object())

    def info(self) -> dict[str, Any]:
        return {"Runtimes": self.runtimes, "DefaultRuntime": "runc"}

    def close(self) -> None:
        pass


NO_DRIVER = docker.errors.APIError('could not select device driver "" with capabilities: [[gpu]]')


def test_an_engine_without_the_nvidia_runtime_is_named_as_the_cause():
    client = FakeDocker({"runc": {"path": "runc"}}, NO_DRIVER)
    [problem] = gpu_problems(client, "llm-dojo-sandbox:cuda-x", ["0"])
    assert "no NVIDIA runtime" in problem and "runc" in problem and "could not select device driver" in problem


def test_a_container_that_sees_no_gpu_is_reported_per_device():
    seen_nothing = docker.errors.ContainerError(cast(Any, None), 2, "ls /dev/nvidia[0-9]*", "llm-dojo-sandbox:cuda-x", "")
    client = FakeDocker({"runc": {}, "nvidia": {}}, seen_nothing)
    problems = gpu_problems(client, "llm-dojo-sandbox:cuda-x", ["0", "1"])
    assert len(problems) == 2 and all("sees no GPU" in problem for problem in problems)
    assert [dict(options["device_requests"][0])["DeviceIDs"] for options in client.containers.asked] == [["0"], ["1"]]
    assert all(options["network_mode"] == "none" for options in client.containers.asked)


def test_an_engine_that_gives_each_gpu_passes():
    assert gpu_problems(FakeDocker({"nvidia": {}}), "llm-dojo-sandbox:cuda-x", ["0", "1"]) == []


def test_the_gpu_worker_refuses_to_start_with_the_reason(monkeypatch, settings):
    settings.SANDBOX_GPU_ENABLED, settings.SANDBOX_GPU_DEVICES = True, ["0"]
    settings.SANDBOX_IMAGE = "llm-dojo-sandbox:cuda-x"
    monkeypatch.setattr(checks, "_docker_client", lambda: FakeDocker({"runc": {}}, NO_DRIVER))
    monkeypatch.setattr(checks, "check_broker", lambda: [])
    with pytest.raises(ImproperlyConfigured, match=r"grader\.E003: this GPU worker cannot give sandboxes a GPU: GPU 0: Docker has no NVIDIA runtime"):
        checks.require_grading_dependencies()


def test_a_cpu_worker_does_not_ask_for_a_gpu(monkeypatch, settings):
    settings.SANDBOX_GPU_ENABLED = False
    monkeypatch.setattr(checks, "_docker_client", lambda: pytest.fail("a CPU worker asked Docker for a GPU"))
    assert checks.check_gpu_worker() == []


@pytest.mark.docker
def test_this_hosts_real_docker_has_no_gpu_and_says_so(sandbox_image):
    client = docker.from_env()
    try:
        [problem] = gpu_problems(client, sandbox_image, ["0"])
    finally:
        client.close()
    assert "GPU 0:" in problem and ("no NVIDIA runtime" in problem or "refused" in problem)


def _catalog(*needs: str) -> list[Any]:
    rungs = [SimpleNamespace(meta=SimpleNamespace(slug=f"rung-{index}", gpu=need)) for index, need in enumerate(needs)]
    return [SimpleNamespace(modules=[SimpleNamespace(rungs=rungs)])]


def test_a_required_gpu_rung_without_gpu_workers_is_a_start_up_warning(monkeypatch, settings):
    settings.GRADER_GPU_WORKERS = False
    monkeypatch.setattr(checks, "read_catalog", lambda root: _catalog("no", "required", "preferred"))
    [warning] = checks.check_gpu_rungs_have_workers()
    assert warning.id == "grader.W002" and "rung-1" in warning.msg and "rung-2" not in warning.msg
    settings.GRADER_GPU_WORKERS = True
    assert checks.check_gpu_rungs_have_workers() == []


def test_the_shipped_catalog_has_no_rung_stuck_without_gpu_workers(settings):
    settings.GRADER_GPU_WORKERS = False
    assert checks.check_gpu_rungs_have_workers() == []

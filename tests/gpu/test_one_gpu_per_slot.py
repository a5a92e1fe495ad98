"""One GPU per job: each worker slot owns one device, warm containers included."""

from __future__ import annotations

import pytest

from core import runners
from sandbox.container import LABEL, container_options
from sandbox.jobs import Job, Limits
from sandbox.pool import ContainerPool

GPU_JOB = Job(mode="run", source="", tests={}, limits=Limits(gpu=True))


def test_a_gpu_job_asks_docker_for_exactly_its_slots_device():
    [request] = container_options("image", GPU_JOB, gpu_enabled=True, gpu_device="2")["device_requests"]
    # What docker-py sends in HostConfig.DeviceRequests: one named device, never "all" (Count -1).
    assert dict(request) == {"Driver": "", "Count": 0, "DeviceIDs": ["2"], "Capabilities": [["gpu"]], "Options": {}}


def test_a_gpu_job_without_a_device_id_is_refused_rather_than_given_every_gpu():
    with pytest.raises(ValueError, match="gpu_device"):
        container_options("image", GPU_JOB, gpu_enabled=True, gpu_device="")


def test_slot_i_owns_the_ith_listed_gpu(settings):
    settings.SANDBOX_GPU_DEVICES = ["0", "GPU-6b1c", "3"]
    assert [runners.gpu_device_for_slot(index) for index in range(3)] == ["0", "GPU-6b1c", "3"]
    with pytest.raises(RuntimeError, match="--concurrency 3"):
        runners.gpu_device_for_slot(3)


def test_a_pool_child_knows_its_slot(monkeypatch):
    from billiard import process

    class Child:
        index = 2

    monkeypatch.setattr(process, "current_process", lambda: Child())
    assert runners.slot_index() == 2


def test_a_gpu_workers_runner_gives_its_slots_gpu_to_cold_and_warm_containers(monkeypatch, settings):
    started: list[ContainerPool] = []

    def start(pool: ContainerPool) -> ContainerPool:
        started.append(pool)  # no refill thread: this host has no cuda image to start
        return pool

    monkeypatch.setattr(ContainerPool, "start", start)
    monkeypatch.setattr(runners, "slot_index", lambda: 1)
    settings.SANDBOX_GPU_ENABLED, settings.SANDBOX_GPU_DEVICES, settings.SANDBOX_POOL_SIZE = True, ["0", "1"], 1
    settings.SANDBOX_IMAGE = "llm-dojo-sandbox:cuda-000000000000"
    runner = runners.default_runner()
    try:
        assert runner.gpu_device == "1" and runner.gpu_enabled
        [pool] = started
        assert pool.limits.gpu, "the slot's warm containers hold its GPU too"
        monkeypatch.setattr(runner, "_oom_floor", True)
        options = runner._pool_options(Job(mode="run", source="", tests={}, limits=pool.limits))
        assert [dict(request)["DeviceIDs"] for request in options["device_requests"]] == [["1"]]
    finally:
        runners._runners.clear()


@pytest.mark.docker
def test_docker_records_the_one_device_the_job_asked_for(sandbox_image):
    import docker

    client = docker.from_env()
    options = container_options(sandbox_image, GPU_JOB, gpu_enabled=True, gpu_device="1")
    options["labels"] = {LABEL: "gpu-test"}
    options.pop("detach")
    container = client.containers.create(**options)  # created, never started: this host has no GPU
    try:
        [request] = container.attrs["HostConfig"]["DeviceRequests"]
        assert request["DeviceIDs"] == ["1"] and request["Capabilities"] == [["gpu"]] and request["Count"] == 0
    finally:
        container.remove(force=True)


def test_the_shipped_gpu_rung_fits_a_gpu_slots_warm_containers():
    from pathlib import Path

    from exercises.jobs import job_for
    from exercises.loader import read_rung
    from sandbox.pool import limits_key

    root = Path(__file__).resolve().parents[2] / "exercises/llm-systems-frontier/inference-and-serving/rungs/07-paged-attention-decode"
    meta = read_rung(root).meta
    content = type("Content", (), {"visible_tests": "", "hidden_tests": "", "reference": "", "gpu": meta.gpu, "limits": meta.limits.model_dump()})()
    for kind in ("run", "submit"):
        assert limits_key(job_for(content, kind, "").limits) == limits_key(Limits(gpu=True))

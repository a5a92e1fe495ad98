"""The speed phase's clocks and its GPU timing, the parts that run without a GPU (issue 60).

The GPU itself is exercised by scripts/gpu-check.sh on a CUDA host: here,
which clock a phase picks, what a call costs on each, the L2 flush's size,
the device's label and what the host keeps of it, and that the learner's
side of a timed call on a machine without CUDA is a plain call.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sandbox" / "harness"))

from dojo_harness import gpu_timing  # type: ignore[import-not-found]
from dojo_harness.speed import Sample, pick_clock  # type: ignore[import-not-found]

from sandbox.report import MAX_SPEED_LABEL, parse_speed

FACTS: dict[str, Any] = {
    "verdict": "pass", "reason": "", "target": 1.0, "ratio": 1.5, "ci_low": 1.2, "ci_high": 1.9, "confidence": 0.998,
    "rounds": 14, "learner_s": 0.01, "baseline_s": 0.015, "cpu_checked": False, "phase_s": 2.0,
}  # fmt: skip


def test_the_clock_is_the_gpu_where_one_is_seen_else_the_cgroup_else_the_wall() -> None:
    gpu = {"device": "NVIDIA H100 80GB HBM3", "driver": "550.54.15"}
    assert pick_clock(gpu, 12.0) == "cuda"
    assert pick_clock(gpu, None) == "cuda"
    assert pick_clock(None, 12.0) == "cgroup"
    # gVisor shows no /sys/fs/cgroup: the wall time, said as such.
    assert pick_clock(None, None) == "wall"


def test_what_a_call_costs_on_each_clock() -> None:
    quota = 2.0
    # cgroup: as before (its CPU time, never less than spread over the quota).
    assert Sample(wall_s=0.090, cpu_s=0.010).charged_on("cgroup", quota) == pytest.approx(0.010)
    # wall: the wall time, whatever a CPU figure says.
    assert Sample(wall_s=0.090, cpu_s=0.010).charged_on("wall", quota) == pytest.approx(0.090)
    # cuda: the outside wall time is the floor; a span the learner's process forged smaller changes nothing...
    assert Sample(wall_s=0.050, cpu_s=0.001, gpu_s=0.000001).charged_on("cuda", quota) == pytest.approx(0.050)
    # ...a call that said nothing (no CUDA in its process) is charged the same way...
    assert Sample(wall_s=0.050, cpu_s=0.001, gpu_s=None).charged_on("cuda", quota) == pytest.approx(0.050)
    # ...a larger span only adds, and so does CPU left burning in threads after the call.
    assert Sample(wall_s=0.050, cpu_s=0.001, gpu_s=0.070).charged_on("cuda", quota) == pytest.approx(0.070)
    assert Sample(wall_s=0.050, cpu_s=0.300, gpu_s=0.040).charged_on("cuda", quota) == pytest.approx(0.150)


@pytest.mark.parametrize(
    ("l2", "expected"),
    [(50 * 2**20, 100 * 2**20), (40 * 2**20, 80 * 2**20), (None, 256 * 2**20), (0, 256 * 2**20), (True, 256 * 2**20), ("6MB", 256 * 2**20)],
)
def test_the_l2_flush_writes_twice_the_cache_or_256_mib(l2: Any, expected: int) -> None:
    assert gpu_timing.l2_flush_bytes(l2) == expected


def test_the_driver_is_the_kernel_modules_release_else_the_cuda_driver_version() -> None:
    proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version: gcc 12\n"
    assert gpu_timing.driver_version(proc, 12040) == "550.54.15"
    assert gpu_timing.driver_version(None, 12040) == "CUDA driver 12.4"
    assert gpu_timing.driver_version("garbage", None) == ""
    assert gpu_timing.label_text("NVIDIA\x1b[31m H100\n" + "x" * 200) == ("NVIDIA [31m H100 " + "x" * 200)[:77] + "..."


def test_without_a_gpu_no_device_is_named_and_the_learners_timed_call_is_a_plain_call() -> None:
    # This machine has no NVIDIA device: nothing asked, nothing to time on.
    assert gpu_timing.device_facts() is None
    assert gpu_timing.call_on_device(lambda a, b=0: a + b, (2,), {"b": 3}) == (5, None)


def test_the_host_keeps_the_clock_and_a_bounded_printable_device_label() -> None:
    facts = parse_speed({**FACTS, "clock": "cuda", "device": "NVIDIA H100 80GB HBM3", "driver": "550.54.15"})
    assert facts is not None and (facts.clock, facts.device, facts.driver) == ("cuda", "NVIDIA H100 80GB HBM3", "550.54.15")
    hostile = parse_speed({**FACTS, "clock": "sundial", "device": "A\x00\u202e\x1b[2J" + "B" * 10_000, "driver": ["550"]})
    assert hostile is not None
    assert hostile.clock == "" and hostile.driver == ""
    assert len(hostile.device) == MAX_SPEED_LABEL and hostile.device.isprintable() and hostile.device.startswith("A")
    assert parse_speed({**FACTS, "clock": "wall"}).clock == "wall"  # type: ignore[union-attr]


class _FakeCuda:
    """torch.cuda as call_on_device uses it, recording the order of what it is asked."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        outer = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                assert enable_timing
                self.name = "start" if not any(entry.startswith("new") for entry in outer.log) else "end"
                outer.log.append(f"new {self.name}")

            def record(self) -> None:
                outer.log.append(f"record {self.name}")

            def synchronize(self) -> None:
                outer.log.append(f"wait {self.name}")

            def elapsed_time(self, other: Any) -> float:
                return 12.5  # milliseconds, as CUDA events say

        self.Event = Event

    def is_initialized(self) -> bool:
        return True

    def synchronize(self) -> None:
        self.log.append("synchronize device")


def test_on_the_device_the_call_is_between_two_device_synchronisations_and_the_end_event_after_the_second(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[str] = []
    fake = type(sys)("torch")
    fake.cuda = _FakeCuda(log)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake)

    def work(x: int) -> int:
        log.append("call")
        return x * 2

    assert gpu_timing.call_on_device(work, (21,), {}) == (42, pytest.approx(0.0125))
    # A side stream's work is inside the span: every stream synchronised before the end is marked.
    assert log == ["synchronize device", "new start", "new end", "record start", "call", "synchronize device", "record end", "wait end"]


@pytest.mark.parametrize(
    ("span", "kept"), [(0.0125, 0.0125), (0.0, 0.0), (float("nan"), None), (float("inf"), None), (-1.0, None), (1e9, None), ("0.1", None), (True, None), (None, None)]
)
def test_the_events_span_from_the_learners_process_is_kept_only_as_a_sane_number(span: Any, kept: float | None) -> None:
    from dojo_harness.proxy import LearnerSession  # type: ignore[import-not-found]

    session = object.__new__(LearnerSession)
    session.request = lambda *args, **kwargs: {"ok": True, "value": 5, "gpu_s": span}
    session._decode = lambda value: value
    assert session.call_on_device("gather_kv", ()) == (5, kept)

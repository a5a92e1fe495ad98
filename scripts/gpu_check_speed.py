"""The device check's speed phase (scripts/gpu-check.sh): the harness's own speed phase on this host's GPU.

The batched-kv-gather rung (module 01, rung 08) is the speed rung of the
inference module; its reference and baseline are numpy (``gpu: false``), so
no rung of the catalog runs its speed phase on CUDA yet. This check therefore
takes that rung's input generator and sizes with torch translations of its
two sides (scripts/gpu_check/): a known-fast solution (one gather for the
whole batch) and a known-slow one (a copy per token, the rung's naive
baseline), and measures each against the slow one with the harness's
``speed.measure``: rounds, interleaving, fresh inputs, outputs compared, the
``cuda`` clock (the L2 flushed from this process, the device synchronised
around each timed call under CUDA events in the solution's process).

What differs from a sandbox: no Docker and no fork server. Each side of each
round runs in a fresh process of a ``forkserver`` that imported torch once
(CUDA is first touched in the child, as in the sandbox); tensors reach it on
the CPU and are moved to the GPU there, as the harness's decoding does.

Expected: the fast solution passes (far above 1.5x), the slow one fails
(about 1x), the cheat (GPU only: slow work on a side stream, the
synchronisation patched out) fails or is refused, the clock is ``cuda`` and
the device is named.
``--allow-cpu`` runs it on a machine without a GPU (clock ``cgroup`` or
``wall``): a dry run that proves the script works, never a GPU verification.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import sys
import time
import types
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "sandbox/harness"
RUNG = ROOT / "exercises/llm-systems-frontier/inference-and-serving/rungs/08-batched-kv-gather"
FAST = ROOT / "scripts/gpu_check/kv_gather_fast.py"
SLOW = ROOT / "scripts/gpu_check/kv_gather_slow.py"
# GPU only: slow work on a side stream, the synchronisation patched out. Never a pass.
CHEAT = ROOT / "scripts/gpu_check/kv_gather_side_stream.py"
TARGET = 1.5
SEED = 20261205
# Smaller than the rung's own sizes: the slow side launches a copy per token.
SIZES = [{"batch": 8, "num_pages": 1024, "page_size": 16, "head_dim": 64, "max_len": 512}]
CPU_SIZES = [{"batch": 8, "num_pages": 2048, "page_size": 16, "head_dim": 16, "max_len": 2048}]


def _serve(conn: Connection, source: str, device: str) -> None:
    """A fresh process holding ``source`` as the module ``solution``; answers calls until told to end."""
    sys.path.insert(0, str(HARNESS))
    import torch
    from dojo_harness.gpu_timing import call_on_device  # type: ignore[import-not-found]

    if device == "cpu":
        torch.set_num_threads(1)  # the dry run: one thread, as a sandbox job's quota would give
    module = types.ModuleType("solution")
    try:
        exec(compile(source, "solution.py", "exec"), module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - said to the parent, which fails the check
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ok", None))
    while True:
        op, attr, args = conn.recv()
        if op == "end":
            conn.send(("ok", None))
            return
        try:
            args = [arg.to(device) if isinstance(arg, torch.Tensor) else arg for arg in args]
            function = getattr(module, attr)
            value, span = call_on_device(function, args, {}) if op == "timed" else (function(*args), None)
            conn.send(("ok", (value.to("cpu") if isinstance(value, torch.Tensor) else value, span)))
        except BaseException as exc:  # noqa: BLE001 - said to the parent
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class LocalSession:
    """What ``speed.measure`` asks of a learner session, in a fresh process of this host's fork server."""

    def __init__(self, context: Any, source: str, device: str) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, source, device), daemon=True)
        self.process.start()
        child.close()
        self._answer()

    def _answer(self) -> Any:
        if not self.conn.poll(120):
            raise RuntimeError("the solution's process did not answer in 120 s")
        status, value = self.conn.recv()
        if status != "ok":
            raise RuntimeError(value)
        return value

    def call(self, target: int | None, attr: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.conn.send(("call", attr, list(args)))
        return self._answer()[0]

    def call_on_device(self, attr: str, args: tuple[Any, ...]) -> tuple[Any, float | None]:
        self.conn.send(("timed", attr, list(args)))
        value, span = self._answer()
        return value, span

    def end(self) -> None:
        try:
            self.conn.send(("end", "", []))
            self._answer()
        finally:
            self.process.join(10)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()


def _generator() -> types.ModuleType:
    """The rung's speed_inputs.make_inputs, its cache as a torch tensor; outputs compared exactly (a gather copies)."""
    spec = importlib.util.spec_from_file_location("speed_inputs", RUNG / "speed_inputs.py")
    assert spec is not None and spec.loader is not None
    rung_inputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rung_inputs)
    module = types.ModuleType("gpu_check_speed_inputs")

    def make_inputs(rng: Any, **size: Any) -> list[Any]:
        import torch

        pages, tables, lengths = rung_inputs.make_inputs(rng, **size)
        return [torch.from_numpy(pages), tables, lengths]

    def check(got: Any, expected: Any) -> None:
        import torch

        assert isinstance(got, torch.Tensor) and got.shape == expected.shape and torch.equal(got, expected), "the output differs"

    module.make_inputs = make_inputs  # type: ignore[attr-defined]
    module.check = check  # type: ignore[attr-defined]
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allow-cpu", action="store_true", help="a dry run without a GPU (never a GPU verification)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds each measurement may take")
    args, _ = parser.parse_known_args(argv)
    sys.path.insert(0, str(HARNESS))
    from dojo_harness import speed  # type: ignore[import-not-found]
    from dojo_harness.gpu_timing import device_facts
    from dojo_harness.speed import SpeedPlan, measure  # type: ignore[import-not-found]

    # Outside a container the cgroup read is the host's whole CPU (every process of
    # the machine): no CPU figure, so the wall time on a CPU and the GPU's clock on a GPU.
    speed._cpu_usage_s = lambda: None
    gpu = device_facts()
    if gpu is None and not args.allow_cpu:
        print("SPEED CHECK: NOT RUN (no GPU)")
        return 2
    device = "cuda" if gpu is not None else "cpu"
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch"])
    slow = SLOW.read_text()
    verdicts: dict[str, dict[str, Any]] = {}
    candidates = [("fast", FAST), ("slow", SLOW)] + ([("side-stream cheat", CHEAT)] if gpu is not None else [])
    for label, path in candidates:
        plan = SpeedPlan(
            entry="gather_kv", generator=_generator(), sizes=SIZES if gpu else CPU_SIZES, baseline=slow,
            min_ratio=TARGET, budget_s=args.budget, seed=SEED,
        )  # fmt: skip
        clock = time.monotonic()
        result = measure(plan, None, path.read_text(), gpu, lambda code: LocalSession(context, code, device))
        facts = result.facts(TARGET)
        verdicts[label] = facts
        print(
            f"speed {label}: {facts['verdict']}{' (' + facts['reason'] + ')' if facts['reason'] else ''}, ratio {facts['ratio']}"
            f" [{facts['ci_low']}, {facts['ci_high']}] vs target {TARGET}, {facts['rounds']} rounds, learner {facts['learner_s']} s,"
            f" baseline {facts['baseline_s']} s, clock {facts['clock']} ({time.monotonic() - clock:.1f} s)",
            flush=True,
        )
    print(f"speed device: {gpu['device'] + ', driver ' + gpu['driver'] if gpu else 'none (CPU dry run)'}")
    # A refused measurement is the script broken, except for the cheat (a wrong output is its expected end).
    problems = [f"{label}: refused ({facts['reason']})" for label, facts in verdicts.items() if facts["verdict"] == "refused" and label != "side-stream cheat"]
    if gpu is not None:
        # On a shared CPU (the dry run) the verdicts are only printed; on the GPU they must be these.
        if verdicts["fast"]["verdict"] != "pass":
            problems.append(f"the known-fast solution did not pass: {verdicts['fast']['verdict']} {verdicts['fast']['reason']}")
        if verdicts["slow"]["verdict"] != "fail":
            problems.append(f"the known-slow solution was not failed: {verdicts['slow']['verdict']} {verdicts['slow']['reason']}")
        if verdicts["side-stream cheat"]["verdict"] == "pass":
            problems.append(f"the side-stream cheat passed: {verdicts['side-stream cheat']}")
        if {facts["clock"] for facts in verdicts.values() if facts["verdict"] != "refused"} != {"cuda"} or not gpu["device"]:
            problems.append(f"timed on {[facts['clock'] for facts in verdicts.values()]} ({gpu['device']!r}), not on the GPU")
    for problem in problems:
        print("PROBLEM: " + problem)
    if problems:
        print("SPEED CHECK: FAILED")
        return 1
    print("SPEED CHECK: PASSED" if gpu is not None else "SPEED CHECK: CPU ONLY (the GPU path was not exercised)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

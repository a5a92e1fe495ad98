"""The device check behind scripts/gpu-check.sh: grade the GPU rung on this host's GPU, without Docker.

Needs only a python3 (3.11 or 3.12) with torch (a CUDA build) and pytest.
Each candidate (the reference, the starter, every wrong solution, and one
solution that is wrong only on a GPU) is imported as the module ``solution``
by the rung's own tests, in a fresh pytest process; the rung's
``grading.py`` and ``reference.py`` sit beside them as in the sandbox. Then
it says whether the GPU path holds: the reference passes everything with the
GPU-only tests really run, the rest fail where they should.

The sandbox's process isolation is not part of this check (no Docker here);
it checks the tests and the GPU, and prints the machine's facts.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNG = ROOT / "exercises/llm-systems-frontier/inference-and-serving/rungs/07-paged-attention-decode"
GRADING = ROOT / "sandbox/harness/grading.py"
MACHINE = ROOT / "sandbox/harness/dojo_harness/machine.py"
GPU_ONLY_WRONG = ROOT / "scripts/gpu_check/copies_whole_cache.py"
GPU_TESTS = ("test_gpu_half_precision_on_the_device", "test_gpu_never_copies_the_whole_cache")
CONFTEST = '''import pytest


@pytest.fixture
def solution():
    import solution as module

    return module
'''


def grade(candidate: Path, workdir: Path, timeout_s: float) -> dict[str, str]:
    """Each test's outcome (passed, failed, error, skipped) for ``candidate``; {"<run>": reason} if pytest itself failed."""
    folder = workdir / candidate.stem
    folder.mkdir()
    for source in (RUNG / "test_visible.py", RUNG / "test_hidden.py", RUNG / "reference.py", GRADING):
        shutil.copy(source, folder / source.name)
    shutil.copy(candidate, folder / "solution.py")
    (folder / "conftest.py").write_text(CONFTEST)
    report = folder / "report.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", str(folder)]
    env = {**os.environ, "DOJO_SEED": "20261130", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        run = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"<run>": f"timed out after {timeout_s:g} s"}
    if not report.is_file():
        return {"<run>": (run.stdout + run.stderr)[-800:]}
    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        outcome = "failed" if "failure" in kinds else "error" if "error" in kinds else "skipped" if "skipped" in kinds else "passed"
        outcomes[case.get("name", "?")] = outcome
    return outcomes


def machine_facts() -> dict[str, object]:
    spec = importlib.util.spec_from_file_location("dojo_machine", MACHINE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    facts: dict[str, object] = module.facts()
    facts["image"] = facts.get("image") or "none (no Docker: plain python3)"
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allow-cpu", action="store_true", help="run without a GPU too (the GPU-only tests then skip; never a GPU verification)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for each candidate's pytest run")
    args = parser.parse_args(argv)
    started = time.monotonic()
    facts = machine_facts()
    print("machine: " + ", ".join(f"{key} {value}" for key, value in facts.items()), flush=True)
    if not facts.get("gpu"):
        print("no CUDA device visible to torch: the GPU-only tests will skip", flush=True)
        if not args.allow_cpu:
            print("GPU CHECK: NOT RUN (no GPU)")
            return 2
    on_gpu = bool(facts.get("gpu"))
    problems: list[str] = []
    candidates = [("reference", RUNG / "reference.py"), ("starter", RUNG / "starter.py")]
    candidates += [(f"wrong/{path.name}", path) for path in sorted((RUNG / "wrong").glob("*.py"))]
    candidates.append(("gpu-only wrong: copies_whole_cache.py", GPU_ONLY_WRONG))
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        for label, path in candidates:
            clock = time.monotonic()
            outcomes = grade(path, Path(tmp), args.timeout)
            failing = sorted(name for name, outcome in outcomes.items() if outcome not in ("passed", "skipped"))
            skipped = sorted(name for name, outcome in outcomes.items() if outcome == "skipped")
            print(f"{label}: {len(outcomes) - len(failing) - len(skipped)} passed, {len(failing)} failed, {len(skipped)} skipped"
                  f" ({time.monotonic() - clock:.1f} s){': ' + ', '.join(failing[:4]) if failing else ''}", flush=True)
            if label == "reference":
                if failing or "<run>" in outcomes:
                    problems.append(f"the reference fails: {failing}")
                ran = [name for name in GPU_TESTS if outcomes.get(name) == "passed"]
                if on_gpu and len(ran) != len(GPU_TESTS):
                    problems.append(f"the GPU-only tests did not all run and pass for the reference: {[outcomes.get(n, 'missing') for n in GPU_TESTS]}")
            elif path == GPU_ONLY_WRONG:
                if on_gpu and outcomes.get("test_gpu_never_copies_the_whole_cache") != "failed":
                    problems.append("the memory check let a copy of the whole cache through")
                other = [name for name in failing if name != "test_gpu_never_copies_the_whole_cache"]
                if other:
                    problems.append(f"the GPU-only wrong solution failed other tests too: {other}")
            elif not failing:
                problems.append(f"{label} passed every test")
    print(f"took {time.monotonic() - started:.0f} s")
    for problem in problems:
        print("PROBLEM: " + problem)
    if problems:
        print("GPU CHECK: FAILED")
        return 1
    print("GPU CHECK: PASSED" if on_gpu else "GPU CHECK: CPU ONLY (the GPU path was not exercised)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

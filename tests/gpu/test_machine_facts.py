"""Results name their machine; the facts come from the sandbox and are treated as hostile text."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

from grader import messages, results
from sandbox.jobs import CaseResult, JobResult
from sandbox.report import MAX_MACHINE_TEXT, parse_machine, parse_report

ROOT = Path(__file__).resolve().parents[2]
H200 = {"device": "NVIDIA H200", "gpu": True, "torch": "2.13.0", "cuda": "13.0", "python": "3.11.2", "image": "llm-dojo-sandbox:cuda-0123456789ab"}


def test_the_facts_are_kept_as_short_clean_text():
    assert parse_machine(H200) == H200
    hostile = {"device": "A\x00B\nC\tD" + "x" * 5000, "torch": 2.13, "cuda": ["12"], "python": "\ud800", "image": "", "gpu": "yes", "extra": "dropped"}
    machine = parse_machine(hostile)
    assert machine["device"].startswith("AB C D") and len(machine["device"]) <= MAX_MACHINE_TEXT and "\x00" not in machine["device"]
    assert machine["python"] == "\ufffd"
    assert set(machine) == {"device", "python"}  # numbers, lists, empty text, a non-boolean gpu and unknown keys are dropped
    assert parse_machine("NVIDIA H200") == {} and parse_machine(None) == {}


def test_a_report_carries_its_machine_and_a_report_without_one_is_still_read():
    assert parse_report({"outcome": "passed", "tests": [], "machine": H200}).machine == H200
    assert parse_report({"outcome": "passed", "tests": []}).machine == {}


def test_the_harness_collects_the_facts_it_promises(monkeypatch):
    spec = importlib.util.spec_from_file_location("dojo_machine_test", ROOT / "sandbox/harness/dojo_harness/machine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "IMAGE", "llm-dojo-sandbox:cpu-abc")
    facts = module.facts()
    assert set(facts) == {"device", "gpu", "torch", "cuda", "python", "image"}
    assert parse_machine(facts) == facts  # what the harness sends survives the host's parser unchanged


def test_the_result_names_its_machine_on_one_line():
    line = results.machine_line(H200)
    assert line == "NVIDIA H200 · torch 2.13.0 · CUDA 13.0 · Python 3.11.2 · image llm-dojo-sandbox:cuda-0123456789ab"
    assert results.machine_line({}) == ""


def _graded(need: str, gpu_seen: bool) -> results.Graded:
    result = JobResult(outcome="passed", tests=[CaseResult("test_a", "passed"), CaseResult("test_gpu", "skipped")], machine={**H200, "gpu": gpu_seen})
    version = SimpleNamespace(gpu=need, hidden_description=lambda name: "")
    return results.present(result, kind="run", version=version)


def test_a_preferred_rung_graded_without_a_gpu_says_its_gpu_checks_were_skipped():
    graded = _graded("preferred", gpu_seen=False)
    assert messages.CPU_FALLBACK_NOTE in graded.message and graded.machine["gpu"] is False
    assert messages.CPU_FALLBACK_NOTE == "Ran on CPU; the GPU-only checks were skipped."
    assert messages.CPU_FALLBACK_NOTE not in _graded("preferred", gpu_seen=True).message
    assert messages.CPU_FALLBACK_NOTE not in _graded("no", gpu_seen=False).message

"""Every rung's hidden suite is stable: its reference passes for any seed, a seed
fixes the generated inputs, and every wrong solution fails (issue 13).

The suites run in this process with ``pytest.main``, without Docker: a small
plugin gives the tests a ``solution`` fixture that is the imported module
itself, ``sandbox/harness`` is on ``sys.path`` for ``grading``, the rung's
folder for ``reference``, and ``DOJO_SEED`` carries the seed as in the
harness. What the process boundary of the real sandbox changes (tuples,
remote handles) is checked by ``manage.py validate_exercises`` instead.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import random
import sys
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from exercises.constants import CHECK_SEEDS
from exercises.domain_guard import Guard
from exercises.loader import read_rung
from exercises.schema import domain_data

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "sandbox" / "harness"
RUNGS = sorted((ROOT / "exercises" / "llm-systems-frontier").glob("*/rungs/[0-9][0-9]-*"))
RUNS = 50
# Seeds are fresh on every run, so coverage adds up across runs; a rung
# whose suite is slow (speculative decoding: ~0.7 s a seed) stops after
# this many seconds, once it has passed at least MIN_RUNS seeds.
SEED_BUDGET_S = 6.0
MIN_RUNS = 10
FIXED_SEED = 20261130
# Every wrong solution must fail with each of these (see below), and every alternative pass.
WRONG_SEEDS = CHECK_SEEDS


class _SolutionPlugin:
    """Provides ``solution`` and records each test's outcome by name."""

    def __init__(self, solution: object) -> None:
        self.value = solution
        self.outcomes: dict[str, str] = {}
        self.messages: dict[str, str] = {}

    @pytest.fixture
    def solution(self) -> object:
        return self.value

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name = report.nodeid.rsplit("::", 1)[-1]
        if report.failed:
            self.outcomes[name] = "failed"
            self.messages[name] = str(report.longrepr)[-1500:]
        elif report.when == "call":
            self.outcomes.setdefault(name, "passed")

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.outcomes["<collection>"] = "failed"
            self.messages["<collection>"] = str(report.longrepr)[-1500:]


def _load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def _rung_context(rung: Path, seed: int) -> Iterator[None]:
    """``grading`` and the rung's ``reference`` importable, ``DOJO_SEED`` set, nothing left behind."""
    saved_path = list(sys.path)
    saved_env = {key: os.environ.get(key) for key in ("DOJO_SEED", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    sys.path[:0] = [str(rung), str(HARNESS)]
    os.environ["DOJO_SEED"] = str(seed)
    # The outer session's plugins (pytest-django...) have no business in the suite.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # One thread, as in the sandbox (1 CPU): small tensors on contended cores run far slower with more.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    _forget_rung_modules()
    try:
        yield
    finally:
        _forget_rung_modules()
        torch.set_num_threads(threads)
        sys.path[:] = saved_path
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _forget_rung_modules() -> None:
    # Every rung has its own ``reference`` and ``test_hidden``: never reuse another rung's.
    rungs_root = str(ROOT / "exercises" / "llm-systems-frontier")
    for name, module in list(sys.modules.items()):
        if name in ("reference", "test_hidden") or (getattr(module, "__file__", None) or "").startswith(rungs_root):
            del sys.modules[name]


def run_hidden(
    rung: Path,
    seed: int,
    solution_path: Path | None = None,
    wrap: Callable[[Any], Any] | None = None,
    *,
    first_failure: bool = False,
    guard: Callable[[Any], Guard] | None = None,
) -> _SolutionPlugin:
    """Run the rung's hidden suite against a solution file (default: its reference).

    ``first_failure`` stops at the first failing test: enough to show a wrong solution is caught.
    ``guard`` makes a domain guard for the reference module: it then judges every call
    the tests make to the reference and to the solution.
    """
    with _rung_context(rung, seed):
        __import__("reference")
        if guard is not None:
            made = guard(sys.modules["reference"])
            made.wrap_reference(sys.modules["reference"])
            wrap = made.wrap_solution
        if solution_path is None:
            # The reference solution is the very module the tests import as ``reference``.
            module: Any = sys.modules["reference"]
        else:
            module = _load(solution_path, f"learner_{solution_path.stem}")
        plugin = _SolutionPlugin(wrap(module) if wrap else module)
        code = pytest.main(
            [
                str(rung / "test_hidden.py"),
                "-q",
                "-p", "no:cacheprovider",
                "-p", "no:stepwise",
                # Their gc.collect() at every session end would dominate 300 short sessions.
                "-p", "no:unraisableexception",
                "-p", "no:threadexception",
                "--noconftest",
                "--import-mode=importlib",
                "--rootdir", str(rung),
                "-c", str(HARNESS / "pytest.ini"),
                "-o", "python_files=test_*.py",
                "--no-header",
                "--no-summary",
                "-o", "console_output_style=classic",
                "--capture=sys",
                *(["-x"] if first_failure else []),
            ],
            plugins=[plugin],
        )
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            plugin.outcomes["<session>"] = f"exit code {code}"
    return plugin


def _failures(plugin: _SolutionPlugin) -> dict[str, str]:
    return {name: plugin.messages.get(name, outcome) for name, outcome in plugin.outcomes.items() if outcome != "passed"}


def _wrong_solutions(rung: Path) -> list[Path]:
    meta = yaml.safe_load((rung / "rung.yaml").read_text())
    return [rung / "wrong" / name for name in sorted(meta.get("wrong_solutions") or {})]


def _alternatives(rung: Path) -> list[Path]:
    meta = yaml.safe_load((rung / "rung.yaml").read_text())
    return [rung / "alternatives" / name for name in sorted(meta.get("alternatives") or {})]


# ---------------------------------------------------------------------------
# A solution that records every call it receives, to compare generated inputs
# ---------------------------------------------------------------------------


def _fingerprint(value: Any, objects: Iterator[int]) -> Any:
    if isinstance(value, torch.Tensor):
        data = value.detach().cpu().contiguous()
        raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""  # 0-D too (shape is kept below)
        return ("tensor", str(value.dtype), tuple(value.shape), hashlib.sha256(raw).hexdigest())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_fingerprint(item, objects) for item in value))
    if isinstance(value, dict):
        return ("dict", tuple((repr(key), _fingerprint(item, objects)) for key, item in value.items()))
    if isinstance(value, _Recorder):
        return ("object", value._number)
    return ("value", repr(value))


class _Recorder:
    """Forwards attribute reads and calls to ``target``, logging every call with its arguments."""

    def __init__(self, target: Any, log: list[Any], objects: Iterator[int], home: str) -> None:
        # Objects are numbered in order of creation (an id() can be reused once one is collected).
        object.__setattr__(self, "_number", next(objects))
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_log", log)
        object.__setattr__(self, "_objects", objects)
        object.__setattr__(self, "_home", home)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            self._log.append((_fingerprint(self, self._objects), name, _fingerprint(args, self._objects), _fingerprint(kwargs, self._objects)))
            result = value(*args, **kwargs)
            if type(result).__module__ == self._home:
                return _Recorder(result, self._log, self._objects, self._home)
            return result

        return call


def _recorded_run(rung: Path, seed: int) -> tuple[list[Any], _SolutionPlugin]:
    log: list[Any] = []
    plugin = run_hidden(rung, seed, wrap=lambda module: _Recorder(module, log, itertools.count(), module.__name__))
    return log, plugin


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_it_finds_the_rungs() -> None:
    assert len(RUNGS) >= 6, f"expected the module's rungs under exercises/llm-systems-frontier, found {RUNGS}"


@pytest.mark.parametrize("rung", RUNGS, ids=[rung.name for rung in RUNGS])
def test_it_passes_the_reference_for_many_fresh_seeds(rung: Path) -> None:
    seeds = random.SystemRandom().sample(range(2**31), RUNS)
    failed: dict[int, dict[str, str]] = {}
    started = time.monotonic()
    ran = 0
    for seed in seeds:
        failures = _failures(run_hidden(rung, seed))
        ran += 1
        if failures:
            failed[seed] = failures
        if ran >= MIN_RUNS and time.monotonic() - started > SEED_BUDGET_S:
            break
    elapsed = time.monotonic() - started
    assert not failed, f"{rung.name}: the reference failed its hidden suite for {len(failed)} of {ran} seeds: {dict(itertools.islice(failed.items(), 2))}"
    print(f"{rung.name}: {ran} seeds in {elapsed:.1f} s")


@pytest.mark.parametrize("rung", RUNGS, ids=[rung.name for rung in RUNGS])
def test_it_generates_the_same_inputs_for_the_same_seed(rung: Path) -> None:
    first, plugin = _recorded_run(rung, FIXED_SEED)
    assert not _failures(plugin), f"{rung.name}: the reference failed behind a recording proxy: {_failures(plugin)}"
    second, _ = _recorded_run(rung, FIXED_SEED)
    other, _ = _recorded_run(rung, FIXED_SEED + 1)
    assert first, f"{rung.name}: the suite never called the solution"
    assert first == second, f"{rung.name}: two runs with seed {FIXED_SEED} called the solution with different inputs"
    assert first != other, f"{rung.name}: seeds {FIXED_SEED} and {FIXED_SEED + 1} gave the same inputs: the suite ignores job_seed()"


WRONG = [(rung, path) for rung in RUNGS for path in _wrong_solutions(rung)]


@pytest.mark.parametrize(("rung", "wrong"), WRONG, ids=[f"{rung.name}/{path.stem}" for rung, path in WRONG])
def test_it_fails_every_wrong_solution(rung: Path, wrong: Path) -> None:
    # Several seeds: a wrong solution that only a generated test catches may
    # pass for some seeds (two blind ones passed for 3 and 17 of 40), and a
    # learner's Submit gets a seed of its own. The seeds are fixed, so a
    # failure here reproduces.
    for seed in WRONG_SEEDS:
        plugin = run_hidden(rung, seed, wrong, first_failure=True)
        assert plugin.outcomes, f"{rung.name}: no hidden test ran for {wrong.name}"
        assert _failures(plugin), f"{rung.name}: wrong/{wrong.name} passes every hidden test with seed {seed}"


ALTERNATIVES = [(rung, path) for rung in RUNGS for path in _alternatives(rung)]


@pytest.mark.parametrize(("rung", "alternative"), ALTERNATIVES, ids=[f"{rung.name}/{path.stem}" for rung, path in ALTERNATIVES])
def test_it_passes_every_alternative(rung: Path, alternative: Path) -> None:
    # An independent correct solution must pass whatever seed a Submit draws (issue 58).
    for seed in CHECK_SEEDS:
        failures = _failures(run_hidden(rung, seed, alternative))
        assert not failures, f"{rung.name}: alternatives/{alternative.name} fails with seed {seed}: {dict(itertools.islice(failures.items(), 2))}"


def _domain(rung: Path) -> dict[str, Any]:
    return domain_data(read_rung(rung).meta)


DOMAINS = [rung for rung in RUNGS if yaml.safe_load((rung / "rung.yaml").read_text()).get("domain")]


@pytest.mark.parametrize("rung", DOMAINS, ids=[rung.name for rung in DOMAINS])
def test_it_calls_the_reference_only_inside_its_domain(rung: Path) -> None:
    domain = _domain(rung)
    guards: list[Guard] = []

    def make(reference: Any) -> Guard:
        guards.append(Guard(domain, reference))
        return guards[-1]

    for seed in CHECK_SEEDS:
        plugin = run_hidden(rung, seed, guard=make)
        records = guards[-1].records
        assert not records, f"{rung.name}, seed {seed}: testing undocumented behaviour: " + "; ".join(f"{test}: {call}" for test, call in records[:5])
        assert not _failures(plugin), f"{rung.name}, seed {seed}: the reference fails behind its domain guard: {_failures(plugin)}"

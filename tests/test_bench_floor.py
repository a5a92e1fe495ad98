"""The bench's throughput floor runs pytest as the harness does (bench/bench.py).

The floor is what this machine could grade with no isolation at all; a floor
that pays for work the sandbox's own pytest never does (a garbage collection
over torch's objects at the end of every session, third-party plugins)
reads slower than the machine is and flatters ``burst_vs_floor``.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import bench
from bench.rungs import rung_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sandbox" / "harness"))

from dojo_harness.plugin import SKIPPED_PLUGINS  # type: ignore[import-not-found]


def test_a_floor_job_grades_the_rung_without_a_garbage_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[Any] = []
    real_collect = gc.collect

    def counting_collect(*args: Any) -> int:
        collections.append(args)
        return real_collect(*args)

    # Whatever the floor imports of torch and the rung is imported before counting.
    with bench._harness_pytest():
        bench._floor_job("kv-cache-size", "submit")
        monkeypatch.setattr(gc, "collect", counting_collect)
        bench._floor_job("kv-cache-size", "submit")  # SystemExit if a test failed
        bench._floor_job("gqa-kv-cache", "run")
    assert collections == []


def test_the_floor_leaves_out_what_the_harness_leaves_out(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_main(args: list[str], plugins: list[object]) -> int:
        seen.append(list(args))
        assert os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"
        return 0

    monkeypatch.setattr(pytest, "main", fake_main)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    with bench._harness_pytest():
        bench._floor_job("kv-cache-size", "run")
    # Third-party plugins are back on afterwards (the bench process goes on).
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ
    (args,) = seen
    left_out = {args[i + 1].removeprefix("no:") for i, arg in enumerate(args) if arg == "-p"}
    assert left_out == set(SKIPPED_PLUGINS)
    assert "unraisableexception" in left_out


def _fork_each(tmp_path: Path, tests: str) -> tuple[Any, int]:
    from bench.fork_each import ForkEachTest

    # A module name of its own: pytest keeps imported test modules in sys.modules.
    (tmp_path / f"test_children_{tmp_path.name}.py").write_text(tests)
    plugin = ForkEachTest()
    with bench._harness_pytest():  # the contract floor's own pytest invocation
        code = bench._floor_pytest(tmp_path, plugins=[plugin])
    return plugin, code


def test_the_contract_floor_runs_each_test_in_a_child_of_its_own(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    body = f"    (pathlib.Path({str(pids)!r}) / str(os.getpid())).touch()\n"
    plugin, code = _fork_each(tmp_path, "import os\nimport pathlib\n\n" + "".join(f"def test_{n}():\n{body}\n" for n in range(3)))
    assert code == 0
    assert plugin.outcomes == {"test_0": "passed", "test_1": "passed", "test_2": "passed"}
    assert plugin.all_passed()
    children = {int(path.name) for path in pids.iterdir()}
    assert len(children) == 3 and os.getpid() not in children


def test_the_contract_floor_hears_a_failure_or_a_dead_child(tmp_path: Path) -> None:
    plugin, _ = _fork_each(
        tmp_path,
        "import os\n\ndef test_fails():\n    assert 1 == 2\n\ndef test_dies():\n    os._exit(3)\n\ndef test_passes():\n    pass\n",
    )
    assert plugin.outcomes == {"test_fails": "failed", "test_dies": "error", "test_passes": "passed"}
    assert not plugin.all_passed()


def test_a_contract_floor_submit_runs_every_hidden_test_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.fork_each import ForkEachTest

    seen: list[ForkEachTest] = []

    class Watched(ForkEachTest):
        def __init__(self) -> None:
            super().__init__()
            seen.append(self)

    monkeypatch.setattr(bench, "ForkEachTest", Watched)
    with bench._harness_pytest():
        bench._floor_job("kv-cache-size", "run", contract=True)
        assert seen == []  # a Run's grading has no re-run
        bench._floor_job("kv-cache-size", "submit", contract=True)  # SystemExit if a test failed
    (rerun,) = seen
    hidden = (rung_dir("kv-cache-size") / "test_hidden.py").read_text()
    names = {line.split("(")[0].removeprefix("def ") for line in hidden.splitlines() if line.startswith("def test_")}
    assert set(rerun.outcomes) == names and len(names) >= 10
    assert rerun.all_passed()


def _floor(per_min: float, load: float) -> dict[str, Any]:
    return {"floor_jobs": int(per_min / 3), "floor_cores": 2, "floor_jobs_per_min": per_min, "floor_load": load}


def test_the_faster_of_the_two_floors_counts_whichever_came_first() -> None:
    slow_then_fast = bench.faster_floor(_floor(765.7, 1.4), _floor(1098.6, 1.3))
    fast_then_slow = bench.faster_floor(_floor(1098.6, 1.3), _floor(765.7, 1.4))
    for merged in (slow_then_fast, fast_then_slow):
        assert merged["floor_jobs_per_min"] == 1098.6
        assert merged["floor_load"] == 1.3
        assert merged["floor_jobs"] == 366
    # Both readings are kept, in the order they were taken, with their ratio.
    assert (slow_then_fast["floor_before_jobs_per_min"], slow_then_fast["floor_after_jobs_per_min"]) == (765.7, 1098.6)
    assert slow_then_fast["floor_after_vs_before"] == round(1098.6 / 765.7, 3)
    assert fast_then_slow["floor_after_vs_before"] == round(765.7 / 1098.6, 3)
    assert fast_then_slow["floor_before_load"] == 1.3 and fast_then_slow["floor_after_load"] == 1.4


def test_a_floor_job_lists_nothing_above_its_own_folder(tmp_path: Path) -> None:
    """pytest lists every entry of each folder above the one it collects unless
    told where to stop; the floor must not pay for a crowded temporary folder
    (nor for whatever else sits beside its job's folder)."""

    class ListedFolders:
        def __init__(self) -> None:
            self.folders: set[Path] = set()

        def pytest_ignore_collect(self, collection_path: Path) -> None:
            self.folders.add(collection_path.parent)

    for n in range(50):  # a crowded neighbourhood
        (tmp_path / f"neighbour-{n}").mkdir()
    work = tmp_path / "job"
    work.mkdir()
    (work / "test_one.py").write_text("def test_one():\n    assert True\n")
    listed = ListedFolders()
    with bench._harness_pytest():
        assert bench._floor_pytest(work, plugins=[listed]) == 0
    assert listed.folders == {work}

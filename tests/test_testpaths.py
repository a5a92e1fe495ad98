"""Every folder of tests is one that ``make test`` collects.

pytest collects only ``testpaths`` when it is given no path: a new app's
``tests/`` folder left out of that list is a suite that never runs, and
passes in silence (``core/tests`` did, for an afternoon).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_PYTHON_TESTS = {".venv", "node_modules", "var", ".cache", ".git"}


def test_every_folder_of_tests_is_in_testpaths() -> None:
    testpaths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    collected = [ROOT / path for path in testpaths]
    folders = {
        path.parent
        for path in ROOT.rglob("test_*.py")
        if not NOT_PYTHON_TESTS & set(path.relative_to(ROOT).parts) and "llm-systems-frontier" not in path.parts
    }
    missed = sorted(str(folder.relative_to(ROOT)) for folder in folders if not any(folder == top or top in folder.parents for top in collected))
    assert missed == []

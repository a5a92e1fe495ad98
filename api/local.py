"""What a learner needs to run a rung's visible tests on their own machine.

The sandbox runs the visible tests beside ``grading.py`` (the harness's
assertion helpers, sandbox/harness/grading.py) and gives them the fixture
``solution``: the learner's module behind a proxy. Locally there is no
proxy: the conftest imports ``solution.py`` from the folder itself, so the
same tests fail with the same assertion messages, without Docker. The file
is read as text, never imported: the helpers are public (the harness's
source is in this repository) and nothing of the platform runs on the
learner's side.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from django.conf import settings

HARNESS_HELPERS = ("grading.py",)

LOCAL_CONFTEST = '''"""Written by `dojo fetch`: the visible tests get your solution.py as the fixture `solution`."""

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def solution():
    sys.modules.pop("solution", None)
    return importlib.import_module("solution")
'''


@functools.cache
def _helper_text(name: str) -> str:
    return (Path(settings.BASE_DIR) / "sandbox" / "harness" / name).read_text(encoding="utf-8")


def imported_helpers(visible_tests: str) -> dict[str, str]:
    """The harness helpers the visible tests import (``from grading import ...``), by file name."""
    imported = set(re.findall(r"^\s*(?:from|import)\s+(\w+)", visible_tests, flags=re.MULTILINE))
    return {name: _helper_text(name) for name in HARNESS_HELPERS if name.removesuffix(".py") in imported}


def local_files(visible_tests: str) -> dict[str, str]:
    """The files of a rung's local folder besides the instructions and the solution."""
    # pytest.ini: the folder is its own pytest root, as the job folder is in the sandbox (no project's settings apply).
    return {"test_visible.py": visible_tests, **imported_helpers(visible_tests), "conftest.py": LOCAL_CONFTEST, "pytest.ini": "[pytest]\n"}

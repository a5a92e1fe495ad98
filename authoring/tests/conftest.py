"""Fixtures of authoring's tests (the personas are the root conftest's): fast password hashing,
and the shared fake runner (``sandbox.testing``) for tests where Docker is not the point."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.testing import FakeRunner


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # Each persona's password is hashed once per test; the default hasher is slow by design.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def in_process_runner() -> FakeRunner:
    return FakeRunner.in_process()


ADD_RUNG: dict[str, Any] = {
    "title": "Add two numbers",
    "summary": "A warm-up.",
    "order": "1",
    "minutes": "5",
    "difficulty": "easy",
    "limit_time_s": "10",
    "limit_memory_mb": "256",
    "limit_cpus": "1.0",
    "limit_pids": "64",
    "limit_tmpfs_mb": "16",
    "limit_output_kb": "64",
    "instructions_md": "# Add two numbers\r\n\r\nReturn $a + b$ for any numbers.\r\n",
    "starter_code": "def add(a, b):\r\n    raise NotImplementedError\r\n",
    "reference_code": "def add(a, b):\r\n    return a + b\r\n",
    "visible_tests": "def test_small_numbers(solution):\r\n    assert solution.add(2, 3) == 5\r\n",
    "hidden_tests": (
        "def test_negative_numbers(solution):\r\n    assert solution.add(-2, -3) == -5\r\n\r\n\r\n"
        "def test_zero(solution):\r\n    assert solution.add(0, 7) == 7\r\n"
    ),
    "hidden-TOTAL_FORMS": "2",
    "hidden-INITIAL_FORMS": "0",
    "hidden-0-name": "test_negative_numbers",
    "hidden-0-description": "Two negative numbers.",
    "hidden-0-visibility": "hidden",
    "hidden-1-name": "test_zero",
    "hidden-1-description": "Zero on one side.",
    "hidden-1-visibility": "after_solve",
    "wrong-TOTAL_FORMS": "3",
    "wrong-INITIAL_FORMS": "0",
    "wrong-0-name": "ignores_negatives.py",
    "wrong-0-description": "Treats negative numbers as zero.",
    "wrong-0-code": "def add(a, b):\r\n    return max(a, 0) + max(b, 0)\r\n",
    "wrong-1-name": "multiplies.py",
    "wrong-1-description": "Multiplies instead of adding.",
    "wrong-1-code": "def add(a, b):\r\n    return a * b + 1 if a else a * b\r\n",
    "wrong-2-name": "absolute.py",
    "wrong-2-description": "Adds the absolute values.",
    "wrong-2-code": "def add(a, b):\r\n    return abs(a) + abs(b)\r\n",
    # Two independent correct solutions and the documented domain: a Check requires both (issue 58).
    "alt-TOTAL_FORMS": "2",
    "alt-INITIAL_FORMS": "0",
    "alt-0-name": "swapped.py",
    "alt-0-description": "Adds in the other order.",
    "alt-0-code": "def add(a, b):\r\n    return b + a\r\n",
    "alt-1-name": "builtin_sum.py",
    "alt-1-description": "Uses sum().",
    "alt-1-code": "def add(a, b):\r\n    return sum((a, b))\r\n",
    "domain_yaml": "add:\r\n  args:\r\n    a: {type: number}\r\n    b: {type: number}\r\n",
}

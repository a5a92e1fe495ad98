"""The source of each test function of a rung's test file, as a learner who solved it may read it."""

from __future__ import annotations

import ast

from sandbox.pyparse import parse_python


def test_sources(tests: str) -> dict[str, str]:
    """Each top-level test function of a test file, by name: its source, decorators included (none if it does not parse)."""
    try:
        tree = parse_python(tests)
    except (SyntaxError, ValueError):
        return {}
    lines = tests.splitlines()
    sources: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            sources[node.name] = "\n".join(lines[first - 1 : node.end_lineno]) + "\n"
    return sources


test_sources.__test__ = False  # type: ignore[attr-defined]  # pytest: a helper, not a test

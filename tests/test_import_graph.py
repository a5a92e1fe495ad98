"""The import graph: apps depend on each other one way, and tasks are leaves.

Every import counts, including those inside functions (a lazy import hides
a cycle, it does not remove it). Tests and migrations are left out.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("core", "exercises", "grader", "authoring", "mentor", "frontend", "lti", "aids")
LIBRARIES = ("sandbox",)
SKIPPED_PARTS = {"tests", "migrations", "harness", "node_modules", "llm-systems-frontier"}


def _modules() -> dict[str, Path]:
    found = {}
    for top in (*APPS, *LIBRARIES):
        for path in (ROOT / top).rglob("*.py"):
            if SKIPPED_PARTS & set(path.relative_to(ROOT).parts):
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path) -> set[str]:
    """Absolute names of every module ``name`` imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {imported for imported in _imports(name, path) if imported in modules} for name, path in modules.items()}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_two_apps_import_each_other():
    between: dict[str, set[str]] = defaultdict(set)
    for module, imported in _graph().items():
        for target in imported:
            if module.split(".")[0] != target.split(".")[0]:
                between[module.split(".")[0]].add(target.split(".")[0])
    assert _cycles(between) == [], dict(between)


def test_tasks_are_leaves():
    importers = {module: sorted(target for target in imported if target.rpartition(".")[2] == "tasks")
                 for module, imported in _graph().items()}
    assert {module: tasks for module, tasks in importers.items() if tasks} == {}


def test_no_module_cycles_inside_an_app():
    assert _cycles(_graph()) == []


def test_sandbox_knows_nothing_of_the_platform():
    for module, path in _modules().items():
        if module.split(".")[0] == "sandbox":
            outside = {name for name in _imports(module, path) if name.split(".")[0] in (*APPS, "django", "celery", "config")}
            assert outside == set(), module

"""The intended architecture, as a test: docs/architecture.yaml lists the parts
and the imports allowed between them, and every import of the code must be one.

Every import counts, including those inside functions (a lazy import hides
a cycle, it does not remove it) and those only for type checking. Tests,
migrations and the catalog's exercise code are left out.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DESCRIPTION = ROOT / "docs" / "architecture.yaml"
SKIPPED_PARTS = {"tests", "migrations", "node_modules", "llm-systems-frontier", "__pycache__"}
# Folders of the repository that hold no Python of the platform.
NOT_CODE = {"docs", "deploy", "var", "build", "tests", "node_modules"}


@dataclass(frozen=True)
class Module:
    name: str
    part: str
    path: Path


def _description() -> dict[str, Any]:
    description: dict[str, Any] = yaml.safe_load(DESCRIPTION.read_text())
    return description


def _files(path: Path) -> list[Path]:
    """The Python files at ``path``, not looking into skipped folders."""
    if path.is_file():
        return [path] if path.suffix == ".py" else []
    found: list[Path] = []
    for folder, subfolders, names in os.walk(path):
        subfolders[:] = sorted(name for name in subfolders if name not in SKIPPED_PARTS and not name.startswith("."))
        found.extend(Path(folder) / name for name in sorted(names) if name.endswith(".py"))
    return found


def _modules(description: dict[str, Any]) -> dict[str, Module]:
    """Every module of every part, named as its part's import root names it.

    A file claimed by two parts belongs to the one with the longer path
    (sandbox/harness/ is the harness, the rest of sandbox/ is sandbox).
    """
    owner: dict[Path, tuple[int, str, Path]] = {}
    for part, spec in description["parts"].items():
        root = ROOT / spec.get("root", ".")
        for claimed in spec["paths"]:
            for path in _files(ROOT / claimed):
                depth = len(Path(claimed).parts)
                if path not in owner or owner[path][0] < depth:
                    owner[path] = (depth, part, root)
    found = {}
    for path, (_, part, root) in owner.items():
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        found[name] = Module(name, part, path)
    return found


def _imports(module: Module) -> set[str]:
    """Absolute names of every module ``module`` imports, and of the names it imports from them."""
    path = module.path
    package = module.name if path.name == "__init__.py" else module.name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)]
                imported = ".".join([*base, node.module] if node.module else base)
            else:
                imported = node.module or ""
            names.add(imported)
            names.update(f"{imported}.{alias.name}" for alias in node.names)
    return names


def _resolved(name: str, modules: dict[str, Module]) -> str | None:
    """The module of ours that ``name`` is (or is inside), or None for a library."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, module in modules.items():
        targets = {_resolved(imported, modules) for imported in _imports(module)}
        graph[name] = {target for target in targets if target is not None and target != name}
    return graph


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
        for target in sorted(edges.get(node, ())):
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


def _unallowed_imports(description: dict[str, Any]) -> list[str]:
    """Each import from one part into another that the description has no arrow for."""
    modules = _modules(description)
    parts = description["parts"]
    found = []
    for name, targets in sorted(_graph(modules).items()):
        source = modules[name].part
        for target in sorted(targets):
            into = modules[target].part
            if into != source and into not in parts[source]["imports"]:
                found.append(f"{modules[name].path.relative_to(ROOT)} imports {target}: {source} -> {into} is not an arrow of {DESCRIPTION.relative_to(ROOT)}")
    return found


DESCRIBED = _description()
MODULES = _modules(DESCRIBED)
GRAPH = _graph(MODULES)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_import_between_parts_is_an_allowed_arrow():
    assert _unallowed_imports(DESCRIBED) == []


def test_a_forbidden_import_fails_the_test(tmp_path):
    """The check itself: the description with one arrow taken away finds the imports that use it."""
    import copy

    narrowed = copy.deepcopy(DESCRIBED)
    narrowed["parts"]["grader"]["imports"].remove("exercises")
    assert any("grader -> exercises is not an arrow" in line for line in _unallowed_imports(narrowed))


def test_the_arrows_that_must_never_exist_are_not_allowed():
    parts = DESCRIBED["parts"]
    for source, target, why in DESCRIBED["never"]:
        assert source in parts and target in parts, (source, target)
        assert target not in parts[source]["imports"], f"{source} -> {target} is allowed, but {why}"


def test_the_parts_import_each_other_one_way():
    arrows = {part: set(spec["imports"]) for part, spec in DESCRIBED["parts"].items()}
    assert all(target in arrows for targets in arrows.values() for target in targets)
    assert _cycles(arrows) == []


@pytest.mark.parametrize("part", sorted(DESCRIBED["never_outside"]))
def test_a_part_does_not_import_the_libraries_it_must_not(part):
    forbidden = set(DESCRIBED["never_outside"][part])
    found = {
        f"{module.path.relative_to(ROOT)}: {imported}"
        for module in MODULES.values()
        if module.part == part
        for imported in _imports(module)
        if imported.split(".")[0] in forbidden
    }
    assert found == set()


def test_tasks_are_leaves():
    leaves = tuple(DESCRIBED["leaves"])
    importers = {name: sorted(target for target in targets if target.rpartition(".")[2] in leaves) for name, targets in GRAPH.items()}
    assert {name: tasks for name, tasks in importers.items() if tasks} == {}


def test_no_module_cycles():
    """No two modules import each other, even through others; docs/architecture.yaml lists the circles still open."""
    assert _cycles(GRAPH) == sorted(sorted(circle) for circle in DESCRIBED.get("open_circles") or [])


def test_every_python_folder_belongs_to_a_part():
    claimed = {Path(path).parts[0] for spec in DESCRIBED["parts"].values() for path in spec["paths"]}
    folders = {path.name for path in ROOT.iterdir() if path.is_dir() and not path.name.startswith(".") and path.name not in NOT_CODE | SKIPPED_PARTS}
    assert {folder for folder in folders if _files(ROOT / folder)} - claimed == set()


def test_the_architecture_page_draws_the_same_parts_and_arrows():
    """docs/architecture.md's diagram: ``a[...] --> b & c`` for each part and the parts it may import."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    diagram = page.split("```mermaid\nflowchart BT\n", 1)[1].split("```", 1)[0]
    drawn: dict[str, set[str]] = {}
    for line in diagram.splitlines():
        source, _, targets = line.strip().partition("-->")
        drawn[source.split("[")[0].strip()] = {target.strip() for target in targets.split("&") if target.strip()}
    assert drawn == {part: set(spec["imports"]) for part, spec in DESCRIBED["parts"].items()}

"""Every regular expression that reads a learner's or an instructor's text
finishes in under 50 ms on the worst text we can make for it at its longest.

A mentor question of 240 digits and 736 spaces backtracked for 55 s in the
calculator's reading, inside the transaction that held SQLite's write lock
(issue 55). The patterns are found, not listed: every module-level pattern
of the product code, registered with ``core.untrusted_patterns`` (which
gives its longest input) or not, and every pattern written in a call
(``re.fullmatch(NAME, key)``) is timed; those not registered at the longest
text a form takes. Only those named below as reading our own text are not. Each registered pattern then meets inputs built from its own
words and characters: runs of digits, spaces, its literals and keywords,
two runs one after another, after each of its words, lines that each open
what never closes, ending in a character that makes the match fail late.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from core import untrusted_patterns
from core.untrusted_patterns import REGISTRY, UntrustedPattern

ROOT = Path(__file__).resolve().parents[2]
APPS = ["core", "mentor", "aids", "frontend", "grader", "authoring", "lti", "exercises"]
BUDGET_S = 0.050

# Patterns that only ever read text the platform wrote itself.
OWN_TEXT = {
    "core.markdown._TOKEN_RE": "the math placeholders render_markdown itself put in the HTML",
}


def _product_modules() -> Iterator[str]:
    for app in APPS:
        package = importlib.import_module(app)
        yield app
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{app}."):
            if ".tests" in info.name or ".migrations" in info.name:
                continue
            yield info.name


# Import every product module first, so that each registers its patterns before they are parametrized.
_MODULES = [importlib.import_module(name) for name in _product_modules()]


# A pattern found in the code but not registered is timed at this length:
# the longest text a form takes (a problem report's code).
UNREGISTERED_MAX_CHARS = 64 * 1024


def _unregistered_module_patterns() -> list[UntrustedPattern]:
    """Module-level patterns compiled without ``untrusted``: timed at UNREGISTERED_MAX_CHARS."""
    registered = {id(entry.pattern) for entry in REGISTRY}
    found: dict[int, UntrustedPattern] = {}
    for module in _MODULES:
        for attribute, value in vars(module).items():
            for each in value if isinstance(value, (list, tuple)) else [value]:
                key = f"{module.__name__}.{attribute}"
                if isinstance(each, re.Pattern) and id(each) not in registered and key not in OWN_TEXT:
                    found.setdefault(id(each), UntrustedPattern(each, UNREGISTERED_MAX_CHARS, f"{key} (unregistered)"))
    return list(found.values())


def _resolve(node: ast.expr, module: ModuleType) -> object:
    """The value an argument names: a literal, a module-level name, or an attribute of an imported module."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return vars(module).get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return getattr(vars(module).get(node.value.id), node.attr, None)
    return None


# Django's form validators search a field's value with Python's re too.
_DJANGO_REGEX_CALLS = {"RegexField", "RegexValidator"}


def _pattern_argument(call: ast.Call, at_module_level: set[int]) -> ast.expr | None:
    """The pattern a call compiles or matches with: ``re.search(P, ...)``, ``RegexField(regex=P)``; None for other calls."""
    function = call.func
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and function.value.id == "re":
        if function.attr == "escape" or (function.attr == "compile" and id(call) in at_module_level):
            return None
        return call.args[0] if call.args else call
    name = function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""
    if name in _DJANGO_REGEX_CALLS:
        return next((keyword.value for keyword in call.keywords if keyword.arg == "regex"), call.args[0] if call.args else call)
    return None


def _inline_patterns() -> tuple[list[UntrustedPattern], list[str]]:
    """Patterns written in calls (``re.search(r"...", text)``, ``re.fullmatch(NAME, key)``, a form's
    ``RegexField(regex=...)``), and where one could not be read."""
    found: list[UntrustedPattern] = []
    unresolved: list[str] = []
    for module in _MODULES:
        if module.__file__ is None or module.__name__ == untrusted_patterns.__name__:
            continue
        path = Path(module.__file__)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        at_module_level = {id(node) for statement in tree.body if isinstance(statement, (ast.Assign, ast.AnnAssign)) for node in ast.walk(statement)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            argument = _pattern_argument(node, at_module_level)
            if argument is None:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            source = _resolve(argument, module)
            flags = next((_resolve(keyword.value, module) for keyword in node.keywords if keyword.arg == "flags"), 0)
            if isinstance(source, re.Pattern):
                source, flags = source.pattern, source.flags
            if not isinstance(source, str) or not isinstance(flags, int):
                unresolved.append(where)
                continue
            found.append(UntrustedPattern(re.compile(source, flags), UNREGISTERED_MAX_CHARS, f"the pattern at {where}"))
    return found, unresolved


_INLINE, _UNRESOLVED = _inline_patterns()
ALL_PATTERNS = REGISTRY + _unregistered_module_patterns() + _INLINE


def test_every_pattern_in_the_code_can_be_read_by_this_test() -> None:
    assert not _UNRESOLVED, f"compile these at module level through untrusted(), so that they are timed: {_UNRESOLVED}"


# --- The worst cases --------------------------------------------------------------------

_CLASSES = ["0", " ", "\t", "\n", "a", "A", "-", ".", ",", "_", "x"]
_ESCAPES = {"d", "s", "w", "b", "B", "S", "D", "W", "A", "Z"}


def _literals(source: str) -> list[str]:
    """The pattern's own words and runs of punctuation, as a learner could type them."""
    words = set(re.findall(r"(?<!\\)[A-Za-z]{2,}", source))
    runs = set()
    run = ""
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):
            following = source[i + 1]
            if following in _ESCAPES or following.isalnum():
                runs.add(run)
                run = ""
            else:
                run += following
            i += 2
            continue
        if char in "()[]{}|?*+^$.":
            runs.add(run)
            run = ""
        elif not char.isalnum() and not char.isspace():
            run += char
        else:
            runs.add(run)
            run = ""
        i += 1
    runs.add(run)
    return sorted((words | runs) - {""}, key=lambda text: (len(text), text))[:24]


def adversarial_inputs(entry: UntrustedPattern) -> Iterator[str]:
    """Texts of ``entry.max_chars`` characters that make a backtracking matcher work hardest."""
    n = entry.max_chars
    fragments = list(dict.fromkeys(_CLASSES + _literals(entry.pattern.pattern)))
    for a in fragments:
        yield (a * n)[:n]
        yield (a * n)[: n - 1] + "\x00"
    for a in fragments:
        for b in fragments:
            if a != b:
                half = n // 2
                yield ((a * half)[:half] + (b * n))[: n - 1] + "\x00"
                yield ((a + b) * n)[: n - 1] + "\x00"
    for a in fragments:
        for b in _CLASSES[:6]:
            yield ((a + b + "\n") * n)[: n - 1] + "\x00"  # lines, each opening what never closes
    for word in _literals(entry.pattern.pattern):
        for a in _CLASSES[:6]:
            for b in _CLASSES[:6]:
                rest = n - len(word) - 1
                yield word + (a * (rest // 2))[: rest // 2] + (b * rest)[: rest - rest // 2] + "\x00"


def _time_all_uses(pattern: re.Pattern[str], text: str) -> float:
    started = time.perf_counter()
    for _ in pattern.finditer(text):
        pass
    pattern.match(text)
    pattern.fullmatch(text)
    return time.perf_counter() - started


@pytest.mark.sqlite_pass
@pytest.mark.parametrize("entry", ALL_PATTERNS, ids=lambda entry: entry.pattern.pattern[:60])
def test_the_worst_case_of_each_untrusted_pattern_takes_under_50_ms(entry: UntrustedPattern) -> None:
    slowest = (0.0, "")
    for text in adversarial_inputs(entry):
        took = _time_all_uses(entry.pattern, text)
        if took > BUDGET_S:
            # Once more, the fastest of three: a loaded machine must not fail a linear pattern.
            took = min(_time_all_uses(entry.pattern, text) for _ in range(3))
        slowest = max(slowest, (took, text))
    took, text = slowest
    assert took < BUDGET_S, f"{entry.reads}: {took * 1000:.0f} ms on {text[:80]!r}... ({len(text)} characters)"


def test_the_known_pathological_question_is_among_the_generated_ones() -> None:
    """The issue's 55-second question has the shape the generator makes: digits, then spaces, then a stop."""
    from mentor.calculators import parse

    entry = next(entry for entry in REGISTRY if entry.pattern is parse._TOKENS[0])
    assert any(text.startswith("0" * 400) and text[500:900] == " " * 400 for text in adversarial_inputs(entry))

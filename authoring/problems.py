"""A draft's problems in the rung form's own words, next to the field they are about.

The catalog loader speaks of files and YAML keys (``01-add/rung.yaml: key
'hidden_tests.test_x': missing``), which is right for someone editing the
files, but the rung form shows no YAML: there the author needs the field
("Hidden tests") and what to do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.constants import MARKDOWN_MAX_CHARS
from core.untrusted_patterns import untrusted

# The form field (and the label the form shows) for each file of a rung folder.
FILE_FIELDS = {
    "instructions.md": ("instructions_md", "Instructions"),
    "starter.py": ("starter_code", "Starter code"),
    "reference.py": ("reference_code", "Reference solution"),
    "test_visible.py": ("visible_tests", "Visible tests"),
    "test_hidden.py": ("hidden_tests", "Hidden tests"),
}
# The form field for each top-level key of rung.yaml.
KEY_FIELDS = {
    "title": ("title", "Title"),
    "summary": ("summary", "Summary"),
    "order": ("order", "Order"),
    "minutes": ("minutes", "Minutes"),
    "difficulty": ("difficulty", "Difficulty"),
    "gpu": ("gpu", "Needs a GPU"),
    "limits": ("limits", "Limits"),
    "hidden_tests": ("hidden_tests", "Hidden tests"),
    "wrong_solutions": ("wrong_solutions", "Wrong solutions"),
    "equivalent_mutants": ("equivalent_mutants_yaml", "Equivalent mutants"),
    "hints": ("hints_text", "Hints"),
    "alternatives": ("alternatives", "Alternatives"),
    "domain": ("domain_yaml", "Documented domain"),
}
GENERAL = ("general", "The draft")

# "<path/><file>: [key '<key>': ]<message>". The file name is cut off the head
# in _split_file: a lazy path before a greedy name backtracked quadratically.
_PROBLEM = untrusted(r"^(?P<head>[^:]*): (?:key '(?P<key>[^']*)': )?(?P<message>.*)$", max_chars=MARKDOWN_MAX_CHARS,
                     reads="a loader message about an instructor's draft", flags=re.DOTALL)


def _split_file(head: str) -> tuple[str, str]:
    """``head`` as (its path, the file name that ends it: word characters, dots and hyphens)."""
    start = len(head)
    while start > 0 and (head[start - 1].isalnum() or head[start - 1] in "_.-"):
        start -= 1
    return head[:start], head[start:]


@dataclass(frozen=True)
class FieldProblem:
    field: str  # the form field's name (the anchor the page links to)
    label: str
    message: str

    def __str__(self) -> str:
        return f"{self.label}: {self.message}"


def _rung_yaml(key: str, message: str) -> FieldProblem:
    head, _, rest = key.partition(".")
    field, label = KEY_FIELDS.get(head, GENERAL)
    if head == "hidden_tests" and rest:
        if message.startswith("missing"):
            return FieldProblem(field, label, f"the test {rest} needs a description in the table under the hidden tests.")
        if message.startswith("no such test"):
            return FieldProblem(field, label, f"the table describes {rest}, but the hidden tests define no such function.")
    if head == "wrong_solutions" and rest:
        if message.startswith("missing"):
            return FieldProblem(field, label, f"{rest} needs a description of the mistake it makes.")
        if message.startswith("no such file"):
            return FieldProblem(field, label, f"{rest} is described but has no code.")
    if head == "limits" and rest:
        return FieldProblem(field, label, f"{rest.replace('_', ' ')}: {message}")
    return FieldProblem(field, label, message[:1].upper() + message[1:])


def describe(problem: str) -> FieldProblem:
    """One loader message as the rung form names it."""
    match = _PROBLEM.match(problem.strip())
    path, name = _split_file(match["head"]) if match else ("", "")
    if match is None or not name:
        return FieldProblem(*GENERAL, problem)
    key, message = match["key"], match["message"]
    if name == "rung.yaml" and key is not None:
        return _rung_yaml(key, message)
    if path.endswith("wrong/"):
        return FieldProblem("wrong_solutions", "Wrong solutions", f"{name}: {message}")
    if path.endswith("alternatives/"):
        return FieldProblem("alternatives", "Alternatives", f"{name}: {message}")
    if name in FILE_FIELDS:
        field, label = FILE_FIELDS[name]
        return FieldProblem(field, label, message[:1].upper() + message[1:])
    return FieldProblem(*GENERAL, problem)


def by_field(problems: list[str]) -> dict[str, list[FieldProblem]]:
    """The draft's problems grouped by the form field they belong next to."""
    grouped: dict[str, list[FieldProblem]] = {}
    for problem in problems:
        described = describe(problem)
        grouped.setdefault(described.field, []).append(described)
    return grouped

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
    "speed_inputs.py": ("speed_inputs_code", "Speed inputs"),
    "baseline.py": ("speed_baseline_code", "Baseline"),
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
    "speed": ("speed_yaml", "Speed section"),
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
    item: str = ""  # the row at fault: a hidden test's name or a wrong solution's file, shown in that row

    def __str__(self) -> str:
        return f"{self.label}: {self.message}"


# pydantic's messages for an empty or absent value, which the form's words replace.
_EMPTY = ("String should have at least 1 character", "Field required", "missing")


def _rung_yaml(key: str, message: str) -> FieldProblem:
    head, _, rest = key.partition(".")
    field, label = KEY_FIELDS.get(head, GENERAL)
    item, dot, part = rest.rpartition(".")  # a file name has a dot of its own: bad.py.description
    if head in ("hidden_tests", "wrong_solutions", "alternatives") and dot and part == "description" and message.startswith(_EMPTY):
        message, rest = "missing", item  # an empty description in the table: the same as none
    if head == "hidden_tests" and rest:
        if message.startswith("missing"):
            return FieldProblem(field, label, f"the test {rest} needs a description in the table under the hidden tests.", rest)
        if message.startswith("no such test"):
            return FieldProblem(field, label, f"the table describes {rest}, but the hidden tests define no such function.", rest)
    if head == "wrong_solutions" and rest:
        if message.startswith("missing"):
            return FieldProblem(field, label, f"{rest} needs a description of the mistake it makes.", rest)
        if message.startswith("no such file"):
            return FieldProblem(field, label, f"{rest} is described but has no code.", rest)
    if head == "alternatives" and rest and message.startswith("missing"):
        return FieldProblem(field, label, f"{rest} needs a description of how it differs from the reference.")
    if head == "limits" and rest:
        return FieldProblem(field, label, f"{rest.replace('_', ' ')}: {message}")
    if message.startswith(_EMPTY):
        where = f"{label} ({rest.replace('.', ' ').replace('_', ' ')})" if rest else label
        return FieldProblem(field, label, f"{where} is empty: fill it in.")
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


def describe_all(problem: str) -> list[FieldProblem]:
    """Every problem of one loader message, as the rung form names them: the schema's check
    of rung.yaml reports all its keys at fault in one message ("…rung.yaml: key 'a': m; key 'b': m"),
    and each is a problem of its own, next to its own field (issue 59, item 15)."""
    head, separator, rest = problem.partition(": key '")
    if not separator or "; key '" not in rest:
        return [describe(problem)]
    described = [describe(f"{head}: key '{part}") for part in rest.split("; key '")]
    return list(dict.fromkeys(described))  # two empty cells of one row say one thing once


def sentence(problem: str) -> str:
    """One loader message as one sentence of the form's words, every problem in it named."""
    return " ".join(str(each) for each in describe_all(problem))


def by_field(problems: list[str]) -> dict[str, list[FieldProblem]]:
    """The draft's problems grouped by the form field they belong next to."""
    grouped: dict[str, list[FieldProblem]] = {}
    for problem in problems:
        for described in describe_all(problem):
            grouped.setdefault(described.field, []).append(described)
    return grouped

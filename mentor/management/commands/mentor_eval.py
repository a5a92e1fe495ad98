"""Measure the mentor on its question sets: how often what the mentor shows
first (its answer) is an explanation or passage that answers the question
(concept accuracy), how often one is among the three it shows, how long an
answer without a model takes, and whether the calculators give the exact
byte counts of a set's ``calculations``.

Two sets ship: ``eval_questions.yaml`` (the Inference & serving module, the
mentor's authors' wording) and ``eval_paraphrases.yaml`` (both modules,
worded by someone else). An item may name its own ``module``; otherwise the
set's ``module`` is used.
"""

from __future__ import annotations

import json
import statistics
import time
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser

from exercises.models import Module
from mentor import search, services
from mentor.calculators.answer import calculate
from mentor.constants import TOP_K

QUESTION_SETS = Path(__file__).resolve().parents[2]
DEFAULT_QUESTIONS = QUESTION_SETS / "eval_questions.yaml"
PARAPHRASES = QUESTION_SETS / "eval_paraphrases.yaml"


def matches(key: str, expected: list[str]) -> bool:
    """A key answers when it is an expected key, a section of one, or fits an expected glob."""
    return any(key == pattern or key.startswith(pattern + ":") or fnmatchcase(key, pattern) for pattern in expected)


def _rate(right: int, n: int) -> float:
    return round(right / n, 3) if n else 0.0


class _Modules:
    """The modules a set names, by slug, each indexed once."""

    def __init__(self, default: str | None) -> None:
        self.default = default
        self.found: dict[str, Module] = {}

    def of(self, item: dict[str, Any]) -> Module:
        slug = str(item.get("module") or self.default)
        if slug not in self.found:
            module = Module.objects.filter(slug=slug).first()
            if module is None:
                raise CommandError(f"no module {slug!r} in the database: run `manage.py load_exercises` first")
            search.ensure_index(module)
            self.found[slug] = module
        return self.found[slug]


def evaluate(modules: _Modules, questions: list[dict[str, Any]]) -> dict[str, Any]:
    top3 = top1 = 0
    times: list[float] = []
    misses = []
    for item in questions:
        module = modules.of(item)
        started = time.perf_counter()
        hits = search.search(module, item["q"], limit=TOP_K)
        services.passages_answer(hits)
        times.append((time.perf_counter() - started) * 1000)
        keys = [hit.passage.key for hit in hits]
        expected = list(item["expect"])
        first = bool(keys) and matches(keys[0], expected)
        top1 += first
        if any(matches(key, expected) for key in keys):
            top3 += 1
        if not first:
            misses.append({"question": item["q"], "expected": expected, "got": keys})
    n = len(questions)
    return {
        "questions": n,
        "top3_hit_rate": _rate(top3, n),
        # What is shown first is the answer: its share is the concept accuracy.
        "top1_hit_rate": _rate(top1, n),
        "concept_accuracy": _rate(top1, n),
        "median_answer_ms": round(statistics.median(times), 2) if times else 0.0,
        "misses": misses,
    }


def evaluate_calculations(modules: _Modules, calculations: list[dict[str, Any]]) -> dict[str, Any]:
    """Each calculation question must be answered by a calculator with exactly its expected bytes."""
    right = 0
    misses = []
    for item in calculations:
        answer = calculate(modules.of(item), item["q"])
        got = answer.total_bytes if answer is not None else None
        if got == int(item["bytes"]):
            right += 1
        else:
            misses.append({"question": item["q"], "expected_bytes": int(item["bytes"]), "got_bytes": got})
    n = len(calculations)
    return {"calculator_questions": n, "calculator_accuracy": _rate(right, n), "calculator_misses": misses}


def evaluate_set(path: Path) -> dict[str, Any]:
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise CommandError(f"{path}: expected keys 'module' (or a module on each item) and 'questions'")
    modules = _Modules(data.get("module"))
    result: dict[str, Any] = {"set": path.name, "module": data.get("module") or "(per question)"}
    result.update(evaluate(modules, data["questions"]))
    result.update(evaluate_calculations(modules, list(data.get("calculations") or [])))
    return result


class Command(BaseCommand):
    help = "Run the mentor's question sets against the loaded catalog and report concept and calculator accuracy."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print one JSON object (with several sets: {\"sets\": [...]})")
        parser.add_argument(
            "--questions", type=Path, action="append", help="a question set (YAML); may be repeated (default: both shipped sets)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = options["questions"] or [DEFAULT_QUESTIONS, PARAPHRASES]
        results = [evaluate_set(path) for path in paths]
        if options["json"]:
            self.stdout.write(json.dumps(results[0] if len(results) == 1 else {"sets": results}))
            return
        for result in results:
            for miss in result["misses"]:
                self.stdout.write(f"MISS {miss['question']}\n     expected {miss['expected']}, got {miss['got']}")
            for miss in result["calculator_misses"]:
                self.stdout.write(f"WRONG {miss['question']}\n     expected {miss['expected_bytes']} bytes, got {miss['got_bytes']}")
        for result in results:
            self.stdout.write(
                f"{result['set']} ({result['module']}): {result['questions']} concept questions: "
                f"answer right {result['concept_accuracy']:.0%} (top-1), in the top 3 {result['top3_hit_rate']:.0%}, "
                f"median answer {result['median_answer_ms']} ms (no model); "
                f"calculators {result['calculator_accuracy']:.0%} exact over {result['calculator_questions']} questions"
            )

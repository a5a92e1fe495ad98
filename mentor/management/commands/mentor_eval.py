"""Measure the mentor on the question set: how often the passage that answers
a question is among the three the mentor shows (and first), how long an
answer without a model takes, and whether the calculators give the exact
byte counts of the set's ``calculations``."""

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

DEFAULT_QUESTIONS = Path(__file__).resolve().parents[2] / "eval_questions.yaml"


def matches(key: str, expected: list[str]) -> bool:
    """A key answers when it is an expected key, a section of one, or fits an expected glob."""
    return any(key == pattern or key.startswith(pattern + ":") or fnmatchcase(key, pattern) for pattern in expected)


def evaluate(module: Module, questions: list[dict[str, Any]]) -> dict[str, Any]:
    search.ensure_index(module)
    top3 = top1 = 0
    times: list[float] = []
    misses = []
    for item in questions:
        started = time.perf_counter()
        hits = search.search(module, item["q"], limit=TOP_K)
        services.passages_answer(hits)
        times.append((time.perf_counter() - started) * 1000)
        keys = [hit.passage.key for hit in hits]
        expected = list(item["expect"])
        if any(matches(key, expected) for key in keys):
            top3 += 1
        else:
            misses.append({"question": item["q"], "expected": expected, "got": keys})
        if keys and matches(keys[0], expected):
            top1 += 1
    n = len(questions)
    return {
        "module": module.slug,
        "questions": n,
        "top3_hit_rate": round(top3 / n, 3) if n else 0.0,
        "top1_hit_rate": round(top1 / n, 3) if n else 0.0,
        "median_answer_ms": round(statistics.median(times), 2) if times else 0.0,
        "misses": misses,
    }


def evaluate_calculations(module: Module, calculations: list[dict[str, Any]]) -> dict[str, Any]:
    """Each calculation question must be answered by a calculator with exactly its expected bytes."""
    right = 0
    misses = []
    for item in calculations:
        answer = calculate(module, item["q"])
        got = answer.total_bytes if answer is not None else None
        if got == int(item["bytes"]):
            right += 1
        else:
            misses.append({"question": item["q"], "expected_bytes": int(item["bytes"]), "got_bytes": got})
    n = len(calculations)
    return {"calculator_questions": n, "calculator_accuracy": round(right / n, 3) if n else 0.0, "calculator_misses": misses}


class Command(BaseCommand):
    help = "Run the mentor's question set against the loaded catalog and report the top-3 hit rate."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS, help="the question set (YAML)")
        parser.add_argument("--module", help="module slug (default: the one the question set names)")

    def handle(self, *args: Any, **options: Any) -> None:
        data: Any = yaml.safe_load(Path(options["questions"]).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
            raise CommandError(f"{options['questions']}: expected keys 'module' and 'questions'")
        slug = options["module"] or data.get("module")
        module = Module.objects.filter(slug=slug).first()
        if module is None:
            raise CommandError(f"no module {slug!r} in the database: run `manage.py load_exercises` first")
        result = evaluate(module, data["questions"])
        result.update(evaluate_calculations(module, list(data.get("calculations") or [])))
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        for miss in result["misses"]:
            self.stdout.write(f"MISS {miss['question']}\n     expected {miss['expected']}, got {miss['got']}")
        for miss in result["calculator_misses"]:
            self.stdout.write(f"WRONG {miss['question']}\n     expected {miss['expected_bytes']} bytes, got {miss['got_bytes']}")
        self.stdout.write(
            f"{result['questions']} questions on {result['module']}: top-3 hit rate {result['top3_hit_rate']:.0%}, "
            f"top-1 {result['top1_hit_rate']:.0%}, median answer {result['median_answer_ms']} ms (no model); "
            f"calculators {result['calculator_accuracy']:.0%} exact over {result['calculator_questions']} questions"
        )

"""Where learners struggle: the numbers behind the dashboards and the CSV.

The dashboards read the running counts ``grader.tallies`` keeps as jobs end,
never the submissions themselves: a busy year holds a million of them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from django.utils.safestring import SafeString

from exercises.models import Module, Rung
from grader.constants import OUTCOME_RANK, Outcome
from grader.models import Progress, RungTally

from . import charts

ATTEMPT_BUCKETS = ("1", "2", "3", "4", "5", "6-10", "11+")
_V = TypeVar("_V", int, float)


def best_outcomes(module: Module) -> tuple[list[str], list[list[str]]]:
    """One row per learner: their best outcome on each rung of the module ('' when not tried)."""
    rungs = list(Rung.objects.filter(module=module).order_by("order", "slug"))
    best: dict[str, dict[int, str]] = defaultdict(dict)
    for username, rung_id, outcome in Progress.objects.filter(rung__in=rungs).values_list("user__username", "rung_id", "best_outcome"):
        best[username][rung_id] = outcome
    header = ["learner", *[rung.slug for rung in rungs], "solved"]
    rows = []
    for username in sorted(best):
        outcomes = [best[username].get(rung.pk, "") for rung in rungs]
        rows.append([username, *outcomes, str(sum(outcome == Outcome.PASSED for outcome in outcomes))])
    return header, rows


def counts_of(rungs: Sequence[Rung], *figures: str) -> dict[int, Counter[tuple[str, str]]]:
    """Each rung's running counts (``grader.tallies``) of ``figures`` (all when none is named)."""
    rows = RungTally.objects.filter(rung__in=list(rungs), count__gt=0)
    if figures:
        rows = rows.filter(figure__in=figures)
    counts: dict[int, Counter[tuple[str, str]]] = defaultdict(Counter)
    for rung_id, figure, key, count in rows.values_list("rung_id", "figure", "key", "count"):
        counts[rung_id][(figure, key)] += count
    return counts


def _summed(counts: dict[int, Counter[tuple[str, str]]]) -> Counter[tuple[str, str]]:
    return sum(counts.values(), Counter())


def submits_to_first_pass(tally: Counter[tuple[str, str]]) -> tuple[int, Counter[int]]:
    """Learners with a graded Submit, and how many of them solved in 1, 2, ... graded Submits (up to and including the first pass)."""
    solved = Counter({int(key): count for (figure, key), count in tally.items() if figure == RungTally.Figure.FIRST_PASS})
    return tally[(RungTally.Figure.LEARNERS, "")], solved


def _bucket(attempts: int) -> str:
    if attempts <= 5:
        return str(attempts)
    return "6-10" if attempts <= 10 else "11+"


def nth(counts: Mapping[_V, int], index: int) -> _V:
    """The value at ``index`` (from 0) of the sorted values, given as value -> how many times it occurs."""
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen > index:
            return value
    raise IndexError(index)


def percentile(counts: Mapping[_V, int], fraction: float) -> _V:
    """Nearest-rank percentile (0 < fraction <= 1) of values given as value -> how many times it occurs."""
    total = sum(counts.values())
    return nth(counts, max(0, min(total - 1, math.ceil(fraction * total) - 1)))


LATENCY_NAMES = {RungTally.Figure.WAIT: "queue wait", RungTally.Figure.GRADING: "grading", RungTally.Figure.TOTAL: "total"}


def latency_table(tally: Counter[tuple[str, str]]) -> list[dict[str, Any]]:
    """Seconds each finished job (Runs and Submits) spent waiting, running and in total, to a hundredth."""
    table = []
    for figure, name in LATENCY_NAMES.items():
        seconds = {int(key) / 100: count for (kind, key), count in tally.items() if kind == figure}
        if seconds:
            table.append({"name": name, "count": sum(seconds.values()), "p50": percentile(seconds, 0.5), "p90": percentile(seconds, 0.9),
                          "p99": percentile(seconds, 0.99), "max": max(seconds)})
    return table


def pass_rate_by_day(tally: Counter[tuple[str, str]]) -> list[tuple[str, float, int]]:
    passed = {key: count for (figure, key), count in tally.items() if figure == RungTally.Figure.PASSED_ON}
    graded = sorted((key, count) for (figure, key), count in tally.items() if figure == RungTally.Figure.GRADED_ON)
    return [(day, passed.get(day, 0) / total, total) for day, total in graded]


def failing_hidden_tests(counts: dict[int, Counter[tuple[str, str]]], rungs: Sequence[Rung], limit: int = 12) -> list[tuple[str, int]]:
    slugs = {rung.pk: rung.slug for rung in rungs}
    rows = [(name, slugs[rung_id], count) for rung_id, tally in counts.items() for (figure, name), count in tally.items()
            if figure == RungTally.Figure.FAILED_TEST]
    several = len(rungs) > 1
    return [(f"{slug}: {name}" if several else name, count) for name, slug, count in sorted(rows, key=lambda row: (-row[2], row[0], row[1]))[:limit]]


def outcome_mix(tally: Counter[tuple[str, str]]) -> list[tuple[str, int]]:
    """Submits that ended, by outcome, the best first."""
    counts = {key: count for (figure, key), count in tally.items() if figure == RungTally.Figure.OUTCOME}
    return [(outcome, counts[outcome]) for outcome in sorted(counts, key=lambda o: (-OUTCOME_RANK.get(Outcome(o), -1), o))]


def figures(rungs: Sequence[Rung]) -> dict[str, Any]:
    """The numbers a dashboard of ``rungs`` shows, from the running counts: one query."""
    counts = counts_of(rungs)
    tally = _summed(counts)
    attempts: Counter[str] = Counter()
    for submits, learners in submits_to_first_pass(tally)[1].items():
        attempts[_bucket(submits)] += learners
    return {"days": pass_rate_by_day(tally), "attempts": attempts, "failing": failing_hidden_tests(counts, rungs), "mix": outcome_mix(tally),
            "latency": latency_table(tally)}


def charts_for(rungs: Sequence[Rung]) -> dict[str, Any]:
    """Every chart of a dashboard, as safe SVG, plus the latency table."""
    numbers = figures(rungs)
    days, attempts, mix, table = numbers["days"], numbers["attempts"], numbers["mix"], numbers["latency"]
    latency_rows = [(f"{row['name']} p{p}", row[f"p{p}"]) for row in table for p in (50, 90, 99)]
    svg: dict[str, SafeString] = {
        "pass_rate": charts.line_chart([(day, rate) for day, rate, _ in days], title="Share of Submits that passed, per day",
                                       counts=[n for _, _, n in days]),
        "attempts": charts.bar_chart([(bucket, attempts[bucket]) for bucket in ATTEMPT_BUCKETS] if attempts else [],
                                     title="Submits until the first pass (learners)"),
        "failing": charts.bar_chart(numbers["failing"], title="Hidden tests failed most often"),
        "mix": charts.bar_chart(mix, title="Outcomes of Submits", classes=[f"outcome-{name}" for name, _ in mix]),
        "latency": charts.bar_chart(latency_rows, title="Grading latency percentiles", fmt=charts.seconds),
    }
    return {"svg": svg, "latency": table, "days": days}


def rung_table(module: Module) -> list[dict[str, Any]]:
    """One row per published rung: learners, solves, graded Submits, pass rate, median Submits to the first pass."""
    rungs = list(Rung.objects.filter(module=module, current_version__isnull=False).order_by("order", "slug"))
    counts = counts_of(rungs, RungTally.Figure.OUTCOME, RungTally.Figure.LEARNERS, RungTally.Figure.FIRST_PASS)
    rows = []
    for rung in rungs:
        ended = {key: count for (figure, key), count in counts[rung.pk].items() if figure == RungTally.Figure.OUTCOME}
        total = sum(count for outcome, count in ended.items() if outcome != Outcome.INFRA_ERROR)
        passed = ended.get(Outcome.PASSED, 0)
        learners, attempts = submits_to_first_pass(counts[rung.pk])
        solved = Progress.objects.filter(rung=rung, solved_at__isnull=False).count()
        rows.append({"rung": rung, "submits": total, "pass_rate": passed / total if total else None, "learners": learners, "solved": solved,
                     "median_attempts": nth(attempts, sum(attempts.values()) // 2) if attempts else None})
    return rows

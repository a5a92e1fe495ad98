"""Where learners struggle: the numbers behind the dashboards and the CSV."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.utils.safestring import SafeString

from exercises.models import Module, Rung
from grader.constants import OUTCOME_RANK, Kind, Outcome, Status
from grader.models import Progress, Submission, SubmissionTestResult

from . import charts

ATTEMPT_BUCKETS = ("1", "2", "3", "4", "5", "6-10", "11+")


def _graded_submits(rungs: Sequence[Rung]) -> Any:
    return Submission.objects.filter(rung__in=rungs, kind=Kind.SUBMIT, status=Status.DONE).exclude(outcome=Outcome.INFRA_ERROR)


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


def attempts_until_first_pass(rungs: Sequence[Rung]) -> list[int]:
    """For each learner and rung they solved: the number of graded Submits up to and including the first pass."""
    counts: dict[tuple[int, int], int] = defaultdict(int)
    done: dict[tuple[int, int], int] = {}
    for user_id, rung_id, outcome in _graded_submits(rungs).order_by("enqueued_at", "pk").values_list("user_id", "rung_id", "outcome"):
        key = (user_id, rung_id)
        if key in done:
            continue
        counts[key] += 1
        if outcome == Outcome.PASSED:
            done[key] = counts[key]
    return list(done.values())


def _bucket(attempts: int) -> str:
    if attempts <= 5:
        return str(attempts)
    return "6-10" if attempts <= 10 else "11+"


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (0 < fraction <= 1)."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1))
    return ordered[index]


def latencies(rungs: Sequence[Rung]) -> dict[str, list[float]]:
    """Seconds each finished job spent waiting, running and in total (Runs and Submits)."""
    waits, runs, totals = [], [], []
    rows = Submission.objects.filter(rung__in=rungs, status=Status.DONE, finished_at__isnull=False).values_list("enqueued_at", "started_at", "finished_at")
    for enqueued, started, finished in rows:
        if finished is None:
            continue
        totals.append((finished - enqueued).total_seconds())
        if started is not None:
            waits.append(max(0.0, (started - enqueued).total_seconds()))
            runs.append(max(0.0, (finished - started).total_seconds()))
    return {"queue wait": waits, "grading": runs, "total": totals}


def latency_table(rungs: Sequence[Rung]) -> list[dict[str, Any]]:
    table = []
    for name, values in latencies(rungs).items():
        if values:
            table.append({"name": name, "count": len(values), "p50": percentile(values, 0.5), "p90": percentile(values, 0.9),
                          "p99": percentile(values, 0.99), "max": max(values)})
    return table


def pass_rate_by_day(rungs: Sequence[Rung]) -> list[tuple[str, float, int]]:
    rows = (_graded_submits(rungs).annotate(day=TruncDate("finished_at")).values("day")
            .annotate(total=Count("pk"), passed=Count("pk", filter=Q(outcome=Outcome.PASSED))).order_by("day"))
    return [(row["day"].isoformat(), row["passed"] / row["total"], row["total"]) for row in rows if row["day"] is not None]


def failing_hidden_tests(rungs: Sequence[Rung], limit: int = 12) -> list[tuple[str, int]]:
    rows = (SubmissionTestResult.objects.filter(submission__in=_graded_submits(rungs), hidden=True).exclude(outcome="passed")
            .values("name", "submission__rung__slug").annotate(n=Count("pk")).order_by("-n", "name")[:limit])
    several = len(rungs) > 1
    return [(f"{row['submission__rung__slug']}: {row['name']}" if several else row["name"], row["n"]) for row in rows]


def outcome_mix(rungs: Sequence[Rung]) -> list[tuple[str, int]]:
    counts = Counter(Submission.objects.filter(rung__in=rungs, kind=Kind.SUBMIT, status=Status.DONE).values_list("outcome", flat=True))
    return [(outcome, counts[outcome]) for outcome in sorted(counts, key=lambda o: -OUTCOME_RANK.get(Outcome(o), -1))]


def charts_for(rungs: Sequence[Rung]) -> dict[str, Any]:
    """Every chart of a dashboard, as safe SVG, plus the latency table."""
    days = pass_rate_by_day(rungs)
    attempts = Counter(_bucket(n) for n in attempts_until_first_pass(rungs))
    mix = outcome_mix(rungs)
    table = latency_table(rungs)
    latency_rows = [(f"{row['name']} p{p}", row[f"p{p}"]) for row in table for p in (50, 90, 99)]
    svg: dict[str, SafeString] = {
        "pass_rate": charts.line_chart([(day, rate) for day, rate, _ in days], title="Share of Submits that passed, per day",
                                       counts=[n for _, _, n in days]),
        "attempts": charts.bar_chart([(bucket, attempts[bucket]) for bucket in ATTEMPT_BUCKETS] if attempts else [],
                                     title="Submits until the first pass (learners)"),
        "failing": charts.bar_chart(failing_hidden_tests(rungs), title="Hidden tests failed most often"),
        "mix": charts.bar_chart(mix, title="Outcomes of Submits", classes=[f"outcome-{name}" for name, _ in mix]),
        "latency": charts.bar_chart(latency_rows, title="Grading latency percentiles", fmt=charts.seconds),
    }
    return {"svg": svg, "latency": table, "days": days}


def rung_table(module: Module) -> list[dict[str, Any]]:
    rows = []
    for rung in Rung.objects.filter(module=module, current_version__isnull=False).order_by("order", "slug"):
        graded = _graded_submits([rung])
        total = graded.count()
        passed = graded.filter(outcome=Outcome.PASSED).count()
        learners = graded.values("user").distinct().count()
        solved = Progress.objects.filter(rung=rung, solved_at__isnull=False).count()
        attempts = sorted(attempts_until_first_pass([rung]))
        rows.append({"rung": rung, "submits": total, "pass_rate": passed / total if total else None, "learners": learners, "solved": solved,
                     "median_attempts": attempts[len(attempts) // 2] if attempts else None})
    return rows

"""Judge the isolated re-run of a Submit: each test again, each in a fresh process.

The re-run exists to catch solutions whose results depend on state kept
between calls. It can only do that if it completes: a re-run that timed
out, lost its server or skipped tests fails the Submit and says why, so an
order-dependent solution cannot pass by sabotaging the check.

When the first run already failed, the Submit fails whatever the re-run
finds: then only the failed tests run again, each on its own, to tell the
learner which of them pass alone (state kept between calls). That halves
the cost of a failing Submit, the common kind, and cannot change its grade.
Those tests are replayed first (``replay``), as a passing Submit's are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .plugin import MAX_MESSAGE, RunState, TestRecord


@dataclass
class RerunVerdict:
    """``outcome`` None: the re-run completed and only ``leaky`` tests changed."""

    outcome: str | None = None
    message: str = ""
    leaky: list[str] = field(default_factory=list)
    # Of ``leaky``, the tests that passed on their own and failed after the
    # others (the rest the other way round): a fact the host words.
    passes_alone: list[str] = field(default_factory=list)
    # Why the re-run failed ("timeout", "error", "incomplete"): the host shows
    # a fixed sentence for it even on a Submit, where learner text is withheld.
    failure: str = ""


def merge_fresh(shared: dict[str, TestRecord], fresh: dict[str, TestRecord]) -> tuple[list[str], list[str]]:
    """Mark tests whose outcome depends on what ran before; their names, and
    of those the ones that passed on their own (``RerunVerdict.passes_alone``)."""
    leaky, passes_alone = [], []
    for name, record in shared.items():
        other = fresh.get(name)
        if other is None or other.outcome == record.outcome:
            continue
        if {record.outcome, other.outcome} <= {"passed", "failed", "error"}:
            leaky.append(name)
            if other.outcome == "passed":
                passes_alone.append(name)
            if not record.message and record.failure is None:
                record.message, record.failure = other.message[:MAX_MESSAGE], other.failure
            record.outcome = "failed"
    return leaky, passes_alone


def judge_rerun(shared: RunState, fresh: RunState, only: frozenset[str] | None = None) -> RerunVerdict:
    """``only``: the re-run ran just these tests (the ones that failed the first run)."""
    # Why, as a code (RerunVerdict.failure): the host shows grader.messages.RERUN_FAILED's sentence.
    if fresh.timed_out:
        return RerunVerdict("timeout", failure="timeout")
    if fresh.import_error is not None:
        return RerunVerdict("error", failure="error")
    if fresh.learner_died is not None:
        return RerunVerdict("error", failure="error")
    if fresh.collect_errors:
        return RerunVerdict("infra_error", "The re-run's tests could not be collected: " + "; ".join(fresh.collect_errors)[:2000])
    expected = set(shared.tests) if only is None else set(only)
    missing = sorted(expected - set(fresh.tests))
    if missing:
        return RerunVerdict("failed", failure="incomplete")
    leaky, passes_alone = merge_fresh(shared.tests, fresh.tests)
    return RerunVerdict(leaky=leaky, passes_alone=passes_alone)

"""`make bench-gradebook`: a course's gradebook at 500 learners x 20 assignments and 100k submissions, on PostgreSQL.

Usage (from the repository root)::

    scripts/postgres.sh start
    DATABASE_URL="$(scripts/postgres.sh url)" .venv/bin/python -m bench.gradebook

It makes a throw-away database on the cluster of ``DATABASE_URL``
(``dojo_bench_gradebook``, recreated every run and dropped at the end),
migrates it, and fills it in bulk: 60 synthetic rungs, 500 learners, three
courses on the same 20 assignments of 3 rungs each (half of them accepting
late work with a penalty), 5 % of extensions, each learner's progress and
hint reveals on every rung, and 100,000 submissions (``BENCH_GRADEBOOK_SUBMISSIONS``):

- ``big``: the 500 learners;
- ``small``: the first 100 of them, the baseline: a page shows at most 50
  learners, so a page of ``big`` should cost what one of ``small`` does;
- ``empty``: no learner at all, the floor (the columns and the template).

Then, through Django's test client logged in as the courses' owner (the
whole view: session, role check, service, template), the sides taking
turns request by request so that a machine whose speed drifts moves them
alike, ``BENCH_GRADEBOOK_REQUESTS`` (40) times each:

- the gradebook page (``big`` cycling through its 10 pages): p50 / p95 ms,
  and the queries of one request;
- the service alone (``build_gradebook``, no template) and one rung's
  drill-down page, for ``big``;
- the CSV of ``big`` and of ``small``, read to the end as a client would:
  seconds, bytes, and the Python heap's peak while streaming it
  (tracemalloc), whose ratio shows that the CSV's memory does not grow
  with the learners.

It prints a table with the ratios to the baselines and the load average,
a PASS/FAIL line per target of issue 57 (page p95 <= 300 ms; as many
queries for 500 learners as for 100; CSV peak at 500 learners <= 1.5x the
peak at 100), and writes bench/gradebook-results.json. Figures taken while
other work loads the machine are not for the record.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "bench" / "gradebook-results.json"
DATABASE_NAME = "dojo_bench_gradebook"
LEARNERS = int(os.environ.get("BENCH_GRADEBOOK_LEARNERS", "500"))
BASELINE_LEARNERS = 100
ASSIGNMENTS = 20
RUNGS_PER_ASSIGNMENT = 3
SUBMISSIONS = int(os.environ.get("BENCH_GRADEBOOK_SUBMISSIONS", "100000"))
REQUESTS = int(os.environ.get("BENCH_GRADEBOOK_REQUESTS", "40"))
PAGE_P95_TARGET_MS = 300.0
CSV_PEAK_RATIO_TARGET = 1.5


def _setup() -> Any:
    """Django against a fresh ``dojo_bench_gradebook`` database; returns what tearing it down needs."""
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    os.environ.setdefault("SECRET_KEY", "bench-gradebook")
    # Sessions in this process's memory: no Redis needed.
    os.environ["SESSION_CACHE_URL"] = "locmemcache://bench-sessions"
    os.environ["LTI_CACHE_URL"] = "locmemcache://bench-lti"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.test.utils import setup_databases

    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.postgresql":
        print(f"NOTE: {database['ENGINE']}, not PostgreSQL: set DATABASE_URL=\"$(scripts/postgres.sh url)\" for figures that count.")
    if database["ENGINE"].endswith("postgresql"):
        database["TEST"]["NAME"] = DATABASE_NAME
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    return setup_databases(verbosity=0, interactive=False)


def _fill(rng: random.Random) -> dict[str, Any]:
    """The catalog, learners, courses, progress, hints and submissions, in bulk."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from aids.models import HintReveal
    from courses.constants import CourseRole, EnrolSource, LatePolicy
    from courses.models import Assignment, AssignmentRung, Course, Extension, Membership
    from exercises.models import Module, Rung, RungVersion, Track
    from grader.constants import Kind, Outcome, Status
    from grader.models import Progress, Submission

    user_model = get_user_model()
    now = timezone.now()
    track = Track.objects.create(slug="bench-track", title="Bench")
    module = Module.objects.create(track=track, slug="bench-module", title="Bench module")
    rungs = Rung.objects.bulk_create([Rung(module=module, slug=f"bench-rung-{index:02d}", order=index)
                                      for index in range(ASSIGNMENTS * RUNGS_PER_ASSIGNMENT)])
    versions = RungVersion.objects.bulk_create([RungVersion(
        rung=rung, number=1, content_hash=f"bench{rung.pk}", title=f"Bench rung {index}", minutes=10, difficulty="easy",
        instructions_md="", starter_code="", reference_code="", visible_tests="", hidden_tests="", hints=["a", "b", "c"],
    ) for index, rung in enumerate(rungs)])
    for rung, version in zip(rungs, versions, strict=True):
        rung.current_version = version
    Rung.objects.bulk_update(rungs, ["current_version"])

    owner = user_model.objects.create_user(username="bench-owner")
    learners = user_model.objects.bulk_create([user_model(username=f"learner-{index:04d}", password="!") for index in range(LEARNERS)])
    courses = {name: Course.objects.create(slug=f"bench-{name}", title=f"Bench {name}", time_zone="Europe/Paris")
               for name in ("big", "small", "empty")}
    members = {"big": learners, "small": learners[:BASELINE_LEARNERS], "empty": []}
    due = {}
    for name, course in courses.items():
        Membership.objects.create(course=course, user=owner, role=CourseRole.OWNER, source=EnrolSource.CREATED)
        Membership.objects.bulk_create([Membership(course=course, user=learner, role=CourseRole.LEARNER, source=EnrolSource.LINK)
                                        for learner in members[name]])
        for index in range(ASSIGNMENTS):
            due_at = now + dt.timedelta(days=7 * (index - ASSIGNMENTS // 2))
            due[index] = due_at
            penalty = index % 2 == 0
            assignment = Assignment.objects.create(
                course=course, title=f"Week {index + 1}", opens_at=due_at - dt.timedelta(days=7), due_at=due_at,
                late_policy=LatePolicy.PENALTY if penalty else LatePolicy.CLOSED,
                hard_close_at=due_at + dt.timedelta(days=3) if penalty else None, late_factor=0.5 if penalty else 1.0,
            )
            AssignmentRung.objects.bulk_create([AssignmentRung(assignment=assignment, rung=rungs[index * RUNGS_PER_ASSIGNMENT + order], order=order)
                                                for order in range(RUNGS_PER_ASSIGNMENT)])
            Extension.objects.bulk_create([Extension(assignment=assignment, learner=learner, due_at=due_at + dt.timedelta(days=2))
                                           for learner in members[name] if rng.random() < 0.05])

    progress, reveals = [], []
    for learner in learners:
        for index, rung in enumerate(rungs):
            luck = rng.random()
            if luck < 0.15:
                continue
            due_at = due[index // RUNGS_PER_ASSIGNMENT]
            solved_at = due_at + dt.timedelta(hours=rng.uniform(-120, 100)) if luck < 0.85 else None
            progress.append(Progress(user=learner, rung=rung, attempts=rng.randint(1, 6),
                                     best_outcome=Outcome.PASSED if solved_at else Outcome.FAILED, solved_at=solved_at))
            if rng.random() < 0.25:
                reveals += [HintReveal(learner=learner, rung=rung, number=number) for number in range(1, rng.randint(1, 3) + 1)]
    Progress.objects.bulk_create(progress, batch_size=5000)
    HintReveal.objects.bulk_create(reveals, batch_size=5000)

    outcomes = [Outcome.PASSED, Outcome.FAILED, Outcome.FAILED, Outcome.ERROR]
    batch: list[Submission] = []
    for number in range(SUBMISSIONS):
        learner, index = rng.choice(learners), rng.randrange(len(rungs))
        finished_at = due[index // RUNGS_PER_ASSIGNMENT] + dt.timedelta(hours=rng.uniform(-150, 120))
        batch.append(Submission(
            user=learner, rung=rungs[index], rung_version=versions[index], kind=Kind.SUBMIT if number % 5 else Kind.RUN,
            code="def solve():\n    return 42\n", status=Status.DONE, outcome=rng.choice(outcomes), enqueued_at=finished_at,
            finished_at=finished_at, seed=number,
        ))
        if len(batch) == 5000:
            Submission.objects.bulk_create(batch)
            batch = []
    Submission.objects.bulk_create(batch)
    return {"owner": owner, "courses": courses, "rung": rungs[0], "progress": len(progress), "reveals": len(reveals)}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def _queries(call: Callable[[], Any]) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured)


def _csv(client: Any, url: str) -> dict[str, float]:
    """Read the CSV to its end as a client would: timed, then again for the heap's peak (tracemalloc slows every allocation)."""
    started = time.perf_counter()
    response = client.get(url)
    size = sum(len(piece) for piece in response.streaming_content)
    seconds = time.perf_counter() - started
    assert response.status_code == 200 and response.streaming
    tracemalloc.start()
    response = client.get(url)
    assert sum(len(piece) for piece in response.streaming_content) == size
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"s": round(seconds, 3), "bytes": size, "peak_kib": round(peak / 1024, 1)}


def _measure(world: dict[str, Any]) -> dict[str, Any]:
    from django.test import Client
    from django.urls import reverse

    from courses.gradebook import build_gradebook

    client = Client()
    client.force_login(world["owner"])
    courses = world["courses"]
    big_assignment = courses["big"].assignments.order_by("due_at").first()
    pages = {"big": -(-LEARNERS // 50), "small": 2, "empty": 1}

    def page(name: str, number: int) -> Callable[[], Any]:
        url = reverse("courses:gradebook", args=[courses[name].slug])

        def get() -> None:
            response = client.get(url, {"page": number})
            assert response.status_code == 200, response.status_code
        return get

    rung_url = reverse("courses:gradebook-rung", args=[courses["big"].slug, big_assignment.pk, world["rung"].slug])

    def rung_page() -> None:
        assert client.get(rung_url).status_code == 200

    for name in pages:  # warm: templates compiled, connection open
        page(name, 1)()
    times: dict[str, list[float]] = {"big": [], "small": [], "empty": [], "service": [], "rung": []}
    for turn in range(REQUESTS):
        for name, count in pages.items():
            times[name].append(_timed(page(name, turn % count + 1)))
        times["service"].append(_timed(functools.partial(build_gradebook, courses["big"], turn % pages["big"] + 1)))
        times["rung"].append(_timed(rung_page))
    figures: dict[str, Any] = {name: {"p50_ms": round(statistics.median(values), 1), "p95_ms": round(_percentile(values, 0.95), 1)}
                               for name, values in times.items()}
    for name in pages:
        figures[name]["queries"] = _queries(page(name, 1))
    figures["rung"]["queries"] = _queries(rung_page)
    figures["csv_big"] = _csv(client, reverse("courses:gradebook-csv", args=[courses["big"].slug]))
    figures["csv_small"] = _csv(client, reverse("courses:gradebook-csv", args=[courses["small"].slug]))
    return figures


def main() -> int:
    old_config = _setup()
    from django.test.utils import teardown_databases

    try:
        started = time.perf_counter()
        world = _fill(random.Random(57))
        fill_s = time.perf_counter() - started
        load_before = os.getloadavg()[0]
        figures = _measure(world)
        load_after = os.getloadavg()[0]
    finally:
        teardown_databases(old_config, verbosity=0)
    big, small, empty = figures["big"], figures["small"], figures["empty"]
    ratios = {
        "page_p50_big_vs_small": round(big["p50_ms"] / small["p50_ms"], 2),
        "page_p50_big_vs_empty": round(big["p50_ms"] / empty["p50_ms"], 2),
        "csv_peak_big_vs_small": round(figures["csv_big"]["peak_kib"] / figures["csv_small"]["peak_kib"], 2),
        "csv_seconds_big_vs_small": round(figures["csv_big"]["s"] / max(figures["csv_small"]["s"], 1e-3), 2),
    }
    targets = {
        f"page p95 <= {PAGE_P95_TARGET_MS:.0f} ms": big["p95_ms"] <= PAGE_P95_TARGET_MS,
        "queries of a page independent of learners": big["queries"] == small["queries"],
        f"CSV peak at {LEARNERS} learners <= {CSV_PEAK_RATIO_TARGET}x at {BASELINE_LEARNERS}": ratios["csv_peak_big_vs_small"] <= CSV_PEAK_RATIO_TARGET,
    }
    print(f"\nGradebook: {LEARNERS} learners x {ASSIGNMENTS} assignments x {RUNGS_PER_ASSIGNMENT} rungs, {SUBMISSIONS} submissions, "
          f"{world['progress']} progress rows, {world['reveals']} hint reveals (filled in {fill_s:.1f} s); {REQUESTS} requests a side")
    print(f"{'':28} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}")
    for name, label in (("big", f"page, {LEARNERS} learners"), ("small", f"page, {BASELINE_LEARNERS} learners"),
                        ("empty", "page, no learners"), ("service", f"service alone, {LEARNERS}"), ("rung", f"rung drill-down, {LEARNERS}")):
        print(f"{label:28} {figures[name]['p50_ms']:8.1f} {figures[name]['p95_ms']:8.1f} {figures[name].get('queries', ''):>8}")
    for name, count in (("csv_big", LEARNERS), ("csv_small", BASELINE_LEARNERS)):
        csv_figures = figures[name]
        print(f"CSV, {count} learners: {csv_figures['s']:.2f} s, {csv_figures['bytes']} bytes, heap peak {csv_figures['peak_kib']:.0f} KiB")
    print("ratios: " + ", ".join(f"{name} {value}" for name, value in ratios.items()))
    print(f"load average (1 min): {load_before:.2f} before the measurements, {load_after:.2f} after")
    for name, ok in targets.items():
        print(f"{'PASS' if ok else 'FAIL'}: {name}")
    RESULTS.write_text(json.dumps({
        "learners": LEARNERS, "assignments": ASSIGNMENTS, "rungs_per_assignment": RUNGS_PER_ASSIGNMENT, "submissions": SUBMISSIONS,
        "requests": REQUESTS, "figures": figures, "ratios": ratios, "targets": targets,
        "load_average": [round(load_before, 2), round(load_after, 2)],
    }, indent=2) + "\n")
    return 0 if all(targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

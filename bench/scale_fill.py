"""A year of a busy deployment, generated inside PostgreSQL for `make bench-scale` (bench/scale.py).

Every table is filled by one ``INSERT ... SELECT`` over ``generate_series``:
the rows never travel through Python, which is what makes 1,000,000
submissions and their 20,000,000 test rows fit in minutes on two cores.
Columns the bench does not name are filled from their type (``''``, 0,
false, ``'{}'``, now()), so a NOT NULL column added later does not break it.

Sizes at ``scale`` 1.0 (issue 61): 10,000 learners, 50 courses of 10
assignments, 1,000,000 submissions (one rung in ten of them on one hot
rung: the rejudge preview's 100,000), 20 test rows each, 200,000 drafts,
100,000 mentor questions, hint reveals and problem reports, over the
shipped catalog (both modules) with 10 versions per rung.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

FULL = {
    "learners": 10_000,
    "courses": 50,
    "submissions": 1_000_000,
    "tests_per_submission": 20,
    "drafts": 200_000,
    "questions": 100_000,
    "reveals": 300_000,
    "reports": 5_000,
}
ASSIGNMENTS_PER_COURSE = 10
RUNGS_PER_ASSIGNMENT = 3
VERSIONS_PER_RUNG = 30
HOT_SHARE = 10  # one submission in this many is on the hot rung
PASSWORD_HASH = "!"  # unusable: the bench logs in by session


@dataclass
class World:
    """What the measurements need to find again."""

    counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    learner_ids: tuple[int, int] = (0, 0)
    admin_id: int = 0
    teacher_id: int = 0
    course_slug: str = ""
    module_slug: str = ""
    hot_rung_slug: str = ""
    hot_learner_id: int = 0
    rejudge_id: int = 0


def sizes(scale: float) -> dict[str, int]:
    counts = {name: max(1, round(value * scale)) for name, value in FULL.items()}
    counts["tests_per_submission"] = FULL["tests_per_submission"]
    counts["learners"] = max(counts["learners"], 4)
    counts["courses"] = max(1, min(counts["courses"], counts["learners"] // 2))
    return counts


def _column_defaults(cursor: Any, table: str) -> dict[str, str]:
    """Each NOT NULL column of ``table`` without a database default -> an SQL value of its type."""
    cursor.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s AND is_nullable = 'NO'"
        " AND column_default IS NULL AND is_identity = 'NO'", [table],
    )
    by_type = {"text": "''", "character varying": "''", "integer": "0", "bigint": "0", "smallint": "0", "double precision": "0",
               "boolean": "false", "jsonb": "'{}'::jsonb", "timestamp with time zone": "now()", "date": "current_date",
               "uuid": "gen_random_uuid()", "numeric": "0", "real": "0"}
    return {name: by_type.get(kind, "DEFAULT") for name, kind in cursor.fetchall()}


def insert(cursor: Any, model: Any, values: dict[str, str], source: str) -> int:
    """INSERT INTO model's table (the given columns, the others from their type) SELECT ... ``source``; returns the rows."""
    table = model._meta.db_table
    columns = {**_column_defaults(cursor, table), **{model._meta.get_field(name).column: value for name, value in values.items()}}
    names = ", ".join(f'"{name}"' for name in columns)
    cursor.execute(f'INSERT INTO "{table}" ({names}) SELECT {", ".join(columns.values())} FROM {source}')
    return int(cursor.rowcount)


def _timed(world: World, what: str, call: Any) -> int:
    started = time.perf_counter()
    rows = int(call())
    world.seconds[what] = round(time.perf_counter() - started, 1)
    world.counts[what] = rows
    print(f"  {what}: {rows:,} rows in {world.seconds[what]} s", flush=True)
    return rows


def fill(scale: float) -> World:
    """Generate the deployment in the current database (the catalog must be loaded)."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.db.models import Max, Min

    from aids.models import HintReveal, ProblemReport
    from courses.models import Assignment, AssignmentRung, Course, Membership
    from exercises.models import Module, Rung, RungVersion
    from frontend.models import Draft
    from grader.models import Progress, Rejudge, RejudgeResult, Submission, SubmissionTestResult
    from grader.tallies import rebuild_tallies
    from mentor.models import Question

    user_model = get_user_model()
    size = sizes(scale)
    world = World()
    rungs = list(Rung.objects.filter(current_version__isnull=False).order_by("module__slug", "order").values_list("pk", "slug", "module_id"))
    rung_count = len(rungs)
    hot = rungs[0]
    world.hot_rung_slug = hot[1]
    world.module_slug = Module.objects.get(pk=hot[2]).slug
    learners, submissions = size["learners"], size["submissions"]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit = off")
        _timed(world, "learners", lambda: insert(cursor, user_model, {
            "username": "'scale-learner-' || lpad(g::text, 6, '0')", "password": f"'{PASSWORD_HASH}'", "is_active": "true",
            "date_joined": "now() - interval '1 year'", "email": "'scale-' || g || '@example.invalid'",
        }, f"generate_series(1, {learners}) g"))
        bounds = user_model.objects.filter(username__startswith="scale-learner-").aggregate(low=Min("pk"), high=Max("pk"))
        low, high = int(bounds["low"]), int(bounds["high"])
        assert high - low + 1 == learners, "the learners' ids are not contiguous"
        world.learner_ids = (low, high)
        admin = user_model.objects.create_superuser(username="scale-admin", email="scale-admin@example.invalid", password=None)
        teacher = user_model.objects.create_user(username="scale-teacher", password=None)
        world.admin_id, world.teacher_id = admin.pk, teacher.pk

        # Rung versions: the current one plus VERSIONS_PER_RUNG - 1 older copies, numbered after it.
        version_columns = [str(f.column) for f in RungVersion._meta.concrete_fields if f.column not in ("id", "number", "content_hash")]
        copied = ", ".join(f'v."{c}"' for c in version_columns)
        cursor.execute(
            f'INSERT INTO "{RungVersion._meta.db_table}" ({", ".join(chr(34) + c + chr(34) for c in version_columns)}, number, content_hash)'
            f" SELECT {copied}, v.number + n, md5(v.content_hash || '-scale-' || n) FROM \"{RungVersion._meta.db_table}\" v"
            f' JOIN "{Rung._meta.db_table}" r ON r.current_version_id = v.id, generate_series(1, {VERSIONS_PER_RUNG - 1}) n'
        )
        world.counts["rung_versions"] = RungVersion.objects.count()
        # pos: the rung's place in `rungs`; v: 0 .. VERSIONS_PER_RUNG - 1.
        cursor.execute("CREATE TEMP TABLE scale_rv (pos int, v int, rung_id int, id int) ON COMMIT DROP")
        cursor.execute("CREATE TEMP TABLE scale_rung (pos int PRIMARY KEY, rung_id int, module_id int) ON COMMIT DROP")
        cursor.executemany("INSERT INTO scale_rung VALUES (%s, %s, %s)", [(pos, pk, module) for pos, (pk, _slug, module) in enumerate(rungs)])
        cursor.execute(
            f"INSERT INTO scale_rv SELECT s.pos, (row_number() OVER (PARTITION BY v.rung_id ORDER BY v.number)) - 1, v.rung_id, v.id"
            f' FROM "{RungVersion._meta.db_table}" v JOIN scale_rung s ON s.rung_id = v.rung_id'
        )
        cursor.execute("ANALYZE scale_rv; ANALYZE scale_rung")

        courses = size["courses"]
        _timed(world, "courses", lambda: insert(cursor, Course, {
            "slug": "'scale-course-' || g", "title": "'Scale course ' || g", "time_zone": "'Europe/Paris'",
            "created_by": str(teacher.pk), "created_at": "now() - interval '1 year'",
        }, f"generate_series(1, {courses}) g"))
        course_low = Course.objects.order_by("pk").values_list("pk", flat=True).first()
        world.course_slug = "scale-course-1"
        _timed(world, "memberships", lambda: insert(cursor, Membership, {
            "course": f"{course_low} + g % {courses}", "user": f"{low} + g", "role": "'learner'", "source": "'link'",
        }, f"generate_series(0, {learners - 1}) g") + insert(cursor, Membership, {
            "course": f"{course_low} + g", "user": str(teacher.pk), "role": "'owner'", "source": "'created'",
        }, f"generate_series(0, {courses - 1}) g"))
        assignments = courses * ASSIGNMENTS_PER_COURSE
        _timed(world, "assignments", lambda: insert(cursor, Assignment, {
            "course": f"{course_low} + g / {ASSIGNMENTS_PER_COURSE}", "title": "'Week ' || (g % 10 + 1)",
            "opens_at": f"now() - interval '1 year' + (g % {ASSIGNMENTS_PER_COURSE}) * interval '5 weeks'",
            "due_at": f"now() - interval '1 year' + (g % {ASSIGNMENTS_PER_COURSE} + 1) * interval '5 weeks'",
            "late_policy": "'closed'", "late_factor": "1.0",
        }, f"generate_series(0, {assignments - 1}) g"))
        assignment_low = Assignment.objects.order_by("pk").values_list("pk", flat=True).first()
        _timed(world, "assignment_rungs", lambda: insert(cursor, AssignmentRung, {
            "assignment": f"{assignment_low} + g / {RUNGS_PER_ASSIGNMENT}",
            "rung": f"(SELECT rung_id FROM scale_rung WHERE pos = ((g / {RUNGS_PER_ASSIGNMENT}) % {ASSIGNMENTS_PER_COURSE} * {RUNGS_PER_ASSIGNMENT} + g % {RUNGS_PER_ASSIGNMENT}) % {rung_count})",
            "order": f"g % {RUNGS_PER_ASSIGNMENT}",
        }, f"generate_series(0, {assignments * RUNGS_PER_ASSIGNMENT - 1}) g"))

        # Submissions: one in HOT_SHARE on the hot rung (pos 0), the others spread; a year of them.
        world.hot_learner_id = low
        _timed(world, "submissions", lambda: insert(cursor, Submission, {
            "user": f"{low} + (g::bigint * 7919) % {learners}", "rung": "rv.rung_id", "rung_version": "rv.id",
            "kind": "CASE WHEN g % 5 < 2 THEN 'run' ELSE 'submit' END", "code": "repeat('x = 1  # step\n', 12) || g",
            "status": "'done'", "outcome": "(ARRAY['passed', 'failed', 'failed', 'error'])[1 + g % 4]",
            "enqueued_at": f"now() - interval '365 days' * (1 - g::float / {submissions})",
            "started_at": f"now() - interval '365 days' * (1 - g::float / {submissions}) + interval '1 second'",
            "finished_at": f"now() - interval '365 days' * (1 - g::float / {submissions}) + interval '3 seconds'",
            "attempts": "1", "channel": "md5('scale' || g)", "seed": "g", "timings": "'{}'::jsonb", "machine": "'{}'::jsonb",
            "claimed_by": "'scale-worker'",
        }, f"generate_series(0, {submissions - 1}) g JOIN scale_rv rv ON rv.pos = CASE WHEN g % {HOT_SHARE} = 0 THEN 0"
           f" ELSE 1 + (g / {HOT_SHARE}) % {max(rung_count - 1, 1)} END AND rv.v = (g / 3) % {VERSIONS_PER_RUNG}"))
        tests = size["tests_per_submission"]
        _timed(world, "test_rows", lambda: insert(cursor, SubmissionTestResult, {
            "submission": "s.id", "order": "n", "name": "'test_case_' || n",
            "outcome": "CASE WHEN s.outcome = 'passed' OR n % 4 <> 0 THEN 'passed' ELSE 'failed' END",
            "duration_s": "0.01 * n", "message": "CASE WHEN s.outcome = 'passed' OR n % 4 <> 0 THEN '' ELSE 'assert 3 == 4' END",
            "hidden": "n > 10",
        }, f'"{Submission._meta.db_table}" s, generate_series(1, {tests}) n'))
        pairs = min(size["drafts"], learners * rung_count)
        _timed(world, "drafts", lambda: insert(cursor, Draft, {
            "user": f"{low} + g % {learners}", "rung": "r.rung_id", "code": "repeat('y = 2\n', 20)", "updated_at": "now() - (g % 300) * interval '1 day'",
        }, f"generate_series(0, {pairs - 1}) g JOIN scale_rung r ON r.pos = (g / {learners}) % {rung_count}"))
        _timed(world, "progress", lambda: insert(cursor, Progress, {
            "user": f"{low} + g % {learners}", "rung": "r.rung_id", "attempts": "1 + g % 6",
            "best_outcome": "CASE WHEN g % 3 = 0 THEN 'failed' ELSE 'passed' END",
            "solved_at": "CASE WHEN g % 3 = 0 THEN NULL ELSE now() - (g % 300) * interval '1 day' END", "updated_at": "now()",
        }, f"generate_series(0, {pairs - 1}) g JOIN scale_rung r ON r.pos = (g / {learners}) % {rung_count}"))
        reveal_pairs = min(size["reveals"] // 2, learners * rung_count)
        _timed(world, "hint_reveals", lambda: insert(cursor, HintReveal, {
            "learner": f"{low} + g % {learners}", "rung": "r.rung_id", "number": "n",
        }, f"generate_series(0, {reveal_pairs - 1}) g JOIN scale_rung r ON r.pos = (g / {learners} + 3) % {rung_count}, generate_series(1, 2) n"))
        _timed(world, "questions", lambda: insert(cursor, Question, {
            "learner": f"{low} + g % {learners}", "module": "r.module_id", "rung": "r.rung_id",
            "text": "'How big is the KV cache of a 7B model at 4k context? #' || (g % 500)",
            "normalised_text": "'how big is the kv cache of a 7b model at 4k context ' || (g % 500)",
            "created_at": "now() - (g % 365) * interval '1 day'", "passages_shown": "'[]'::jsonb",
        }, f"generate_series(0, {size['questions'] - 1}) g JOIN scale_rung r ON r.pos = g % {rung_count}"))
        _timed(world, "reports", lambda: insert(cursor, ProblemReport, {
            "learner": f"{low} + g % {learners}", "rung": "r.rung_id", "message": "'The hidden test seems to expect the wrong shape.'",
            "status": "CASE WHEN g % 4 = 0 THEN 'open' ELSE 'resolved' END", "created_at": "now() - (g % 365) * interval '1 day'",
        }, f"generate_series(0, {size['reports'] - 1}) g JOIN scale_rung r ON r.pos = g % {rung_count}"))

        # The rejudge of the hot rung: every one of its submissions regraded, the preview not yet applied.
        rejudge = Rejudge.objects.create(created_by=admin, target="current", note="scale bench")
        world.rejudge_id = rejudge.pk
        hot_current = RungVersion.objects.filter(rung_id=hot[0]).order_by("-number").values_list("pk", flat=True).first()
        _timed(world, "rejudge_results", lambda: insert(cursor, RejudgeResult, {
            "rejudge": str(rejudge.pk), "submission": "s.id", "old_version": "s.rung_version_id", "new_version": str(hot_current),
            "old_outcome": "s.outcome", "new_outcome": "CASE WHEN s.id % 7 = 0 THEN 'passed' ELSE s.outcome END",
            "status": "'done'", "enqueued_at": "now()", "finished_at": "now()", "old_tests": "'[]'::jsonb", "new_tests": "'[]'::jsonb",
            "claimed_by": "'scale-worker'", "attempts": "1",
        }, f'"{Submission._meta.db_table}" s WHERE s.rung_id = {hot[0]}'))
    # The dashboards read running counts the grading services keep (grader.tallies); rows
    # written around them are counted as an upgrade's migration counts them.
    _timed(world, "tallies", lambda: sum(rebuild_tallies().values()))
    with connection.cursor() as cursor:
        started = time.perf_counter()
        cursor.execute("ANALYZE")
        world.seconds["analyze"] = round(time.perf_counter() - started, 1)
    return world

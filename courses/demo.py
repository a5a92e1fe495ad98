"""The demo course `make run` makes, so a newcomer sees the teacher's side at once.

Development only: scripts/run.sh calls it through ``create_demo_users``,
which refuses under production settings. Running it again changes nothing.
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from core.types import User
from exercises.models import Module, Rung

from .constants import CourseRole, EnrolSource, LatePolicy
from .membership import enrol
from .models import Assignment, AssignmentRung, Course

DEMO_COURSE_SLUG = "demo-course"
DEMO_COURSE_TITLE = "Demo course"
DEMO_ASSIGNMENT_TITLE = "Week 1: memory arithmetic"
# One rung or two of each shipped module: short ones, no GPU.
DEMO_ASSIGNMENT_RUNGS = ("kv-cache-size", "quantization-arithmetic", "training-memory")
DEMO_DUE_IN = dt.timedelta(days=7)
DEMO_LATE_FOR = dt.timedelta(days=3)
DEMO_LATE_FACTOR = 0.5


def create_demo_course(teacher: User, learner: User) -> Course:
    """The "Demo course": ``teacher`` its owner, ``learner`` enrolled, every catalog module
    used, and an assignment due a week after it was first made (late work half a point
    for three days more). Idempotent: an existing demo course is kept as it is."""
    with transaction.atomic():
        course, created = Course.objects.get_or_create(
            slug=DEMO_COURSE_SLUG,
            defaults={"title": DEMO_COURSE_TITLE, "term": "Demo term", "time_zone": "Europe/Berlin", "created_by": teacher},
        )
        if created:
            course.modules.set(Module.objects.all())
        enrol(course, teacher, CourseRole.OWNER, EnrolSource.CREATED)
        enrol(course, learner, CourseRole.LEARNER, EnrolSource.STAFF)
        if not Assignment.objects.filter(course=course, title=DEMO_ASSIGNMENT_TITLE).exists():
            now = timezone.now().replace(minute=0, second=0, microsecond=0)
            due = now + DEMO_DUE_IN
            assignment = Assignment.objects.create(
                course=course, title=DEMO_ASSIGNMENT_TITLE, opens_at=now, due_at=due,
                late_policy=LatePolicy.PENALTY, hard_close_at=due + DEMO_LATE_FOR, late_factor=DEMO_LATE_FACTOR,
            )
            rungs = {rung.slug: rung for rung in Rung.objects.filter(slug__in=DEMO_ASSIGNMENT_RUNGS)}
            AssignmentRung.objects.bulk_create(
                AssignmentRung(assignment=assignment, rung=rungs[slug], order=order)
                for order, slug in enumerate(DEMO_ASSIGNMENT_RUNGS) if slug in rungs
            )
    return course

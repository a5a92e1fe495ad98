"""The demo course `make run` makes, so a newcomer sees the teacher's side at once.

Development only: scripts/run.sh calls it through ``create_demo_users``,
which refuses under production settings. Running it again changes nothing.
It makes the course as a teacher would, through the same services as the
course pages.
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from core.types import User
from exercises.models import Module, Rung

from .assignments import AssignmentDetails, create_assignment
from .constants import CourseRole, EnrolSource, LatePolicy
from .courses import CourseDetails, create_course
from .enrolment import create_join_link
from .membership import enrol
from .models import Course

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
    used, an assignment due a week after it was first made (late work half a point for
    three days more) and a join link. Idempotent: an existing demo course is kept as it is."""
    with transaction.atomic():
        course = Course.objects.select_for_update().filter(slug=DEMO_COURSE_SLUG).first()
        if course is None:
            details = CourseDetails(
                title=DEMO_COURSE_TITLE, slug=DEMO_COURSE_SLUG, term="Demo term", time_zone="Europe/Berlin",
                modules=list(Module.objects.all()), rungs=[],
            )
            course = create_course(teacher, details)
            now = timezone.now().replace(minute=0, second=0, microsecond=0)
            rungs = {rung.slug: rung for rung in Rung.objects.filter(slug__in=DEMO_ASSIGNMENT_RUNGS)}
            create_assignment(course, AssignmentDetails(
                title=DEMO_ASSIGNMENT_TITLE, rungs=[rungs[slug] for slug in DEMO_ASSIGNMENT_RUNGS if slug in rungs],
                opens_at=now, due_at=now + DEMO_DUE_IN, late_policy=LatePolicy.PENALTY,
                hard_close_at=now + DEMO_DUE_IN + DEMO_LATE_FOR, late_factor=DEMO_LATE_FACTOR,
            ))
            create_join_link(course, teacher, None)
        enrol(course, learner, CourseRole.LEARNER, EnrolSource.STAFF)
    return course

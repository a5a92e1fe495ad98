"""Putting someone in a course with a role, and taking them out.

The one way a membership is made or changed: enrolment by link, roster and
LMS launch, and the owner's staff page all call ``enrol``.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from core.types import User

from .constants import CourseRole, EnrolSource
from .models import Course, Membership

# Higher is more: enrolling someone again never lowers their role unless asked.
RANK = {CourseRole.LEARNER: 0, CourseRole.TA: 1, CourseRole.TEACHER: 2, CourseRole.OWNER: 3}


def enrol(course: Course, user: User, role: CourseRole, source: EnrolSource, *, demote: bool = False) -> Membership:
    """Make ``user`` a member of ``course`` with ``role``.

    An existing member keeps a higher role when enrolled again with a lower
    one (a join link opened by a teacher, an LMS TA launch of the course's
    owner) unless ``demote``; otherwise the role changes with one
    conditional UPDATE.
    """
    try:
        with transaction.atomic():
            return Membership.objects.create(course=course, user=user, role=role, source=source)
    except IntegrityError:
        pass
    current = Membership.objects.get(course=course, user=user)
    if current.role == role or (RANK[CourseRole(current.role)] > RANK[role] and not demote):
        return current
    changed = Membership.objects.filter(pk=current.pk, role=current.role).update(role=role)
    if changed != 1:  # someone changed it meanwhile: theirs stands
        current.refresh_from_db()
        return current
    current.role = role
    return current


def unenrol(course: Course, user: User) -> bool:
    """Remove ``user`` from ``course``; their submissions stay theirs. False when they were not a member."""
    deleted, _ = Membership.objects.filter(course=course, user=user).delete()
    return deleted > 0

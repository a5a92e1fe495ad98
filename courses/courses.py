"""Making and running a course: who may create one, its details, its staff, and its rungs.

A course uses catalog modules and single published rungs; it never owns or
changes them. Whoever creates a course becomes its owner; the owner alone
edits it and manages its staff (teachers and TAs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from core.roles import is_admin, is_instructor
from core.types import User, Visitor
from exercises.models import Module, Rung

from .constants import CourseRole, EnrolSource
from .membership import enrol
from .models import Course, Membership

# The roles the owner's staff page hands out and changes between. An owner
# is made by creating the course (or by an admin, in the admin site): the
# staff page never makes or unmakes one, so a course never loses its owner.
STAFF_PAGE_ROLES = (CourseRole.TEACHER, CourseRole.TA)


class StaffChangeRefused(Exception):
    """The staff page could not do what was asked; the message says why, to the owner."""


def may_create_course(user: Visitor) -> bool:
    """A teacher account (a member of the instructors group, ``core.roles.is_instructor``) or an admin.

    Learners and anonymous visitors may not: a course gives its staff its
    learners' work, so creating one is a teacher's act.
    """
    return is_admin(user) or is_instructor(user)


@dataclass(frozen=True)
class CourseDetails:
    title: str
    slug: str
    term: str
    time_zone: str
    modules: list[Module]
    rungs: list[Rung]


def create_course(owner: User, details: CourseDetails) -> Course:
    """Make the course and its owner in one transaction."""
    with transaction.atomic():
        course = Course.objects.create(
            slug=details.slug, title=details.title, term=details.term, time_zone=details.time_zone, created_by=owner
        )
        course.modules.set(details.modules)
        course.rungs.set(details.rungs)
        enrol(course, owner, CourseRole.OWNER, EnrolSource.CREATED)
    return course


def update_course(course: Course, details: CourseDetails) -> bool:
    """Change the course's details; False when the course was deleted meanwhile.

    Assignments keep their rungs even when a module leaves the course: they
    were set on purpose, and their learners' passes stand.
    """
    with transaction.atomic():
        changed = Course.objects.filter(pk=course.pk).update(
            slug=details.slug, title=details.title, term=details.term, time_zone=details.time_zone
        )
        if changed != 1:
            return False
        course.modules.set(details.modules)
        course.rungs.set(details.rungs)
    course.slug, course.title, course.term, course.time_zone = details.slug, details.title, details.term, details.time_zone
    return True


def course_rungs(course: Course) -> list[Rung]:
    """The published rungs the course uses: its modules' rungs in catalog order, then its single rungs."""
    rungs = (
        Rung.objects.filter(current_version__isnull=False)
        .filter(Q(module__courses=course) | Q(courses=course))
        .select_related("current_version", "module__track")
        .distinct()
        .order_by("module__track__order", "module__order", "module__slug", "senior", "order", "slug")
    )
    return list(rungs)


def courses_of(user: User) -> dict[CourseRole, list[Course]]:
    """``user``'s courses grouped by their role, in role order (owner first), each group newest first."""
    grouped: dict[CourseRole, list[Course]] = {role: [] for role in CourseRole}
    memberships = Membership.objects.filter(user=user).select_related("course").order_by("-course__created_at", "course__slug")
    for membership in memberships:
        grouped[CourseRole(membership.role)].append(membership.course)
    return {role: courses for role, courses in grouped.items() if courses}


def add_staff(course: Course, user: User, role: CourseRole) -> Membership:
    """Make ``user`` a teacher or TA of ``course``. A learner is promoted; a member
    already staff keeps their role (the staff page's "change role" changes it)."""
    if role not in STAFF_PAGE_ROLES:
        raise StaffChangeRefused("The staff page adds teachers and teaching assistants only.")
    current = Membership.objects.filter(course=course, user=user).values_list("role", flat=True).first()
    if current is not None and current != CourseRole.LEARNER:
        raise StaffChangeRefused(f"{user.username} is already {CourseRole(current).label.lower()} of this course; change their role below.")
    return enrol(course, user, role, EnrolSource.STAFF)


def change_staff_role(course: Course, user_id: int, role: CourseRole) -> None:
    """Switch a teacher to TA or back: one conditional UPDATE that never touches an owner or a learner."""
    if role not in STAFF_PAGE_ROLES:
        raise StaffChangeRefused("A staff member can be made a teacher or a teaching assistant.")
    changed = Membership.objects.filter(course=course, user_id=user_id, role__in=STAFF_PAGE_ROLES).update(role=role)
    if changed != 1:
        raise StaffChangeRefused("That person is not a teacher or teaching assistant of this course (any more).")


def remove_staff(course: Course, user_id: int) -> None:
    """Take a teacher or TA out of the course. Owners stay (an admin changes owners)."""
    deleted, _ = Membership.objects.filter(course=course, user_id=user_id, role__in=STAFF_PAGE_ROLES).delete()
    if deleted != 1:
        raise StaffChangeRefused("That person is not a teacher or teaching assistant of this course (any more).")


def members_by_role(course: Course, roles: Iterable[CourseRole]) -> list[Membership]:
    return list(Membership.objects.filter(course=course, role__in=list(roles)).select_related("user").order_by("role", "user__username"))

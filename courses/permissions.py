"""Who may do what in a course: every course page, download and JSON answer asks here.

Course roles open a course's learners' work, never a rung's hidden content:
that is ``authoring``'s content roles (editor, viewer), which no course role
and no LMS launch grants. An admin (staff) may do everything.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404

from core.roles import is_admin
from core.types import User, Visitor
from exercises.models import Rung

from .constants import STAFF_ROLES, CourseRole
from .models import Course, Membership

# What each course role may do, by capability (docs/courses.md has the table).
# An owner does everything in the course; a teacher all but staff; a TA
# neither staff nor deadlines nor extensions.
CAPABILITIES: dict[str, frozenset[CourseRole]] = {
    "manage_staff": frozenset({CourseRole.OWNER}),
    "edit_course": frozenset({CourseRole.OWNER}),
    "manage_assignments": frozenset({CourseRole.OWNER, CourseRole.TEACHER}),
    "grant_extensions": frozenset({CourseRole.OWNER, CourseRole.TEACHER}),
    "manage_roster": frozenset({CourseRole.OWNER, CourseRole.TEACHER, CourseRole.TA}),
    "view_gradebook": frozenset(STAFF_ROLES),
    "view_learner_work": frozenset(STAFF_ROLES),
    "give_feedback": frozenset(STAFF_ROLES),
    "view_reports": frozenset(STAFF_ROLES),
    "view_course": frozenset(CourseRole),
}


def course_role(user: Visitor, course: Course) -> CourseRole | None:
    """``user``'s role in ``course``; an admin counts as its owner; None for anyone else."""
    if is_admin(user):
        return CourseRole.OWNER
    if not isinstance(user, User) or not user.is_active:
        return None
    role = Membership.objects.filter(course=course, user=user).values_list("role", flat=True).first()
    return CourseRole(role) if role else None


def may(user: Visitor, course: Course, capability: str) -> bool:
    role = course_role(user, course)
    return role is not None and role in CAPABILITIES[capability]


def get_course_for(user: Visitor, slug: str, capability: str) -> tuple[Course, CourseRole]:
    """The course ``slug`` and ``user``'s role in it, if the role allows ``capability``.

    404 for a course that does not exist or that ``user`` is not a member of
    (a stranger learns nothing of it); 403 for a member whose role does not
    allow the capability.
    """
    course = Course.objects.filter(slug=slug).first()
    if course is None:
        raise Http404("No such course.")
    role = course_role(user, course)
    if role is None:
        raise Http404("No such course.")
    if role not in CAPABILITIES[capability]:
        raise PermissionDenied("Your role in this course does not allow this.")
    return course, role


def is_learner_of(course: Course, learner: User | int) -> bool:
    """Whether ``learner`` is a learner of ``course``: staff see only their own course's learners' work."""
    return Membership.objects.filter(course=course, user=learner, role=CourseRole.LEARNER).exists()


def staff_courses_of(user: User) -> list[Course]:
    """The courses where ``user`` is staff (every course for an admin)."""
    if is_admin(user):
        return list(Course.objects.all())
    return list(Course.objects.filter(memberships__user=user, memberships__role__in=STAFF_ROLES).distinct())


def teaches_rung(user: Visitor, rung: Rung) -> bool:
    """Whether ``user`` is staff (owner, teacher, TA) of a course that uses ``rung``: its module, the rung
    itself, or an assignment with it. Course staff see of a rung what a learner who solved it sees (the
    reference, the hidden tests' names and descriptions), never more: that is a content role's."""
    if not isinstance(user, User) or not user.is_active:
        return False
    uses = Q(course__modules=rung.module_id) | Q(course__rungs=rung) | Q(course__assignments__rungs=rung)
    return Membership.objects.filter(uses, user=user, role__in=STAFF_ROLES).exists()

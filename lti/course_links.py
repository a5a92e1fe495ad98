"""An LMS course is one course here: made on its first launch, its LMS roles mapped to course roles of it alone.

The launch's context (django-lti's ``LtiContext``, one per LMS course and
deployment) maps to one ``courses.Course`` through ``CourseContext``. The
first launch of a link from a context makes the course (titled after the
context, its slug made unique, time zone UTC until its owner changes it);
every launch adds the launched link's module or rung to it.

Roles are the LMS's context roles of this launch (or of this roster fetch)
and reach this one course only, never a content role on the catalog:

- the TeachingAssistant sub-role -> TA;
- Instructor or course Administrator -> teacher, and owner for the first of
  them (the one whose launch made the course, or the first to come to a
  course a learner's launch made);
- Learner -> learner;
- anything else (Mentor, ContentDeveloper alone) -> no course role.

A membership that came from the LMS follows the LMS's word at every launch,
down as well as up: an instructor switched to Learner in the LMS is a
learner here from their next launch. A membership made here (the owner's
staff page, a join link, a roster upload) is only ever raised by a launch.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.utils.text import slugify
from lti_tool.lti_core.constants import ContextRole
from lti_tool.lti_core.utils import normalize_role
from lti_tool.models import LtiContext

from core.types import User
from courses.constants import CourseRole, EnrolSource
from courses.membership import enrol, unenrol
from courses.models import Course, Membership

from .models import CourseContext, Placement

log = logging.getLogger(__name__)

_MEMBERSHIP_ROLES = "http://purl.imsglobal.org/vocab/lis/v2/membership"
# LTI 1.3's TA: the sub-role ".../membership/Instructor#TeachingAssistant";
# some LMSes send the short "TeachingAssistant" (".../membership#TeachingAssistant").
_TA_SUFFIX = "#TeachingAssistant"
DEFAULT_TITLE = "LMS course"
SLUG_BASE_CHARS = 40


def course_role_for(roles: Iterable[str]) -> CourseRole | None:
    """The course role the LMS's context roles ``roles`` map to (TEACHER for an instructor; the caller decides on OWNER)."""
    normalized = {normalize_role(str(role)) for role in roles}
    if any(role.startswith(_MEMBERSHIP_ROLES) and role.endswith(_TA_SUFFIX) for role in normalized):
        return CourseRole.TA
    if ContextRole.INSTRUCTOR in normalized or ContextRole.ADMINISTRATOR in normalized:
        return CourseRole.TEACHER
    if ContextRole.LEARNER in normalized:
        return CourseRole.LEARNER
    return None


def course_of(context: LtiContext) -> Course | None:
    """The course ``context`` is, if a launch made it already."""
    link = CourseContext.objects.select_related("course").filter(context=context).first()
    return link.course if link is not None else None


def _slugs(title: str) -> Iterable[str]:
    base = slugify(title)[:SLUG_BASE_CHARS].strip("-") or "lms-course"
    yield base
    for _ in range(8):
        yield f"{base}-{secrets.token_hex(3)}"


def course_for_context(context: LtiContext, created_by: User | None) -> Course:
    """The course ``context`` is, made now when it is the context's first launch.

    Of two concurrent first launches one makes it; the other finds it (the
    context's one-to-one link to a course is unique).
    """
    found = course_of(context)
    if found is not None:
        return found
    title = (context.title or context.label or DEFAULT_TITLE)[:200]
    for slug in _slugs(title):
        if Course.objects.filter(slug=slug).exists():
            continue
        try:
            with transaction.atomic():
                course = Course.objects.create(slug=slug, title=title, time_zone="UTC", created_by=created_by)
                CourseContext.objects.create(context=context, course=course)
        except IntegrityError:
            found = course_of(context)
            if found is not None:
                return found
            continue  # the slug was taken meanwhile
        log.info("LTI: course %s made for LMS context %s", course.slug, context.pk)
        return course
    raise RuntimeError(f"no free course slug for {title!r}")


def place_in_course(course: Course, placement: Placement) -> None:
    """The course uses what the link opens: its rung, or its whole module."""
    if placement.rung is not None:
        course.rungs.add(placement.rung)
    else:
        course.modules.add(placement.module)


def enrol_from_lms(course: Course, user: User, role: CourseRole | None, *, may_own: bool) -> Membership | None:
    """Give ``user`` the course role the LMS says (see the module's docstring); None when they end with none.

    ``may_own``: a teacher becomes the owner when the course has none yet
    (launches; a roster fetch never makes an owner). The course row is
    locked meanwhile, so two first instructors make one owner.
    """
    with transaction.atomic():
        Course.objects.select_for_update().filter(pk=course.pk).first()
        current = Membership.objects.filter(course=course, user=user).first()
        follows_lms = current is not None and current.source == EnrolSource.LTI
        if role is None:
            if follows_lms:
                unenrol(course, user)
            return None if follows_lms or current is None else current
        if role == CourseRole.TEACHER:
            already_owner = current is not None and current.role == CourseRole.OWNER
            if already_owner or (may_own and not Membership.objects.filter(course=course, role=CourseRole.OWNER).exists()):
                role = CourseRole.OWNER
        return enrol(course, user, role, EnrolSource.LTI, demote=follows_lms)

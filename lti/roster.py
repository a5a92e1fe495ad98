"""Names and roles (NRPS): an LMS course's roster from the LMS, beside each member's progress on a module.

``refresh_roster`` fetches the roster through the LMS course's membership
service, stores it as django-lti memberships, and enrols each active member
in the LMS course's course here with the role the LMS gives them
(``course_links``; an account is made for a member who never launched).
``roster_for`` lists, for every LMS course that links to a module (or one
of its rungs) and whose course here the viewer is staff of, its members and
where each stands on each rung, and the grades sent back for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import requests
from django.db.models import Q, QuerySet
from lti_tool.models import LtiContext, LtiMembership, LtiUser
from pylti1p3.exception import LtiException
from pylti1p3.names_roles import NamesRolesProvisioningService

from core.roles import is_admin
from courses.models import Course as CourseHere
from courses.permissions import CAPABILITIES
from exercises.models import Module, Rung
from grader.models import Progress, Submission

from . import course_links, tool
from .launches import account_for
from .models import Placement, ScorePost

SOLVED = "solved"
STARTED = "started"
NOT_STARTED = "not started"


class RosterUnavailable(Exception):
    pass


def refresh_roster(context: LtiContext) -> int:
    """Fetch the course's members from the LMS and store them; how many came."""
    if not context.memberships_url:
        raise RosterUnavailable("This course's LMS has not offered its roster (no names and roles service in its launches).")
    service = NamesRolesProvisioningService(tool.service_connector(context.deployment.registration), {"context_memberships_url": context.memberships_url})
    try:
        members: list[dict[str, Any]] = list(service.get_members())  # type: ignore[arg-type]
    except (LtiException, requests.RequestException, ValueError) as exc:
        raise RosterUnavailable(f"The LMS did not give the roster: {exc}"[:500]) from exc
    # NRPS makes status optional (Active when absent); django-lti reads it as required.
    members = [{**member, "status": member.get("status") or "Active", "roles": member.get("roles") or []} for member in members]
    context.update_memberships(members)
    enrol_members(context, members)
    return len(members)


def enrol_members(context: LtiContext, members: list[dict[str, Any]]) -> None:
    """Each active member in the context's course with the role the LMS gives them; an inactive one out, if the LMS put them in.

    Nothing when no launch has made the context's course yet. A roster
    fetch never makes an owner.
    """
    course = course_links.course_of(context)
    if course is None:
        return
    people = {lti_user.sub: lti_user for lti_user in LtiUser.objects.filter(registration=context.deployment.registration, sub__in=[str(m["user_id"]) for m in members])}
    for member in members:
        lti_user = people.get(str(member["user_id"]))
        if lti_user is None:
            continue
        active = member["status"] == "Active"
        role = course_links.course_role_for(member["roles"]) if active else None
        if role is None and lti_user.auth_user_id is None:
            continue  # no account, and none needed
        course_links.enrol_from_lms(course, account_for(lti_user), role, may_own=False)


@dataclass
class RosterRow:
    membership: LtiMembership
    states: list[str]
    scores: list[ScorePost] = field(default_factory=list)

    @property
    def name(self) -> str:
        user = self.membership.user
        return user.name or " ".join(part for part in (user.given_name, user.family_name) if part) or user.email or user.sub

    @property
    def role(self) -> str:
        if self.membership.is_instructor or self.membership.is_administrator:
            return "instructor"
        return "learner" if self.membership.is_learner else "member"


@dataclass
class Course:
    context: LtiContext
    placements: list[Placement]
    rows: list[RosterRow]


def courses_linking(module: Module, viewer: Any) -> QuerySet[LtiContext]:
    """The LMS courses linking to ``module`` whose rosters ``viewer`` may see:
    those whose course here they are staff of (a course role with
    ``manage_roster``: owner, teacher, TA), or every one for an admin.

    A content role on the module is not enough, nor is it needed: courses
    of other LMSes and other teachers link to the same module, and their
    members' names and progress are their course staff's to see.
    """
    contexts = LtiContext.objects.filter(resource_links__placement__module=module, course_link__isnull=False)
    if not is_admin(viewer):
        contexts = contexts.filter(course_link__course__memberships__user=viewer,
                                   course_link__course__memberships__role__in=CAPABILITIES["manage_roster"])
    ordered: QuerySet[LtiContext] = contexts.select_related("deployment__registration", "course_link__course").distinct().order_by("title", "pk")
    return ordered


def roster_for(module: Module, rungs: list[Rung], viewer: Any) -> list[Course]:
    """Each LMS course linking to ``module`` that ``viewer`` may see: its active members, their state on each of ``rungs``, their scores sent."""
    return [roster_of(context, rungs, Placement.objects.filter(resource_link__context=context, module=module)) for context in courses_linking(module, viewer)]


def roster_of(context: LtiContext, rungs: list[Rung], placements: QuerySet[Placement]) -> Course:
    """``context``'s active members, their state on each of ``rungs``, and the scores sent to ``placements`` for them."""
    memberships = list(context.memberships.filter(is_active=True).select_related("user").order_by("user__family_name", "user__name", "user__sub"))
    account_ids = [m.user.auth_user_id for m in memberships if m.user.auth_user_id is not None]
    solved = set(Progress.objects.filter(user_id__in=account_ids, rung__in=rungs, solved_at__isnull=False).values_list("user_id", "rung_id"))
    # Started: any Run or Submit on the rung.
    started = set(Submission.objects.filter(user_id__in=account_ids, rung__in=rungs).values_list("user_id", "rung_id").distinct())
    linked = list(placements.select_related("rung", "resource_link"))
    posts: dict[int, list[ScorePost]] = {}
    for post in ScorePost.objects.filter(placement__in=linked).select_related("placement__rung").order_by("-enqueued_at"):
        posts.setdefault(post.lti_user_id, []).append(post)
    rows = []
    for membership in memberships:
        account = membership.user.auth_user_id
        states = []
        for rung in rungs:
            key = (account, rung.pk)
            states.append(SOLVED if key in solved else STARTED if key in started else NOT_STARTED)
        rows.append(RosterRow(membership, states, posts.get(membership.user_id, [])))
    return Course(context, linked, rows)


def course_rungs(course: CourseHere) -> list[Rung]:
    """The published rungs ``course`` uses (its modules' and its single rungs), in catalog order."""
    used = Q(module__courses=course) | Q(courses=course)
    rungs = Rung.objects.filter(used, current_version__isnull=False).select_related("current_version", "module").distinct()
    return list(rungs.order_by("module__order", "module__slug", "order", "slug"))

"""Course pages: my courses, creating and editing a course, its staff, enrolment and assignments.

Every view that names a course goes through ``permissions.get_course_for``
(404 to a stranger, 403 to a role without the capability), validates
through a form, calls one service and renders or redirects. Course pages
run in the course's time zone: dates are typed and shown in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.types import AuthenticatedHttpRequest, User
from grader import messages

from . import assignments as assignment_services
from . import courses as course_services
from . import enrolment
from .constants import STAFF_ROLES, CourseRole, LatePolicy
from .forms import AssignmentForm, CourseForm, ExtensionForm, JoinCodeForm, JoinLinkForm, RosterForm, StaffAddForm, StaffRoleForm
from .models import Assignment, Course, JoinLink, Membership
from .permissions import CAPABILITIES, get_course_for


@contextmanager
def _course_zone(course: Course) -> Iterator[None]:
    """Dates typed into forms and shown by templates read in the course's time zone."""
    with timezone.override(ZoneInfo(course.time_zone)):
        yield


def _tell(request: AuthenticatedHttpRequest, done: bool, success: str, failure: str) -> None:
    """Flash what a state change did: ``failure`` when its conditional UPDATE or DELETE found nothing to change."""
    if done:
        flash.success(request, success)
    else:
        flash.error(request, failure)


def _course_url(course: Course, anchor: str) -> str:
    return f"{reverse('courses:course', args=[course.slug])}#{anchor}"


def _may(role: CourseRole, capability: str) -> bool:
    return role in CAPABILITIES[capability]


def _details(form: CourseForm) -> course_services.CourseDetails:
    data = form.cleaned_data
    return course_services.CourseDetails(
        title=data["title"],
        slug=data["slug"],
        term=data["term"],
        time_zone=data["time_zone"],
        modules=list(data["modules"]),
        rungs=list(data["rungs"]),
    )


# ---- My courses, creating a course ----


@login_required
@require_GET
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    grouped = course_services.courses_of(request.user)
    context = {
        "groups": [(role, courses) for role, courses in grouped.items()],
        "may_create": course_services.may_create_course(request.user),
        "join_form": JoinCodeForm(),
        "no_courses": messages.NO_COURSES,
    }
    return render(request, "courses/home.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def course_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    if not course_services.may_create_course(request.user):
        raise PermissionDenied("Only teacher accounts create courses.")
    form = CourseForm(request.POST or None, initial={"time_zone": "UTC"})
    if request.method == "POST" and form.is_valid():
        course = course_services.create_course(request.user, _details(form))
        flash.success(request, f"Course “{course.title}” created. Add an assignment, then share a join link.")
        return redirect("courses:course", course.slug)
    return render(request, "courses/course_form.html", {"form": form, "course": None}, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def course_edit(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "edit_course")
    # The form validates on a copy: a refused edit (a slug taken by another
    # course) must not change the course the page's links are built from.
    form = CourseForm(request.POST or None, instance=Course.objects.get(pk=course.pk))
    if request.method == "POST" and form.is_valid():
        if not course_services.update_course(course, _details(form)):
            raise Http404("No such course.")
        flash.success(request, "Course saved.")
        return redirect("courses:course", course.slug)
    return render(request, "courses/course_form.html", {"form": form, "course": course}, status=400 if form.errors else 200)


# ---- The course page ----


def _course_page(request: AuthenticatedHttpRequest, course: Course, role: CourseRole, status: int = 200, **extra: Any) -> HttpResponse:
    with _course_zone(course):
        context: dict[str, Any] = {"course": course, "role": role, "is_staff": role in STAFF_ROLES}
        if role in STAFF_ROLES:
            context.update(
                members=course_services.members_by_role(course, list(CourseRole)),
                assignments=list(course.assignments.prefetch_related("assignment_rungs__rung__current_version")),
                links=list(course.join_links.all()),
                may_manage_roster=_may(role, "manage_roster"),
                may_manage_assignments=_may(role, "manage_assignments"),
                may_edit=_may(role, "edit_course"),
                may_manage_staff=_may(role, "manage_staff"),
                link_form=extra.pop("link_form", None) or JoinLinkForm(),
                roster_form=extra.pop("roster_form", None) or RosterForm(),
                now=timezone.now(),
            )
        else:
            context["entries"] = assignment_services.course_assignments_for_learner(course, request.user)
            context["no_assignments"] = messages.NO_ASSIGNMENTS
        context.update(extra)
        return render(request, "courses/course.html", context, status=status)


@login_required
@require_GET
def course_detail(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, role = get_course_for(request.user, slug, "view_course")
    return _course_page(request, course, role)


# ---- Staff (owner only) ----


@login_required
@require_http_methods(["GET", "POST"])
def staff(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_staff")
    form = StaffAddForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            user: User = form.cleaned_data["username"]
            try:
                course_services.add_staff(course, user, CourseRole(form.cleaned_data["role"]))
            except course_services.StaffChangeRefused as exc:
                form.add_error("username", str(exc))
            else:
                flash.success(request, f"{user.username} is now {CourseRole(form.cleaned_data['role']).label.lower()} of this course.")
                return redirect("courses:staff", course.slug)
        status = 400
    members = course_services.members_by_role(course, STAFF_ROLES)
    rows = [(member, StaffRoleForm(initial={"role": member.role}, prefix=f"m{member.user_id}")) for member in members]
    return render(request, "courses/staff.html", {"course": course, "form": form, "rows": rows}, status=status)


@login_required
@require_POST
def staff_role(request: AuthenticatedHttpRequest, slug: str, user_id: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_staff")
    form = StaffRoleForm(request.POST, prefix=f"m{user_id}")
    if not form.is_valid():
        flash.error(request, "Choose teacher or teaching assistant.")
        return redirect("courses:staff", course.slug)
    try:
        course_services.change_staff_role(course, user_id, CourseRole(form.cleaned_data["role"]))
    except course_services.StaffChangeRefused as exc:
        flash.error(request, str(exc))
    else:
        flash.success(request, "Role changed.")
    return redirect("courses:staff", course.slug)


@login_required
@require_POST
def staff_remove(request: AuthenticatedHttpRequest, slug: str, user_id: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_staff")
    try:
        course_services.remove_staff(course, user_id)
    except course_services.StaffChangeRefused as exc:
        flash.error(request, str(exc))
    else:
        flash.success(request, "Removed from the course's staff.")
    return redirect("courses:staff", course.slug)


# ---- Enrolment: join links, the join page, roster, removing a learner ----


@login_required
@require_POST
def link_create(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, role = get_course_for(request.user, slug, "manage_roster")
    with _course_zone(course):
        form = JoinLinkForm(request.POST)
        valid = form.is_valid()
    if not valid:
        return _course_page(request, course, role, status=400, link_form=form)
    expires_at = form.cleaned_data["expires_at"]
    if expires_at is not None and expires_at <= timezone.now():
        form.add_error("expires_at", "The expiry must be in the future.")
        return _course_page(request, course, role, status=400, link_form=form)
    link = enrolment.create_join_link(course, request.user, expires_at)
    flash.success(request, f"Join link created: code {link.code}.")
    return redirect(_course_url(course, "links"))


@login_required
@require_POST
def link_revoke(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_roster")
    _tell(
        request,
        enrolment.revoke_join_link(course, pk),
        "Join link revoked: it no longer enrols anyone.",
        "That join link was already revoked.",
    )
    return redirect(_course_url(course, "links"))


@require_GET
def join_by_code(request: HttpRequest) -> HttpResponse:
    """The "join by code" form's target: on to the join page of the code typed."""
    form = JoinCodeForm(request.GET)
    code = enrolment.normalise_code(form.cleaned_data["code"]) if form.is_valid() else ""
    if not code:
        flash.error(request, messages.JOIN_UNKNOWN)
        return redirect("courses:home")
    return redirect("courses:join", code)


@login_required
@require_http_methods(["GET", "POST"])
def join(request: AuthenticatedHttpRequest, code: str) -> HttpResponse:
    """GET shows the course and a confirm button; POST joins. Opening a link never enrols by itself."""
    check = enrolment.check_join_code(code)
    link: JoinLink | None = check.link
    if check.state is not enrolment.JoinState.OPEN or link is None:
        status = 404 if link is None else 410
        return render(request, "courses/join.html", {"refusal": check.sentence, "link": link}, status=status)
    course = link.course
    current = Membership.objects.filter(course=course, user=request.user).values_list("role", flat=True).first()
    if request.method == "POST":
        check, membership = enrolment.join_with_code(request.user, code)
        if membership is None:  # revoked or expired between the page and the click
            return render(request, "courses/join.html", {"refusal": check.sentence, "link": check.link}, status=410)
        if current is None:
            flash.success(request, messages.JOIN_DONE.format(course=course.title))
        return redirect("courses:course", course.slug)
    already = messages.JOIN_ALREADY_MEMBER.format(role=CourseRole(current).label.lower()) if current else ""
    terms = messages.JOIN_TERMS.format(time_zone=course.time_zone)
    return render(request, "courses/join.html", {"link": link, "course": course, "already": already, "terms": terms})


@login_required
@require_POST
def roster_upload(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, role = get_course_for(request.user, slug, "manage_roster")
    form = RosterForm(request.POST, request.FILES)
    if not form.is_valid():
        return _course_page(request, course, role, status=400, roster_form=form)
    try:
        result = enrolment.upload_roster(course, form.cleaned_data["roster"])
    except enrolment.RosterRefused as refused:
        return _course_page(request, course, role, status=400, roster_form=form, roster_refusal=refused)
    flash.success(
        request,
        f"Roster uploaded: {len(result.added)} enrolled as learners, {len(result.already)} already in the course (their roles unchanged).",
    )
    return redirect(_course_url(course, "roster"))


@login_required
@require_POST
def learner_remove(request: AuthenticatedHttpRequest, slug: str, user_id: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_roster")
    _tell(
        request,
        enrolment.remove_learner(course, user_id),
        "Learner removed from the course. Their attempts stay theirs.",
        "That person is not a learner of this course (any more).",
    )
    return redirect(_course_url(course, "roster"))


# ---- Assignments and extensions ----


def _get_assignment(course: Course, pk: int) -> Assignment:
    return get_object_or_404(Assignment.objects.prefetch_related("assignment_rungs__rung__current_version"), pk=pk, course=course)


def _assignment_details(form: AssignmentForm) -> assignment_services.AssignmentDetails:
    data = form.cleaned_data
    return assignment_services.AssignmentDetails(
        title=data["title"],
        rungs=form.ordered_rungs(),
        opens_at=data["opens_at"],
        due_at=data["due_at"],
        late_policy=LatePolicy(data["late_policy"]),
        hard_close_at=data.get("hard_close_at"),
        late_factor=data["late_factor"] if data.get("late_factor") is not None else 1.0,
    )


@login_required
@require_http_methods(["GET", "POST"])
def assignment_new(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_assignments")
    with _course_zone(course):
        form = AssignmentForm(request.POST or None, course_rungs=course_services.course_rungs(course))
        if request.method == "POST" and form.is_valid():
            assignment = assignment_services.create_assignment(course, _assignment_details(form))
            flash.success(request, f"Assignment “{assignment.title}” created.")
            return redirect("courses:assignment", course.slug, assignment.pk)
        return render(
            request,
            "courses/assignment_form.html",
            {"course": course, "form": form, "assignment": None},
            status=400 if form.errors else 200,
        )


@login_required
@require_http_methods(["GET", "POST"])
def assignment_edit(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_assignments")
    assignment = _get_assignment(course, pk)
    with _course_zone(course):
        form = AssignmentForm(
            request.POST or None, initial=AssignmentForm.initial_for(assignment), course_rungs=course_services.course_rungs(course)
        )
        if request.method == "POST" and form.is_valid():
            if not assignment_services.update_assignment(course, assignment.pk, _assignment_details(form)):
                raise Http404("No such assignment.")
            flash.success(request, "Assignment saved.")
            return redirect("courses:assignment", course.slug, assignment.pk)
        context = {"course": course, "form": form, "assignment": assignment}
        return render(request, "courses/assignment_form.html", context, status=400 if form.errors else 200)


@login_required
@require_POST
def assignment_delete(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "manage_assignments")
    _tell(
        request,
        assignment_services.delete_assignment(course, pk),
        "Assignment deleted. Learners' attempts stay theirs.",
        "That assignment was already deleted.",
    )
    return redirect("courses:course", course.slug)


def _assignment_page(
    request: AuthenticatedHttpRequest, course: Course, role: CourseRole, assignment: Assignment, form: ExtensionForm | None = None
) -> HttpResponse:
    with _course_zone(course):
        may_extend = _may(role, "grant_extensions")
        if form is None and may_extend:
            form = ExtensionForm(assignment=assignment, learners=_learners(course))
        context = {
            "course": course,
            "role": role,
            "assignment": assignment,
            "rungs": [link.rung for link in assignment.assignment_rungs.all()],
            "extensions": list(assignment.extensions.select_related("learner", "granted_by").order_by("learner__username")),
            "may_manage_assignments": _may(role, "manage_assignments"),
            "may_extend": may_extend,
            "form": form,
        }
        return render(request, "courses/assignment.html", context, status=400 if form is not None and form.errors else 200)


def _learners(course: Course) -> Any:
    return User.objects.filter(course_memberships__course=course, course_memberships__role=CourseRole.LEARNER).order_by("username")


@login_required
@require_GET
def assignment_detail(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    course, role = get_course_for(request.user, slug, "view_learner_work")
    return _assignment_page(request, course, role, _get_assignment(course, pk))


@login_required
@require_POST
def extension_grant(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    course, role = get_course_for(request.user, slug, "grant_extensions")
    assignment = _get_assignment(course, pk)
    with _course_zone(course):
        form = ExtensionForm(request.POST, assignment=assignment, learners=_learners(course))
        valid = form.is_valid()
    if not valid:
        return _assignment_page(request, course, role, assignment, form)
    learner: User = form.cleaned_data["learner"]
    assignment_services.grant_extension(
        assignment, learner, form.cleaned_data["due_at"], form.cleaned_data.get("hard_close_at"), request.user
    )
    flash.success(request, f"Extension for {learner.username} saved.")
    return redirect("courses:assignment", course.slug, assignment.pk)


@login_required
@require_POST
def extension_remove(request: AuthenticatedHttpRequest, slug: str, pk: int, user_id: int) -> HttpResponse:
    course, _ = get_course_for(request.user, slug, "grant_extensions")
    assignment = _get_assignment(course, pk)
    _tell(
        request,
        assignment_services.remove_extension(assignment, user_id),
        "Extension removed: the assignment's own dates apply again.",
        "That extension was already removed.",
    )
    return redirect("courses:assignment", course.slug, assignment.pk)

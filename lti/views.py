"""The tool's endpoints: key set, OIDC login initiation, launch, deep linking, the course rosters.

The login and launch requests come from the LMS (a cross-site form post
or redirect), authenticated by the signed launch token, not by a CSRF
cookie: they are exempt from CSRF. The deep-linking picker is shown in an
LMS dialog: it may be framed.
"""

from __future__ import annotations

import logging

from django.contrib import messages
from django.contrib.auth import login
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from lti_tool.models import Key
from pylti1p3.contrib.django.oidc_login import DjangoOIDCLogin
from pylti1p3.exception import OIDCException

from core.roles import is_admin
from courses.permissions import get_course_for
from exercises.models import Module, Rung

from . import deep_linking, launches, refusals, roster, tool
from .exceptions import LaunchRefused
from .forms import DeepLinkForm
from .models import CourseContext, Placement

log = logging.getLogger(__name__)

LOGIN_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _refused(request: HttpRequest, refusal: LaunchRefused) -> HttpResponse:
    log.warning("LTI launch refused: %s (%s)", refusal.code, refusal.detail)
    words = refusals.REFUSALS[refusal.code]
    context = {"refusal": words, "code": refusal.code, "detail": refusal.detail}
    return render(request, "lti/refused.html", context, status=words.status)


@require_GET
def jwks(request: HttpRequest) -> JsonResponse:
    """The tool's public keys, for the LMS to check what the tool signs."""
    tool.ensure_tool_key()
    return JsonResponse(Key.objects.as_jwks())


@csrf_exempt
@xframe_options_exempt
@require_http_methods(["GET", "POST"])
def oidc_login(request: HttpRequest, registration_uuid: str) -> HttpResponse:
    """Third-party login initiation: remember a state and a nonce, send the browser to the LMS's auth endpoint."""
    tool.ensure_tool_key()
    oidc = DjangoOIDCLogin(request, tool.ToolConfig(registration_uuid), launch_data_storage=tool.launch_storage())  # type: ignore[no-untyped-call]
    try:
        response: HttpResponse = oidc.redirect(request.build_absolute_uri(reverse("lti:launch")))
    except OIDCException as exc:
        return _refused(request, LaunchRefused(refusals.BAD_LOGIN, str(exc)))
    return response


@csrf_exempt
@xframe_options_exempt
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    """A resource-link launch signs the learner in and opens the linked module or rung; a deep-linking launch shows the picker."""
    try:
        accepted = launches.accept_launch(request)
        if accepted.launch.is_deep_link_launch:
            if not accepted.is_instructor:
                raise LaunchRefused(refusals.NOT_INSTRUCTOR)
            launches.join_course(accepted, None)
            form = DeepLinkForm(initial={"launch": deep_linking.sign_launch_id(accepted.launch.get_launch_id())})
            return render(request, "lti/deep_link.html", {"form": form, "choices": deep_linking.choices()})
        target = launches.open_resource_link(accepted)
    except LaunchRefused as refusal:
        return _refused(request, refusal)
    login(request, accepted.user, backend=LOGIN_BACKEND)
    return redirect(target)


@csrf_exempt
@xframe_options_exempt
@require_POST
def deep_link(request: HttpRequest) -> HttpResponse:
    """The instructor's pick, answered to the LMS as a signed deep-linking response (an auto-submitted form).

    Exempt from CSRF: the form carries the signed launch id, which only the
    instructor's deep-linking launch received.
    """
    form = DeepLinkForm(request.POST)
    if not form.is_valid():
        return render(request, "lti/deep_link.html", {"form": form, "choices": deep_linking.choices()}, status=400)
    try:
        answer = deep_linking.answer_deep_link(request, form.cleaned_data["launch"], form.choice(), request.build_absolute_uri(reverse("lti:launch")))
    except LaunchRefused as refusal:
        return _refused(request, refusal)
    return render(request, "lti/deep_link_return.html", {"answer": answer})


def _module_for_course_staff(request: HttpRequest, slug: str) -> Module:
    """The module, for whoever is staff of a course an LMS course linking to it is (404 for anyone else).

    The rosters are the courses' learners: a course role shows them, a
    content role on the module does not.
    """
    module = get_object_or_404(Module, slug=slug)
    if not is_admin(request.user) and not roster.courses_linking(module, request.user).exists():
        raise Http404("No LMS course of yours links to this module.")
    return module


@require_http_methods(["GET", "POST"])
def module_roster(request: HttpRequest, slug: str) -> HttpResponse:
    """Each LMS course linking to the module whose course the viewer is staff of: its roster (NRPS) and who started or solved each rung."""
    if not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    module = _module_for_course_staff(request, slug)
    if request.method == "POST":
        chosen = request.POST.get("context", "")
        if not (chosen.isascii() and chosen.isdigit()):  # "²" is a digit to isdigit(), not to int()
            raise Http404("no such course")
        context = get_object_or_404(roster.courses_linking(module, request.user), pk=int(chosen))
        try:
            count = roster.refresh_roster(context)
        except roster.RosterUnavailable as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{count} members fetched from the LMS for {context}.")
        return redirect("lti:module-roster", slug=module.slug)
    rungs = list(Rung.objects.filter(module=module, current_version__isnull=False).select_related("current_version").order_by("order", "slug"))
    return render(request, "lti/roster.html", {"module": module, "rungs": rungs, "courses": roster.roster_for(module, rungs, request.user)})


@require_http_methods(["GET", "POST"])
def course_roster(request: HttpRequest, slug: str) -> HttpResponse:
    """The LMS course a course is: its roster (NRPS; a fetch enrols its members), who started or solved each rung, the grades sent.

    For the course's staff with ``manage_roster`` (owner, teacher, TA):
    404 for anyone else, and for a course no LMS course is.
    """
    if not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    course, _ = get_course_for(request.user, slug, "manage_roster")
    link = CourseContext.objects.filter(course=course).select_related("context__deployment__registration").first()
    if link is None:
        raise Http404("This course is not an LMS course.")
    if request.method == "POST":
        try:
            count = roster.refresh_roster(link.context)
        except roster.RosterUnavailable as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{count} members fetched from the LMS for {link.context}.")
        return redirect("lti:course-roster", slug=course.slug)
    rungs = roster.course_rungs(course)
    lms_course = roster.roster_of(link.context, rungs, Placement.objects.filter(resource_link__context=link.context))
    return render(request, "lti/course_roster.html", {"course": course, "rungs": rungs, "lms_course": lms_course})

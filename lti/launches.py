"""Accepting a launch: validate it, sign the learner in, find where the link points, enrol them in the LMS course's course.

pylti1p3 checks the OIDC state (against the cookie the login set), that
the nonce was issued here, the registration, the signature against the
platform's key set and the expiry; ``ToolConfig`` refuses unregistered
deployments. pylti1p3 lets the same token and state through twice (it
remembers a validated state), so a nonce is also stored once used here and
a second use is refused as a replay.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from lti_tool.lti_core.constants import ContextRole
from lti_tool.lti_core.utils import normalize_role
from lti_tool.models import LtiLaunch, LtiMembership, LtiUser
from lti_tool.utils import sync_data_from_launch
from pylti1p3.exception import LtiException

from core.types import User
from courses.constants import CourseRole
from courses.models import Course
from exercises.models import Module, Rung

from . import course_links, refusals, tool
from .constants import CLAIM_AGS, CLAIM_CUSTOM, CLAIM_NONCE, CUSTOM_MODULE, CUSTOM_RUNG
from .exceptions import LaunchRefused, UnknownDeployment
from .models import Placement, UsedNonce

log = logging.getLogger(__name__)

# A nonce older than this cannot come back: pylti1p3 forgets issued nonces after a day.
NONCE_MEMORY = timedelta(days=2)


@dataclass(frozen=True)
class AcceptedLaunch:
    launch: LtiLaunch
    user: User
    is_instructor: bool


def validate_launch(request: Any) -> LtiLaunch:
    """The launch of ``request``, checked end to end; LaunchRefused says why not."""
    try:
        # Over HTTPS pylti1p3 already checks its session cookie here, before validate().
        message_launch = tool.message_launch(request)
        message_launch.validate()
    except (LtiException, UnknownDeployment, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise refusals.classify(exc) from exc
    launch = LtiLaunch(message_launch)
    if not launch.deployment.is_active:
        raise LaunchRefused(refusals.INACTIVE_DEPLOYMENT, launch.deployment.deployment_id)
    _use_nonce(launch)
    return launch


def _use_nonce(launch: LtiLaunch) -> None:
    nonce = str(launch.get_claim(CLAIM_NONCE) or "")[:255]
    registration = launch.registration
    UsedNonce.objects.filter(used_at__lt=timezone.now() - NONCE_MEMORY).delete()
    try:
        with transaction.atomic():
            UsedNonce.objects.create(registration=registration, nonce=nonce)
    except IntegrityError as exc:
        raise LaunchRefused(refusals.REPLAY, nonce) from exc


def accept_launch(request: Any) -> AcceptedLaunch:
    """Validate, record the platform's user, course and link (django-lti), and give the learner an account."""
    launch = validate_launch(request)
    if not (launch.is_resource_launch or launch.is_deep_link_launch):
        # Submission review and data privacy launches: valid LTI, not offered here.
        raise LaunchRefused(refusals.BAD_MESSAGE, "only resource links and deep linking are supported")
    sync_data_from_launch(launch)
    user = account_for(launch.user)
    return AcceptedLaunch(launch=launch, user=user, is_instructor=sync_roles(launch))


def sync_roles(launch: LtiLaunch) -> bool:
    """Store the course roles this launch claims, every one of them, and say whether it is an instructor's.

    The role is this launch's, never a stored one: django-lti only ever sets
    a membership's role flags and never clears them, so a TA switched back
    to Learner in the LMS stayed an instructor here, in every later launch.
    """
    roles = {normalize_role(role) for role in launch.roles_claim}
    flags = {
        "is_administrator": ContextRole.ADMINISTRATOR in roles,
        "is_content_developer": ContextRole.CONTENT_DEVELOPER in roles,
        "is_instructor": ContextRole.INSTRUCTOR in roles,
        "is_learner": ContextRole.LEARNER in roles,
        "is_mentor": ContextRole.MENTOR in roles,
    }
    membership: LtiMembership = launch.membership
    if LtiMembership.objects.filter(pk=membership.pk).update(**flags) != 1:
        raise LaunchRefused(refusals.BAD_MESSAGE, "the course membership of this launch vanished while it was stored")
    return flags["is_instructor"] or flags["is_administrator"]


def _username(lti_user: LtiUser) -> str:
    digest = hashlib.sha256(lti_user.sub.encode("utf-8")).hexdigest()[:24]
    return f"{settings.LTI_USERNAME_PREFIX}{lti_user.registration_id}-{digest}"


def account_for(lti_user: LtiUser) -> Any:
    """The platform-scoped account of ``lti_user``: one per (registration, sub), made on the first launch.

    An administrator may link an LTI user to an existing account instead
    (the LTI users admin); a link already there is kept. An account is
    never adopted by its name: anyone could have signed up with the name a
    launch would pick (``lti-<registration>-<hash of sub>``, which a
    learner can work out) and set its password, then logged in as that
    LMS user, a teacher's role included. A name already taken gets a random
    suffix instead.
    """
    User = get_user_model()
    if lti_user.auth_user_id is not None:
        return User.objects.get(pk=lti_user.auth_user_id)
    defaults = {"first_name": (lti_user.given_name or lti_user.name)[:150], "last_name": lti_user.family_name[:150], "email": lti_user.email}
    user = _new_account(User, _username(lti_user), defaults)
    # Conditional: of two concurrent first launches of the same person, one
    # links its account; the other uses that one and drops its own.
    if LtiUser.objects.filter(pk=lti_user.pk, auth_user__isnull=True).update(auth_user=user) != 1:
        user.delete()
        linked = LtiUser.objects.values_list("auth_user_id", flat=True).get(pk=lti_user.pk)
        return User.objects.get(pk=linked)
    return user


def _new_account(User: Any, username: str, defaults: dict[str, str]) -> Any:
    for name in (username, *(f"{username}-{secrets.token_hex(4)}" for _ in range(5))):
        try:
            with transaction.atomic():
                user = User(username=name, **defaults)
                user.set_unusable_password()
                user.save()
                return user
        except IntegrityError:
            continue
    raise LaunchRefused(refusals.BAD_MESSAGE, f"no free account name for {username}")


def _target(launch: LtiLaunch) -> tuple[Module, Rung | None] | None:
    rung_slug = launch.get_custom_claim(CUSTOM_RUNG)
    module_slug = launch.get_custom_claim(CUSTOM_MODULE)
    if rung_slug:
        rung = Rung.objects.select_related("module").filter(slug=str(rung_slug), current_version__isnull=False).first()
        return (rung.module, rung) if rung is not None else None
    if module_slug:
        module = Module.objects.filter(slug=str(module_slug)).first()
        return (module, None) if module is not None else None
    return None


def record_placement(launch: LtiLaunch) -> Placement:
    """Where the launched link points (its custom parameters, else what it pointed to before), and its gradebook column."""
    resource_link = launch.resource_link
    found = _target(launch)
    if found is None:
        placement = Placement.objects.filter(resource_link=resource_link).select_related("module", "rung").first()
        if placement is None:
            raise LaunchRefused(refusals.NO_TARGET, str(launch.get_claim(CLAIM_CUSTOM) or ""))
        found = (placement.module, placement.rung)
    module, rung = found
    ags: dict[str, Any] = launch.get_claim(CLAIM_AGS) or {}
    placement, _ = Placement.objects.update_or_create(
        resource_link=resource_link,
        defaults={
            "module": module,
            "rung": rung,
            "lineitem_url": str(ags.get("lineitem") or "")[:500],
            "lineitems_url": str(ags.get("lineitems") or "")[:500],
            "ags_scopes": [str(scope) for scope in ags.get("scope") or []],
        },
    )
    return placement


def join_course(accepted: AcceptedLaunch, placement: Placement | None) -> Course | None:
    """The course of the launch's LMS course, made on its first launch, with the launcher in the role the LMS gives them.

    ``placement``: the launched link, whose module or rung the course then
    uses; None for a deep-linking launch (the instructor is choosing one).

    A launch without a context claim joins no course: django-lti files every
    such launch of a deployment under one empty context, and its launchers
    are not one class. Nor does a launch whose roles map to no course role
    make one. No launch grants a role on the catalog's content (authoring).
    """
    context = accepted.launch.context
    if not context.id_on_platform:
        return None
    role = course_links.course_role_for(accepted.launch.roles_claim or [])
    if role is None:
        course = course_links.course_of(context)
    else:
        course = course_links.course_for_context(context, created_by=accepted.user if role == CourseRole.TEACHER else None)
    if course is None:
        return None
    if placement is not None:
        course_links.place_in_course(course, placement)
    course_links.enrol_from_lms(course, accepted.user, role, may_own=True)
    return course


def landing_url(placement: Placement) -> str:
    if placement.rung is not None:
        return reverse("rung", args=[placement.rung.slug])
    return reverse("module", args=[placement.module.slug])


def open_resource_link(accepted: AcceptedLaunch) -> str:
    """Record the link's placement, enrol the launcher in the LMS course's course, and say where they land."""
    placement = record_placement(accepted.launch)
    course = join_course(accepted, placement)
    log.info("LTI launch: %s -> %s (course %s)", accepted.user.username, placement, course.slug if course is not None else "none")
    return landing_url(placement)

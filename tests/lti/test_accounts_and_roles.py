"""Who a launch signs in, and with which role: the LMS's word at this launch, never an older one.

Against the real LMS (lti1p3platform) and the tool under the live server.
"""

from __future__ import annotations

import hashlib

import pytest
from django.urls import reverse
from lti_tool.models import LtiMembership, LtiUser

from core.roles import can_edit_module, is_instructor
from courses.constants import CourseRole
from courses.models import Course
from courses.permissions import course_role

from .lms import INSTRUCTOR, LEARNER, Browser, Link

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_account_signed_up_under_the_name_a_launch_would_pick_is_never_adopted(lms, registration, placed_rung, teacher, client):
    from exercises.models import Rung

    # The name is guessable: the registration's number and a hash of the LMS's user id.
    guessed = f"lti-{registration.pk}-{hashlib.sha256(teacher.sub.encode()).hexdigest()[:24]}"
    signup = client.post(reverse("signup"), {"username": guessed, "password1": "Attacker-pass-42x", "password2": "Attacker-pass-42x"})
    assert signup.status_code == 200 and "kept for accounts made by an LMS" in signup.content.decode()
    # Even an account made some other way under that name (e.g. by an admin) is not the teacher's.
    from django.contrib.auth import get_user_model

    planted = get_user_model().objects.create_user(username=guessed, password="Attacker-pass-42x")

    landed, _ = Browser().launch(lms, teacher, placed_rung.id)
    assert landed.status_code == 200
    account = LtiUser.objects.get(sub=teacher.sub).auth_user
    assert account.pk != planted.pk and account.username.startswith(guessed + "-")
    assert not account.has_usable_password()
    module = Rung.objects.get(slug="kv-cache-size").module
    course = Course.objects.get(lti_context__context__id_on_platform=lms.state.course_id)
    assert course_role(account, course) == CourseRole.OWNER and not can_edit_module(account, module)
    planted.refresh_from_db()
    assert course_role(planted, course) is None
    assert not is_instructor(planted) and not can_edit_module(planted, module)
    assert client.post(reverse("login"), {"username": guessed, "password": "Attacker-pass-42x"}).status_code == 302
    assert client.get(reverse("authoring:rung", args=[module.slug, "kv-cache-size"])).status_code == 403


def test_a_teacher_switched_to_learner_in_the_lms_is_a_learner_at_the_next_launch(lms, registration, placed_rung):
    from exercises.models import Module

    ta = lms.enrol("ta-1", "Tara TA", [INSTRUCTOR])
    landed, _ = Browser().launch(lms, ta, placed_rung.id)
    assert landed.status_code == 200
    assert LtiMembership.objects.get(user__sub="ta-1").is_instructor

    ta.roles = [LEARNER]
    other = Module.objects.exclude(rungs__slug="kv-cache-size").first()
    assert other is not None
    lms.state.links["link-other"] = Link(id="link-other", title="other", custom={"dojo_module": other.slug})
    landed, _ = Browser().launch(lms, ta, "link-other")
    assert landed.status_code == 200
    membership = LtiMembership.objects.get(user__sub="ta-1")
    assert (membership.is_instructor, membership.is_learner) == (False, True)
    account = LtiUser.objects.get(sub="ta-1").auth_user
    course = Course.objects.get(lti_context__context__id_on_platform=lms.state.course_id)
    assert course_role(account, course) == CourseRole.LEARNER and not can_edit_module(account, other)
    # And the content picker is for instructors only.
    refused, _ = Browser().launch(lms, ta, "deep-link")
    assert refused.status_code == 403 and 'data-refusal="not_instructor"' in refused.text


def test_an_instructor_sees_the_rosters_of_the_courses_they_teach_and_no_other(lms, registration, placed_rung, student, teacher, live_server):
    from lti_tool.models import LtiContext, LtiDeployment, LtiRegistration

    from .lms import Lms, forms_in

    assert Browser().launch(lms, student, placed_rung.id)[0].status_code == 200
    tess = Browser()
    assert tess.launch(lms, teacher, placed_rung.id)[0].status_code == 200
    roster_url = live_server.url + reverse("lti:module-roster", args=["inference-and-serving"])
    assert "Sam Student" in tess.get(roster_url).text  # her own course

    # An instructor of another registered LMS links the same module to a course of theirs.
    other = Lms().start()
    try:
        second = LtiRegistration.objects.create(name="Other LMS", issuer=other.issuer, client_id=other.client_id, auth_url=other.url("/auth"),
                                                token_url=other.url("/token"), keyset_url=other.url("/jwks"))
        LtiDeployment.objects.create(registration=second, deployment_id=other.deployment_id, is_active=True)
        other.register_tool(login_url=live_server.url + reverse("lti:login", args=[second.uuid]), launch_url=live_server.url + reverse("lti:launch"),
                            jwks_url=live_server.url + reverse("lti:jwks"))
        other.state.course_title = "Another school's course"
        mallory = other.enrol("mallory", "Mallory Other", [INSTRUCTOR])
        other.state.links["l"] = Link(id="l", title="x", custom={"dojo_module": "inference-and-serving"})
        browser = Browser()
        assert browser.launch(other, mallory, "l")[0].status_code == 200
        page = browser.get(roster_url)
        assert page.status_code == 200 and "Mallory Other" in page.text
        assert "Sam Student" not in page.text and lms.state.course_title not in page.text
        assert all(form["fields"].get("context") != str(LtiContext.objects.get(deployment__registration=registration).pk)
                   for form in forms_in(page.text))
        # Asking for the other course's roster by its id is a 404, and fetches nothing.
        victim = LtiContext.objects.get(deployment__registration=registration)
        token = next(form["fields"]["csrfmiddlewaretoken"] for form in forms_in(page.text) if "csrfmiddlewaretoken" in form["fields"])
        assert browser.post(roster_url, {"csrfmiddlewaretoken": token, "context": str(victim.pk)}).status_code == 404
        for odd in ("x", "\u00b2", "-1", "", "9" * 40):  # "²" passes str.isdigit() but not int()
            assert browser.post(roster_url, {"csrfmiddlewaretoken": token, "context": odd}).status_code == 404, odd
    finally:
        other.stop()

"""Each way a launch is refused, with the page that says why, against the real LMS.

Every case starts with a genuine login initiation (the tool issues a state
and a nonce); the LMS then gets one thing wrong. A refused launch signs no
one in and lands nowhere.
"""

from __future__ import annotations

import pytest
from lti_tool.models import LtiDeployment, LtiUser

from lti.models import UsedNonce

from .lms import Browser

pytestmark = pytest.mark.django_db(transaction=True)


def _assert_refused(response, code, status=403):
    assert response.status_code == status, response.text[:800]
    assert f'data-refusal="{code}"' in response.text
    assert "sessionid" not in response.cookies


def test_a_correct_launch_is_accepted(lms, placed_rung, student, browser):
    landed, _ = browser.launch(lms, student, placed_rung.id)
    assert landed.status_code == 200 and landed.url.endswith("/rungs/kv-cache-size/")
    assert LtiUser.objects.get(sub=student.sub).auth_user is not None


def test_an_unknown_deployment_is_refused_and_named(lms, placed_rung, student, browser):
    lms.state.launch_tampering = "unknown_deployment"
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "unknown_deployment")
    assert "deployment-nobody-registered" in refused.text
    # Nothing is created for it: an admin registers deployments.
    assert not LtiDeployment.objects.filter(deployment_id="deployment-nobody-registered").exists()
    assert not LtiUser.objects.exists()


def test_a_deployment_switched_off_is_refused(lms, placed_rung, student, browser, registration):
    LtiDeployment.objects.filter(registration=registration).update(is_active=False)
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "inactive_deployment")


def test_an_expired_token_is_refused(lms, placed_rung, student, browser):
    lms.state.launch_tampering = "expired"
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "expired_token")
    assert "expired" in refused.text


def test_a_replayed_launch_is_refused(lms, placed_rung, student, browser):
    landed, posted = browser.launch(lms, student, placed_rung.id)
    assert landed.status_code == 200
    # The very same token and state, posted again (the browser that launched, or one that captured the form).
    again = browser.post(posted["action"], posted["fields"])
    _assert_refused(again, "replayed_launch")
    assert UsedNonce.objects.count() == 1


def test_a_token_whose_signature_does_not_match_is_refused(lms, placed_rung, student, browser):
    lms.state.launch_tampering = "tampered"
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "bad_signature")
    assert not LtiUser.objects.filter(sub="someone-else").exists()


def test_a_token_signed_with_a_key_the_lms_does_not_publish_is_refused(lms, placed_rung, student, browser):
    from .lms import generate_key_pair

    # The LMS signs with a new key but still publishes the old one.
    private, _public = generate_key_pair()
    lms.registration.set_platform_private_key(private)
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "bad_signature")


def test_a_nonce_the_tool_never_issued_is_refused(lms, placed_rung, student, browser):
    lms.state.launch_tampering = "foreign_nonce"
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "bad_nonce")


def test_a_launch_from_another_browser_is_refused_for_its_state(lms, placed_rung, student, browser):
    auth_page = browser.get(lms.login_url(student, placed_rung.id))
    # Another browser (without the state cookie the login set) posts the launch form.
    stranger = Browser()
    refused, _ = stranger.submit_autopost(auth_page)
    _assert_refused(refused, "bad_state")


def test_a_login_from_an_unregistered_lms_is_refused(lms, placed_rung, student, browser, registration):
    registration.is_active = False
    registration.save()
    refused = browser.get(lms.login_url(student, placed_rung.id))
    _assert_refused(refused, "bad_login", status=400)


def test_a_link_to_nothing_here_is_refused(lms, placed_rung, student, browser):
    placed_rung.custom = {"dojo_rung": "no-such-rung"}
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "no_target", status=404)


def test_a_learner_cannot_deep_link(lms, registration, student, browser):
    refused, _ = browser.launch(lms, student, "deep-link")
    _assert_refused(refused, "not_instructor")


def test_a_forged_deep_link_answer_is_refused(lms, registration, browser, live_server):
    from django.urls import reverse

    answer = browser.post(live_server.url + reverse("lti:deep-link"), {"launch": "forged", "target": "rung:kv-cache-size"})
    _assert_refused(answer, "session_lost")


def test_a_launch_over_https_without_its_session_cookie_is_refused_in_words(client):
    # pylti1p3 checks its session cookie while the launch is built (over
    # HTTPS only): a browser that blocks third-party cookies got a 500.
    from django.urls import reverse

    refused = client.post(reverse("lti:launch"), {"id_token": "a.b.c", "state": "state-x"}, secure=True)
    assert refused.status_code == 403
    assert 'data-refusal="bad_state"' in refused.content.decode()


def test_a_deep_linking_return_address_that_is_not_a_web_address_is_refused(lms, registration, teacher, browser, live_server):
    # It becomes the action of a form the tool's page posts: javascript: would run in this site's page.
    from django.urls import reverse

    from .lms import forms_in

    lms.state.deep_link_return_url = "javascript:alert(document.cookie)"
    picker, _ = browser.launch(lms, teacher, "deep-link")
    assert picker.status_code == 200, picker.text[:800]
    (form,) = [form for form in forms_in(picker.text) if form["action"] == reverse("lti:deep-link")]
    answer = browser.post(live_server.url + form["action"], {**form["fields"], "target": "rung:kv-cache-size"})
    _assert_refused(answer, "bad_message", status=400)
    assert 'action="javascript:' not in answer.text


CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"


@pytest.mark.parametrize(
    "claims",
    [
        {CLAIM + "custom": ["rung", "kv-cache-size"]},
        {CLAIM + "context": "course-ml-systems"},
        {CLAIM + "resource_link": "link-1"},
        {CLAIM + "roles": "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"},
        {CLAIM + "context": {"id": ["course-ml-systems"], "title": {"x": 1}}},
        {CLAIM + "custom": {"rung": {"slug": "kv-cache-size"}}},
        {"https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": ["lineitems"]},
        {"https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": "memberships"},
        {"name": ["Stu", "Dent"]},
    ],
    ids=["custom-list", "context-string", "resource-link-string", "roles-string", "context-fields", "custom-nested", "ags-list", "nrps-string", "name-list"],
)
def test_a_validly_signed_launch_with_claims_of_the_wrong_type_is_refused(lms, placed_rung, student, browser, claims):
    """Issue 55, finding 7: these crashed the launch view (500)."""
    lms.state.launch_claims = claims
    refused, _ = browser.launch(lms, student, placed_rung.id)
    _assert_refused(refused, "bad_message", status=400)
    assert not LtiUser.objects.exists()

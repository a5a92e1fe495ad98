"""The registration page: an admin registers an LMS and its deployment ids, and sees what to paste into the LMS."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.urls import reverse
from lti_tool.models import LtiDeployment, LtiRegistration

pytestmark = pytest.mark.django_db


def test_an_admin_registers_an_lms_with_its_deployment_ids(client, admin_user):
    client.force_login(admin_user)
    add = client.get(reverse("admin:lti_tool_ltiregistration_add"))
    assert add.status_code == 200
    page = add.content.decode()
    assert "http://testserver/lti/jwks.json" in page and "http://testserver/lti/launch/" in page
    response = client.post(reverse("admin:lti_tool_ltiregistration_add"), {
        "name": "University Canvas",
        "uuid": "9c1f3a52-58a4-4b43-9c3d-9e2f0f2b7d11",
        "issuer": "https://canvas.instructure.com",
        "client_id": "10000000000042",
        "auth_url": "https://sso.canvaslms.com/api/lti/authorize_redirect",
        "token_url": "https://sso.canvaslms.com/login/oauth2/token",
        "keyset_url": "https://sso.canvaslms.com/api/lti/security/jwks",
        "is_active": "on",
        "deployments-TOTAL_FORMS": "2", "deployments-INITIAL_FORMS": "0", "deployments-MIN_NUM_FORMS": "0", "deployments-MAX_NUM_FORMS": "1000",
        "deployments-0-deployment_id": "42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb", "deployments-0-is_active": "on",
        "deployments-1-deployment_id": "", "deployments-1-is_active": "on",
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    registration = LtiRegistration.objects.get(client_id="10000000000042")
    assert list(LtiDeployment.objects.filter(registration=registration).values_list("deployment_id", "is_active")) == [
        ("42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb", True)
    ]
    change = client.get(reverse("admin:lti_tool_ltiregistration_change", args=[registration.pk])).content.decode()
    assert f"http://testserver/lti/login/{registration.uuid}/" in change


def test_a_new_deployment_row_starts_switched_on(client, admin_user):
    client.force_login(admin_user)
    page = client.get(reverse("admin:lti_tool_ltiregistration_add")).content.decode()
    assert re.search(r'<input type="checkbox" name="deployments-0-is_active"[^>]* checked', page)


def test_the_tool_publishes_its_signing_key(client):
    keys = client.get(reverse("lti:jwks")).json()["keys"]
    assert len(keys) == 1 and keys[0]["kty"] == "RSA" and keys[0]["alg"] == "RS256" and keys[0]["kid"]
    assert "d" not in keys[0]  # public half only
    assert client.get(reverse("lti:jwks")).json()["keys"] == keys  # one key, made once


def test_only_course_staff_see_the_roster(client, learner, catalog):
    """No course linking the module through an LMS has them as staff: the page does not exist for them."""
    client.force_login(learner)
    assert client.get(reverse("lti:module-roster", args=["inference-and-serving"])).status_code == 404


def test_over_https_the_login_state_cookie_crosses_sites(client, settings):
    """The launch is a cross-site POST: the state cookie must be Secure and SameSite=None to come back with it."""
    from lti_tool.models import LtiRegistration

    settings.CACHES = {**settings.CACHES, "lti": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "lti-https"}}
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    registration = LtiRegistration.objects.create(name="LMS", issuer="https://lms.example", client_id="c1", auth_url="https://lms.example/auth",
                                                  token_url="https://lms.example/token", keyset_url="https://lms.example/jwks")
    url = reverse("lti:login", args=[registration.uuid])
    # No client_id: optional in a login initiation; the registration's uuid in the URL names it.
    response = client.get(url, {"iss": "https://lms.example", "login_hint": "u1", "target_link_uri": "https://dojo.example/lti/launch/"},
                          HTTP_X_FORWARDED_PROTO="https", HTTP_HOST="testserver")
    assert response.status_code == 302 and response["Location"].startswith("https://lms.example/auth?")
    query = dict(parse_qsl(urlsplit(response["Location"]).query))
    assert query["redirect_uri"] == "https://testserver/lti/launch/" and query["client_id"] == "c1"
    (state,) = [cookie for name, cookie in response.cookies.items() if name.startswith("lti1p3-state-")]
    assert state["secure"] and state["samesite"] == "None" and state["httponly"]

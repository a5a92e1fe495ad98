"""The LMS (lti1p3platform over HTTP), the tool under Django's live server, and the registration joining them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse

from .lms import INSTRUCTOR, LEARNER, Browser, Lms


@pytest.fixture(autouse=True)
def _lti_cache_in_process(settings: Any) -> None:
    """The OIDC state and nonces in this process's memory: the live server is a thread of it."""
    settings.CACHES = {**settings.CACHES, "lti": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "lti-tests"}}


@pytest.fixture
def lms() -> Iterator[Lms]:
    platform = Lms().start()
    yield platform
    platform.stop()


@pytest.fixture
def registration(lms: Lms, live_server: Any, catalog: Any) -> Any:
    """The LMS registered with the tool (as an admin would), and the tool with the LMS (pasting the tool's URLs)."""
    from lti_tool.models import LtiDeployment, LtiRegistration

    registration = LtiRegistration.objects.create(
        name="Test LMS", issuer=lms.issuer, client_id=lms.client_id, auth_url=lms.url("/auth"), token_url=lms.url("/token"), keyset_url=lms.url("/jwks"),
    )
    LtiDeployment.objects.create(registration=registration, deployment_id=lms.deployment_id, is_active=True)
    lms.register_tool(
        login_url=live_server.url + reverse("lti:login", args=[registration.uuid]),
        launch_url=live_server.url + reverse("lti:launch"),
        jwks_url=live_server.url + reverse("lti:jwks"),
    )
    return registration


@pytest.fixture
def teacher(lms: Lms) -> Any:
    return lms.enrol("teacher-1", "Tess Teacher", [INSTRUCTOR])


@pytest.fixture
def student(lms: Lms) -> Any:
    return lms.enrol("student-1", "Sam Student", [LEARNER])


@pytest.fixture
def browser() -> Browser:
    return Browser()


@pytest.fixture
def placed_rung(lms: Lms, registration: Any) -> Any:
    """A link to the rung kv-cache-size already in the course, with its gradebook column (as deep linking leaves it)."""
    from .lms import Link

    line = lms.add_lineitem({"label": "KV cache size", "scoreMaximum": 1, "resourceId": "rung:kv-cache-size"})
    link = Link(id="link-kv", title="KV cache size", custom={"dojo_rung": "kv-cache-size"}, lineitem_id=line["id"].rsplit("/", 1)[1])
    lms.state.links[link.id] = link
    return link


def pass_submit(user: Any, slug: str) -> Any:
    """A Submit of ``slug`` by ``user`` graded as passed, in this process (the grading itself is not under test)."""
    from exercises.models import Rung
    from grader import services
    from grader.constants import Kind
    from sandbox.testing import FakeRunner

    submission = services.submit_solution(user=user, rung=Rung.objects.get(slug=slug), kind=Kind.SUBMIT, code="x = 1\n")
    services.grade_submission(submission.pk, runner=FakeRunner())
    submission.refresh_from_db()
    assert submission.outcome == "passed", submission.message
    return submission

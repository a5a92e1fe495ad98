"""A whole LTI 1.3 exchange with an LMS played by lti1p3platform, over real HTTP both ways.

An instructor deep-links a rung into the course; a learner launches it and
lands on the rung signed in as a platform-scoped account and a learner of
the LMS course's course; a passing Submit is posted to the LMS's gradebook
through AGS and read back; the instructor's launch makes them the course's
owner (never an editor of the module), and the roster comes from the LMS
through NRPS, enrolling its members.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from lti_tool.models import LtiUser
from pylti1p3.assignments_grades import AssignmentsGradesService

from core.roles import can_edit_module
from courses.constants import CourseRole
from courses.models import Course
from courses.permissions import course_role
from lti import passback, tool
from lti.models import Placement, ScorePost

from .conftest import pass_submit
from .lms import forms_in

pytestmark = pytest.mark.django_db(transaction=True)


def _deep_link(browser, lms, teacher, live_server, target):
    picker, _ = browser.launch(lms, teacher, "deep-link")
    assert picker.status_code == 200, picker.text[:800]
    assert f'value="{target}"' in picker.text
    (form,) = [form for form in forms_in(picker.text) if form["action"] == reverse("lti:deep-link")]
    answer = browser.post(live_server.url + form["action"], {**form["fields"], "target": target})
    assert answer.status_code == 200, answer.text[:800]
    returned, posted = browser.submit_autopost(answer)
    assert posted["action"] == lms.url("/deep-link-return")
    assert returned.status_code == 200, returned.text
    return returned


def test_deep_link_launch_grade_and_roster(lms, registration, teacher, student, browser, live_server, enqueued):
    # The instructor picks a rung; the LMS checks the signed answer against the tool's key set.
    _deep_link(browser, lms, teacher, live_server, "rung:kv-cache-size")
    (link,) = lms.state.links.values()
    assert link.custom == {"dojo_rung": "kv-cache-size"}
    assert lms.state.lineitems[link.lineitem_id]["resourceId"] == "rung:kv-cache-size"
    # The content picker's launch made the LMS course's course, owned by the instructor; the link's rung comes with its first launch.
    course = Course.objects.get(lti_context__context__id_on_platform=lms.state.course_id)
    assert course_role(LtiUser.objects.get(sub=teacher.sub).auth_user, course) == CourseRole.OWNER and not course.rungs.exists()

    # The learner opens the link: signed in as a platform-scoped account, on the rung.
    learner_browser = type(browser)()
    landed, _ = learner_browser.launch(lms, student, link.id)
    assert landed.status_code == 200, landed.text[:800]
    assert landed.url == live_server.url + reverse("rung", args=["kv-cache-size"])
    account = LtiUser.objects.get(sub=student.sub).auth_user
    assert account is not None and account.username.startswith("lti-") and not account.has_usable_password()
    assert account.username in landed.text
    placement = Placement.objects.get(resource_link__id_on_platform=link.id)
    assert placement.rung is not None and placement.rung.slug == "kv-cache-size" and placement.lineitem_url == lms.url(f"/lineitems/{link.lineitem_id}")

    # A passing Submit is posted to the line item.
    submission = pass_submit(account, "kv-cache-size")
    (post,) = ScorePost.objects.filter(submission=submission)
    assert ("lti_score", post.pk, "maintenance") in enqueued
    passback.post_score(post.pk)
    post.refresh_from_db()
    assert (post.status, post.outcome, post.attempts, post.score_given) == ("done", "posted", 1, 1.0)
    assert lms.state.scores[link.lineitem_id][student.sub]["scoreGiven"] == 1.0

    # Read back through AGS, as the tool sees it.
    service = AssignmentsGradesService(tool.service_connector(registration), {"scope": placement.ags_scopes, "lineitem": placement.lineitem_url,
                                                                              "lineitems": placement.lineitems_url})
    results = service.get_grades()
    assert [(result["userId"], result["resultScore"], result["resultMaximum"]) for result in results] == [(student.sub, 1.0, 1.0)]

    # The instructor's launch of the link keeps them the course's owner, nothing more: no content role on the module.
    landed, _ = browser.launch(lms, teacher, link.id)
    assert landed.status_code == 200
    teacher_account = LtiUser.objects.get(sub=teacher.sub).auth_user
    assert list(course.rungs.values_list("slug", flat=True)) == ["kv-cache-size"]
    assert course_role(teacher_account, course) == CourseRole.OWNER and course_role(account, course) == CourseRole.LEARNER
    assert not can_edit_module(teacher_account, placement.module)

    # The roster, fetched from the LMS through NRPS, with who solved the rung and the grade sent.
    lms.enrol("student-2", "Nia Newcomer", [student.roles[0]])
    roster_url = live_server.url + reverse("lti:module-roster", args=[placement.module.slug])
    page = browser.get(roster_url)
    assert page.status_code == 200, page.text[:800]
    assert "Nia Newcomer" not in page.text
    (refresh,) = [form for form in forms_in(page.text) if "context" in form["fields"]]
    page = browser.post(roster_url, {**refresh["fields"]})
    assert page.status_code == 200 and "3 members fetched" in page.text, page.text[:2000]
    assert "Nia Newcomer" in page.text and "Sam Student" in page.text
    assert 'class="state-solved"' in page.text and 'data-outcome="posted"' in page.text
    # The fetch enrolled the newcomer, who never launched, in the course as the LMS says: a learner.
    newcomer = LtiUser.objects.get(sub="student-2").auth_user
    assert newcomer is not None and course_role(newcomer, course) == CourseRole.LEARNER
    assert course_role(teacher_account, course) == CourseRole.OWNER


def test_an_lms_user_an_admin_linked_to_an_account_signs_in_as_it(lms, placed_rung, registration, student, browser, learner):
    LtiUser.objects.create(registration=registration, sub=student.sub, auth_user=learner)
    landed, _ = browser.launch(lms, student, placed_rung.id)
    assert landed.status_code == 200 and learner.username in landed.text
    assert LtiUser.objects.get(sub=student.sub).auth_user == learner


def test_a_pick_of_nothing_published_is_refused_and_the_picker_kept(lms, registration, teacher, browser, live_server):
    picker, _ = browser.launch(lms, teacher, "deep-link")
    (form,) = [form for form in forms_in(picker.text) if form["action"] == reverse("lti:deep-link")]
    again = browser.post(live_server.url + form["action"], {**form["fields"], "target": "rung:no-such-rung"})
    assert again.status_code == 400 and "does not exist" in again.text
    (kept,) = [form for form in forms_in(again.text) if form["action"] == reverse("lti:deep-link")]
    assert kept["fields"]["launch"] == form["fields"]["launch"]
    answer = browser.post(live_server.url + form["action"], {**kept["fields"], "target": "module:inference-and-serving"})
    returned, _ = browser.submit_autopost(answer)
    assert returned.status_code == 200
    (link,) = lms.state.links.values()
    assert link.custom == {"dojo_module": "inference-and-serving"}

"""An LMS course is one course here (issue 57): its LMS roles become roles of that course only, never a content role,
and grade passback sends what the course counts.

Against the real LMS (lti1p3platform) over HTTP and the tool under the live server.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone
from lti_tool.models import LtiUser

from courses.constants import CourseRole, EnrolSource
from courses.models import Assignment, AssignmentRung, Course, Membership
from courses.permissions import course_role
from exercises.models import Rung
from lti import passback
from lti.models import ScorePost

from .conftest import pass_submit
from .lms import INSTRUCTOR, LEARNER, Browser, Link

pytestmark = pytest.mark.django_db(transaction=True)

TA = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"


def _account(person):
    return LtiUser.objects.get(sub=person.sub).auth_user


def _course_of(context_id):
    return Course.objects.get(lti_context__context__id_on_platform=context_id)


def _launch(lms, person, link_id):
    landed, _ = Browser().launch(lms, person, link_id)
    assert landed.status_code == 200, landed.text[:500]
    return landed


def test_an_instructor_launch_makes_them_staff_of_that_lms_courses_course_only(lms, registration, placed_rung, teacher):
    _launch(lms, teacher, placed_rung.id)
    x = _course_of(lms.state.course_id)
    tess = _account(teacher)
    assert (x.title, x.slug, x.time_zone, x.created_by) == ("ML Systems, autumn", "ml-systems-autumn", "UTC", tess)
    assert list(x.rungs.values_list("slug", flat=True)) == ["kv-cache-size"] and not x.modules.exists()
    assert Membership.objects.filter(course=x, user=tess, role=CourseRole.OWNER, source=EnrolSource.LTI).exists()
    # A second instructor of X is a teacher, a TA a TA, and a learner a learner: of X.
    for sub, roles, expected in (("teacher-2", [INSTRUCTOR], CourseRole.TEACHER), ("ta-1", [INSTRUCTOR, TA], CourseRole.TA),
                                 ("student-9", [LEARNER], CourseRole.LEARNER)):
        _launch(lms, lms.enrol(sub, sub, roles), placed_rung.id)
        assert course_role(LtiUser.objects.get(sub=sub).auth_user, x) == expected, sub

    # Another LMS course Y, with the same title, linking to the same rung: its own course, its own owner.
    lms.state.course_id = "course-y"
    other = lms.enrol("teacher-y", "Yann Y", [INSTRUCTOR])
    _launch(lms, other, placed_rung.id)
    y = _course_of("course-y")
    assert y.pk != x.pk and y.title == x.title and y.slug != x.slug and y.slug.startswith("ml-systems-autumn-")
    yann = _account(other)
    assert course_role(yann, y) == CourseRole.OWNER and course_role(yann, x) is None
    assert course_role(tess, y) is None and course_role(tess, x) == CourseRole.OWNER
    assert Membership.objects.filter(user=tess).count() == 1


def test_an_lms_instructor_gets_no_content_role(lms, registration, placed_rung, teacher, client, admin_user, live_server):
    browser = Browser()
    assert browser.launch(lms, teacher, placed_rung.id)[0].status_code == 200
    rung = Rung.objects.select_related("module").get(slug="kv-cache-size")
    export = reverse("authoring:module-export", args=[rung.module.slug])
    # Signed in by the launch (the browser's own session): no export with the references and hidden tests.
    assert browser.get(live_server.url + export).status_code in (403, 404)
    client.force_login(_account(teacher))
    assert client.get(export).status_code in (403, 404)
    assert client.post(reverse("authoring:rung-publish", args=[rung.module.slug, rung.slug])).status_code in (403, 404)
    assert client.get(reverse("authoring:rung", args=[rung.module.slug, rung.slug])).status_code in (403, 404)
    # The same requests by an admin are answered: the refusals above are the role's, not a broken URL.
    client.force_login(admin_user)
    answer = client.get(export)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"


def test_a_learner_launch_enrols_them_and_the_first_instructor_after_them_owns_the_course(lms, registration, placed_rung, student, teacher):
    _launch(lms, student, placed_rung.id)
    course = _course_of(lms.state.course_id)
    sam = _account(student)
    assert course.created_by is None and course_role(sam, course) == CourseRole.LEARNER
    assert not Membership.objects.filter(course=course, role=CourseRole.OWNER).exists()
    _launch(lms, teacher, placed_rung.id)
    assert course_role(_account(teacher), course) == CourseRole.OWNER
    # A Learner launch from another LMS course enrols them there, not here.
    lms.state.course_id, lms.state.course_title = "course-y", "Another course"
    _launch(lms, student, placed_rung.id)
    y = _course_of("course-y")
    assert course_role(sam, y) == CourseRole.LEARNER and course_role(_account(teacher), y) is None


def test_the_lms_role_at_each_launch_is_the_course_role(lms, registration, placed_rung, teacher):
    _launch(lms, teacher, placed_rung.id)
    course = _course_of(lms.state.course_id)
    ta = lms.enrol("ta-1", "Tara TA", [INSTRUCTOR])
    _launch(lms, ta, placed_rung.id)
    assert course_role(_account(ta), course) == CourseRole.TEACHER
    ta.roles = [LEARNER]
    _launch(lms, ta, placed_rung.id)
    assert course_role(_account(ta), course) == CourseRole.LEARNER
    # A membership made here is only raised by a launch: the owner's own decision stands.
    Membership.objects.filter(course=course, user=_account(ta)).update(role=CourseRole.TEACHER, source=EnrolSource.STAFF)
    _launch(lms, ta, placed_rung.id)
    assert course_role(_account(ta), course) == CourseRole.TEACHER


def _module_link(lms, module):
    line = lms.add_lineitem({"label": module.title, "scoreMaximum": 1})
    link = Link(id="link-module", title=module.title, custom={"dojo_module": module.slug}, lineitem_id=line["id"].rsplit("/", 1)[1])
    lms.state.links[link.id] = link
    return link


def _assignment(course, title, slugs, *, due_in_days=7):
    now = timezone.now()
    assignment = Assignment.objects.create(course=course, title=title, opens_at=now - dt.timedelta(days=1), due_at=now + dt.timedelta(days=due_in_days))
    for order, slug in enumerate(slugs):
        AssignmentRung.objects.create(assignment=assignment, rung=Rung.objects.get(slug=slug), order=order)
    return assignment


def test_a_module_link_gets_the_courses_counted_score(lms, registration, student, enqueued):
    from courses.gradebook import counted_score

    module = Rung.objects.get(slug="kv-cache-size").module
    link = _module_link(lms, module)
    _launch(lms, student, link.id)
    course = _course_of(lms.state.course_id)
    assert list(course.modules.all()) == [module]
    _assignment(course, "KV", ["kv-cache-size", "quantization-arithmetic"])
    _assignment(course, "Training", ["training-memory"])
    sam = _account(student)

    (post,) = ScorePost.objects.filter(submission=pass_submit(sam, "kv-cache-size"))
    assert post.score_given == counted_score(course, sam) == pytest.approx(0.25)  # (1/2 + 0) / 2
    passback.post_score(post.pk)
    assert lms.state.scores[link.lineitem_id][student.sub]["scoreGiven"] == pytest.approx(0.25)
    # A rung of another module, in the course through an assignment, moves the course's score: sent to the module's column.
    (post,) = ScorePost.objects.filter(submission=pass_submit(sam, "training-memory"))
    assert post.score_given == counted_score(course, sam) == pytest.approx(0.75)
    passback.post_score(post.pk)
    assert lms.state.scores[link.lineitem_id][student.sub]["scoreGiven"] == pytest.approx(0.75)


def test_a_rung_link_gets_its_credit_and_a_pass_after_the_close_counts_nothing(lms, registration, placed_rung, student, enqueued):
    _launch(lms, student, placed_rung.id)
    course = _course_of(lms.state.course_id)
    closed = _assignment(course, "KV", ["kv-cache-size"], due_in_days=-1)  # due yesterday, closed at the due date
    assert closed.late_policy == "closed"
    (post,) = ScorePost.objects.filter(submission=pass_submit(_account(student), "kv-cache-size"))
    assert post.score_given == 0.0  # graded for practice, not counted
    passback.post_score(post.pk)
    assert lms.state.scores[placed_rung.lineitem_id][student.sub]["scoreGiven"] == 0.0


def test_lms_courses_launched_before_courses_existed_get_theirs_from_the_migration(lms, registration, placed_rung, student, teacher):
    import importlib

    from django.apps import apps

    from lti.models import CourseContext

    _launch(lms, teacher, placed_rung.id)
    _launch(lms, student, placed_rung.id)
    Course.objects.all().delete()  # as before lti 0002: no course, no CourseContext
    assert not CourseContext.objects.exists()
    migration = importlib.import_module("lti.migrations.0003_courses_for_linked_contexts")
    migration.courses_for_linked_contexts(apps, None)
    migration.courses_for_linked_contexts(apps, None)  # nothing twice
    course = _course_of(lms.state.course_id)
    assert Course.objects.count() == 1 and list(course.rungs.values_list("slug", flat=True)) == ["kv-cache-size"]
    assert course_role(_account(teacher), course) == CourseRole.OWNER
    assert course_role(_account(student), course) == CourseRole.LEARNER


def test_the_lms_roster_of_a_course_is_for_its_staff(lms, registration, placed_rung, teacher, student, live_server):
    from .lms import forms_in

    tess = Browser()
    assert tess.launch(lms, teacher, placed_rung.id)[0].status_code == 200
    sam = Browser()
    assert sam.launch(lms, student, placed_rung.id)[0].status_code == 200
    x = _course_of(lms.state.course_id)
    url = live_server.url + reverse("lti:course-roster", args=[x.slug])
    page = tess.get(url)
    assert page.status_code == 200 and "Sam Student" in page.text and "kv-cache-size" in page.text
    lms.enrol("student-2", "Nia Newcomer", [LEARNER])
    (fetch,) = [form for form in forms_in(page.text) if "csrfmiddlewaretoken" in form["fields"] and form["action"] == ""]
    page = tess.post(url, fetch["fields"])
    assert page.status_code == 200 and "3 members fetched" in page.text and "Nia Newcomer" in page.text
    assert course_role(_account(lms.state.people["student-2"]), x) == CourseRole.LEARNER
    # A learner of the course: refused; the owner of another LMS course: the page does not exist for them.
    assert sam.get(url).status_code == 403
    lms.state.course_id = "course-y"
    yann = Browser()
    assert yann.launch(lms, lms.enrol("teacher-y", "Yann Y", [INSTRUCTOR]), placed_rung.id)[0].status_code == 200
    assert yann.get(url).status_code == 404
    assert yann.get(live_server.url + reverse("lti:course-roster", args=[_course_of("course-y").slug])).status_code == 200
    # A course no LMS course is has no LMS roster.
    plain = Course.objects.create(slug="plain", title="Plain")
    Membership.objects.create(course=plain, user=_account(teacher), role=CourseRole.OWNER, source=EnrolSource.CREATED)
    assert tess.get(live_server.url + reverse("lti:course-roster", args=["plain"])).status_code == 404

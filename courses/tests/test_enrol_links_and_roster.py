"""Enrolment: join links and codes, the join page, roster uploads, removing a learner."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from courses import enrolment
from courses.constants import CourseRole, EnrolSource
from courses.models import JoinLink, Membership
from grader import messages
from grader.models import Submission

from .setup_world import SetupWorld, build_setup_world, finished_submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> SetupWorld:
    return build_setup_world()


def _link(world: SetupWorld, **fields: object) -> JoinLink:
    return JoinLink.objects.create(course=world.course, code=enrolment.new_code(), created_by=world.users["owner"], **fields)


def _role(world: SetupWorld, name: str) -> str | None:
    return Membership.objects.filter(course=world.course, user=world.users[name]).values_list("role", flat=True).first()


# ---- Join links ----


def test_staff_create_a_join_link_with_an_expiry_in_the_course_time_zone(world: SetupWorld) -> None:
    response = world.client("ta").post(reverse("courses:link-create", args=["paris-101"]), {"expires_at": "2099-07-01T12:00"})
    assert response.status_code == 302
    link = JoinLink.objects.get(course=world.course)
    assert link.expires_at == dt.datetime(2099, 7, 1, 10, 0, tzinfo=dt.UTC)  # noon in Paris in summer
    assert len(link.code) == enrolment.CODE_LENGTH and set(link.code) <= set(enrolment.CODE_ALPHABET)


def test_a_link_cannot_expire_in_the_past_and_learners_make_none(world: SetupWorld) -> None:
    refused = world.client("teacher").post(reverse("courses:link-create", args=["paris-101"]), {"expires_at": "2001-01-01T00:00"})
    assert refused.status_code == 400 and "must be in the future" in refused.content.decode()
    assert world.client("learner").post(reverse("courses:link-create", args=["paris-101"]), {}).status_code == 403
    assert not JoinLink.objects.exists()


def test_the_join_page_shows_the_course_and_joins_only_on_confirm(world: SetupWorld) -> None:
    link = _link(world)
    client = world.client("learner2")
    page = client.get(reverse("courses:join", args=[link.code]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Paris 101" in html and 'id="join-confirm"' in html and "Europe/Paris" in html
    assert _role(world, "learner2") is None  # opening the link enrols nobody
    joined = client.post(reverse("courses:join", args=[link.code]))
    assert joined.status_code == 302 and joined["Location"] == reverse("courses:course", args=["paris-101"])
    membership = Membership.objects.get(course=world.course, user=world.users["learner2"])
    assert (membership.role, membership.source) == (CourseRole.LEARNER, EnrolSource.LINK)


def test_the_join_page_needs_a_login_and_comes_back_after_it(world: SetupWorld) -> None:
    link = _link(world)
    url = reverse("courses:join", args=[link.code])
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={url}"


def test_an_expired_link_is_refused_with_a_sentence(world: SetupWorld) -> None:
    link = _link(world, expires_at=timezone.now() - dt.timedelta(minutes=1))
    client = world.client("learner2")
    for response in (client.get(reverse("courses:join", args=[link.code])), client.post(reverse("courses:join", args=[link.code]))):
        assert response.status_code == 410
        html = response.content.decode()
        assert "This join link expired on" in html and "Ask your teacher for a new one." in html
    assert _role(world, "learner2") is None


def test_a_revoked_link_is_refused_with_a_sentence_and_revoking_twice_says_so(world: SetupWorld) -> None:
    link = _link(world)
    teacher = world.client("teacher")
    revoke = reverse("courses:link-revoke", args=["paris-101", link.pk])
    assert teacher.post(revoke).status_code == 302
    again = teacher.post(revoke, follow=True)
    assert "already revoked" in again.content.decode()
    response = world.client("learner2").post(reverse("courses:join", args=[link.code]))
    assert response.status_code == 410 and escape(messages.JOIN_REVOKED) in response.content.decode()
    assert _role(world, "learner2") is None


def test_a_revoke_only_touches_the_courses_own_links(world: SetupWorld) -> None:
    from courses.models import Course

    other = Course.objects.create(slug="other", title="Other")
    foreign = JoinLink.objects.create(course=other, code="OTHERCODE2")
    assert world.client("owner").post(reverse("courses:link-revoke", args=["paris-101", foreign.pk])).status_code == 302
    foreign.refresh_from_db()
    assert foreign.revoked_at is None


def test_an_unknown_code_is_a_404_with_a_sentence(world: SetupWorld) -> None:
    response = world.client("learner2").get(reverse("courses:join", args=["NOSUCHCODE"]))
    assert response.status_code == 404 and messages.JOIN_UNKNOWN in response.content.decode()


def test_a_member_is_told_and_staff_opening_a_learner_link_keep_their_role(world: SetupWorld) -> None:
    link = _link(world)
    page = world.client("learner").get(reverse("courses:join", args=[link.code]))
    assert messages.JOIN_ALREADY_MEMBER.format(role="learner") in page.content.decode()
    teacher = world.client("teacher")
    assert "already in this course as teacher" in teacher.get(reverse("courses:join", args=[link.code])).content.decode()
    assert teacher.post(reverse("courses:join", args=[link.code])).status_code == 302
    assert _role(world, "teacher") == CourseRole.TEACHER
    assert Membership.objects.filter(course=world.course).count() == 4


def test_join_by_code_takes_the_code_as_typed(world: SetupWorld) -> None:
    link = _link(world)
    typed = f" {link.code[:4].lower()}-{link.code[4:]} "
    response = world.client("learner2").get(reverse("courses:join-by-code"), {"code": typed})
    assert response.status_code == 302 and response["Location"] == reverse("courses:join", args=[link.code])
    assert world.client("learner2").post(response["Location"]).status_code == 302
    assert _role(world, "learner2") == CourseRole.LEARNER
    nothing = world.client("learner2").get(reverse("courses:join-by-code"), {"code": " -- "}, follow=True)
    assert nothing.redirect_chain[-1][0] == reverse("courses:home") and messages.JOIN_UNKNOWN in nothing.content.decode()


# ---- Roster ----


def _upload(client: Client, content: bytes, name: str = "roster.csv") -> Any:
    return client.post(reverse("courses:roster-upload", args=["paris-101"]), {"roster": SimpleUploadedFile(name, content, "text/csv")})


def test_a_roster_enrols_every_row_by_username_or_email_with_a_header(world: SetupWorld) -> None:
    response = _upload(world.client("teacher"), b"username\r\nlearner2\r\nSTRANGER@School.example\r\n\r\nteacher\r\n")
    assert response.status_code == 302
    assert _role(world, "learner2") == _role(world, "stranger") == CourseRole.LEARNER
    assert Membership.objects.get(course=world.course, user=world.users["learner2"]).source == EnrolSource.ROSTER
    assert _role(world, "teacher") == CourseRole.TEACHER  # a member listed keeps their role


def test_a_roster_with_unknown_rows_lists_them_and_enrols_nobody(world: SetupWorld) -> None:
    response = _upload(world.client("owner"), b"learner2\nghost\nnobody@nowhere.example\nstranger\n")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nobody was enrolled" in html
    assert "Row 2: no account is ghost." in html and "Row 3: no account is nobody@nowhere.example." in html
    assert _role(world, "learner2") is None and _role(world, "stranger") is None


def test_an_email_shared_by_two_accounts_is_refused_not_guessed(world: SetupWorld) -> None:
    world.users["stranger"].email = "learner2@school.example"
    world.users["stranger"].save()
    response = _upload(world.client("owner"), b"learner2@school.example\n")
    assert response.status_code == 400 and "more than one account" in response.content.decode()
    assert _role(world, "learner2") is None


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"\xff\xfe\x00l\x00e", "not UTF-8"),
        (b"learner2\x00\n", "binary data"),
        (b'"learner2\nstranger', "not valid CSV"),
        (b"username\n\n", "names no one"),
        (b"x" * (enrolment.ROSTER_MAX_BYTES + 1), "split it into smaller files"),
    ],
)
def test_a_malformed_roster_is_refused_with_a_clear_error(world: SetupWorld, content: bytes, fragment: str) -> None:
    response = _upload(world.client("owner"), content)
    assert response.status_code == 400
    assert fragment in response.content.decode()
    assert Membership.objects.filter(course=world.course).count() == 4


def test_read_roster_caps_the_rows() -> None:
    with pytest.raises(enrolment.RosterRefused, match="more than"):
        enrolment.read_roster(b"\n".join(b"u%d" % n for n in range(enrolment.ROSTER_MAX_ROWS + 1)))


def test_a_learner_may_not_upload_a_roster(world: SetupWorld) -> None:
    assert _upload(world.client("learner"), b"learner2\n").status_code == 403
    assert _role(world, "learner2") is None


# ---- Removing a learner ----


def test_removing_a_learner_keeps_their_submissions_and_never_removes_staff(world: SetupWorld) -> None:
    learner = world.users["learner"]
    submission = finished_submit(learner, world.rungs["s-1"], timezone.now())
    teacher = world.client("teacher")
    assert teacher.post(reverse("courses:learner-remove", args=["paris-101", learner.pk])).status_code == 302
    assert _role(world, "learner") is None
    assert Submission.objects.filter(pk=submission.pk, user=learner).exists()
    again = teacher.post(reverse("courses:learner-remove", args=["paris-101", learner.pk]), follow=True)
    assert "not a learner of this course" in again.content.decode()
    teacher.post(reverse("courses:learner-remove", args=["paris-101", world.users["ta"].pk]))
    assert _role(world, "ta") == CourseRole.TA


def test_a_code_drawn_twice_is_drawn_again(world: SetupWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _link(world)
    draws = iter([taken.code, "FRESHCODE2"])
    monkeypatch.setattr(enrolment, "new_code", lambda: next(draws))
    assert enrolment.create_join_link(world.course, world.users["owner"], None).code == "FRESHCODE2"

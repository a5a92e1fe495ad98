"""Notifications: recorded with facts, counted in one query, marked read once, listed and linked, a badge in the header."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.template import engines
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext

from core.models import Notification
from core.notifications import mark_read, notify, unread_count
from grader.messages import NOTIFICATION_FALLBACK, notification_sentence

pytestmark = pytest.mark.django_db


@pytest.fixture
def lena() -> User:
    return User.objects.create_user(username="lena-n")


@pytest.fixture
def omar() -> User:
    return User.objects.create_user(username="omar-n")


def _feedback(user: User, n: int = 7) -> Notification:
    return notify(user, "feedback", {"author": "ines", "submission": n, "rung": "KV cache <size>", "course": "ML 101"}, f"/rungs/kv/#feedback-{n}")


def test_a_notification_keeps_facts_and_is_worded_when_shown(lena):
    notice = _feedback(lena)
    assert notice.params == {"author": "ines", "submission": "7", "rung": "KV cache <size>", "course": "ML 101"}
    assert notification_sentence(notice.kind, notice.params) == "ines left feedback on your attempt #7 at KV cache <size> (ML 101)."
    assert notification_sentence("gone_kind", {}) == NOTIFICATION_FALLBACK
    assert notification_sentence("feedback", {"author": "x"}) == NOTIFICATION_FALLBACK  # an old row missing a fact


@pytest.mark.parametrize("url", ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "rungs/kv/"])
def test_a_notification_never_leads_off_the_site(lena, url):
    with pytest.raises(ValueError):
        notify(lena, "feedback", {}, url)
    assert not Notification.objects.exists()


def test_unread_is_counted_and_marked_read_once_and_only_for_its_owner(lena, omar):
    mine = [_feedback(lena, n) for n in (1, 2)]
    theirs = _feedback(omar, 3)
    assert unread_count(lena) == 2 and unread_count(omar) == 1
    assert mark_read(lena, [mine[0].pk, theirs.pk]) == 1  # someone else's id changes nothing
    first_read_at = Notification.objects.get(pk=mine[0].pk).read_at
    assert mark_read(lena, [mine[0].pk]) == 0  # already read: keeps its first time
    assert Notification.objects.get(pk=mine[0].pk).read_at == first_read_at
    assert unread_count(lena) == 1 and unread_count(omar) == 1
    assert mark_read(lena, []) == 0


def test_coalesce_adds_none_while_one_for_the_same_place_is_unread(lena):
    first = notify(lena, "feedback", {"submission": 1}, "/rungs/kv/#feedback-1", coalesce=True)
    assert notify(lena, "feedback", {"submission": 1}, "/rungs/kv/#feedback-1", coalesce=True).pk == first.pk
    mark_read(lena, [first.pk])
    assert notify(lena, "feedback", {"submission": 1}, "/rungs/kv/#feedback-1", coalesce=True).pk != first.pk


def test_the_list_page_shows_links_and_marks_what_it_showed_read(lena, omar):
    _feedback(lena, 5)
    _feedback(omar, 9)
    client = Client()
    client.force_login(lena)
    assert 'id="unread-count" aria-hidden="true">1</span><span class="visually-hidden">(1 unread)</span>' in client.get("/").content.decode()
    page = client.get("/notifications/").content.decode()
    assert 'href="/rungs/kv/#feedback-5"' in page and "KV cache &lt;size&gt;" in page and "#feedback-9" not in page
    assert unread_count(lena) == 0 and unread_count(omar) == 1
    assert 'id="unread-count"' not in client.get("/").content.decode()
    assert client.get("/notifications/").content.decode().count("#feedback-5") == 1  # still listed, now read


def test_the_list_needs_a_login():
    response = Client().get("/notifications/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_badge_costs_one_query_and_none_for_a_visitor(lena):
    _feedback(lena)
    template = engines["django"].from_string("{% load notifications %}{% notification_badge %}")
    request = RequestFactory().get("/")
    request.user = lena
    with CaptureQueriesContext(connection) as queries:
        html = template.render({}, request)
    assert len(queries.captured_queries) == 1 and "(1 unread)" in html
    from django.contrib.auth.models import AnonymousUser

    request.user = AnonymousUser()
    with CaptureQueriesContext(connection) as queries:
        assert template.render({}, request).strip() == ""
    assert len(queries.captured_queries) == 0


def test_every_unread_one_is_listed_before_read_ones_however_many_came(lena):
    from core import notifications

    old_unread = _feedback(lena, 1)
    newer = [_feedback(lena, n) for n in (2, 3, 4)]
    mark_read(lena, [n.pk for n in newer])
    assert [n.pk for n in notifications.recent(lena, limit=3)] == [old_unread.pk, newer[2].pk, newer[1].pk]
    many = [_feedback(lena, n) for n in (5, 6, 7, 8)]
    assert [n.pk for n in notifications.recent(lena, limit=3)] == [many[3].pk, many[2].pk, many[1].pk]

"""The admin finds a submission by the forms its search offers, each read through an index, and never counts millions (bench/scale.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from core.pagination import CappedPaginator
from exercises.models import Module, Rung, RungVersion, Track
from grader.constants import Kind, Outcome, Status
from grader.models import Submission

pytestmark = pytest.mark.django_db
LIST = "/admin/grader/submission/"


@pytest.fixture
def submissions(django_user_model: Any) -> dict[str, Submission]:
    module = Module.objects.create(track=Track.objects.create(slug="t", title="T"), slug="m", title="M")
    made: dict[str, Submission] = {}
    for slug, username, code, error, seed in (("kv-cache-size", "scale-learner-000042", "cache = torch.zeros(4)", "", 7),
                                              ("attention-mask", "Alice", "mask = torch.tril(x)", "docker_unavailable", 900001)):
        rung = Rung.objects.create(module=module, slug=slug, order=len(made) + 1)
        version = RungVersion.objects.create(rung=rung, number=1, content_hash=slug, title=slug, minutes=5, difficulty="easy", instructions_md="",
                                             starter_code="", reference_code="", visible_tests="", hidden_tests="")
        made[slug] = Submission.objects.create(user=django_user_model.objects.create_user(username=username), rung=rung, rung_version=version,
                                               kind=Kind.SUBMIT, code=code, status=Status.DONE, outcome=Outcome.PASSED, error_code=error, seed=seed)
    return made


def _found(client: Client, search: str) -> set[int]:
    response = client.get(LIST, {"q": search})
    assert response.status_code == 200
    return {row.pk for row in response.context["cl"].result_list}


@pytest.fixture
def admin_client_(admin_user: Any) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def test_the_search_finds_a_submission_by_each_form_it_offers(admin_client_: Client, submissions: dict[str, Submission]) -> None:
    kv, mask = submissions["kv-cache-size"], submissions["attention-mask"]
    assert _found(admin_client_, str(kv.pk)) == {kv.pk}
    assert _found(admin_client_, f"#{mask.pk}") == {mask.pk}
    assert _found(admin_client_, "scale-learner-000042") == {kv.pk}  # a learner's username
    assert _found(admin_client_, "scale-learner") == {kv.pk}  # its beginning
    assert _found(admin_client_, "Ali") == {mask.pk}
    assert _found(admin_client_, "kv-cache") == {kv.pk}  # a rung's slug, or part of it
    assert _found(admin_client_, "mask") == {mask.pk}
    assert _found(admin_client_, "code:torch.tril") == {mask.pk}  # a substring of the code, on request
    assert _found(admin_client_, 'code:"torch.zeros(4)"') == {kv.pk}
    assert _found(admin_client_, "error:docker_unavailable") == {mask.pk}
    assert _found(admin_client_, "seed:900001") == {mask.pk}
    assert _found(admin_client_, "Alice attention-mask") == {mask.pk}  # every word must match
    assert _found(admin_client_, "Alice kv-cache-size") == set()
    assert _found(admin_client_, "nobody") == set()
    assert _found(admin_client_, "seed:many") == set()


def test_a_plain_search_reads_no_submission_by_a_pattern(admin_client_: Client, submissions: dict[str, Submission]) -> None:
    """A name or id is looked up in the small tables first; the submissions are then read by user, rung or id (their indexes)."""
    with CaptureQueriesContext(connection) as captured:
        assert _found(admin_client_, "scale-learner-000042") == {submissions["kv-cache-size"].pk}
    reading_submissions = [query["sql"] for query in captured.captured_queries if 'FROM "grader_submission"' in query["sql"]]
    assert reading_submissions
    assert not [sql for sql in reading_submissions if "LIKE" in sql.upper() or "auth_user" in sql.split("WHERE", 1)[-1]]


def test_the_list_counts_at_most_the_cap_and_says_more(admin_client_: Client, submissions: dict[str, Submission],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CappedPaginator, "cap", 1)
    with CaptureQueriesContext(connection) as captured:
        response = admin_client_.get(LIST, {"kind__exact": "submit"})
    page = response.content.decode()
    assert "1+ submissions" in page and "2 submissions" not in page
    counts = [query["sql"] for query in captured.captured_queries if "COUNT(" in query["sql"].upper() and "grader_submission" in query["sql"]]
    assert counts and all("LIMIT 2" in sql for sql in counts)
    assert len(response.context["cl"].result_list) == 2  # both rows are still listed
    monkeypatch.setattr(CappedPaginator, "cap", 2)
    assert "2 submissions" in admin_client_.get(LIST, {"kind__exact": "submit"}).content.decode()  # at the cap, the count is exact


def test_the_list_reads_no_version_texts_and_pages_newest_first_by_id(admin_client_: Client, submissions: dict[str, Submission]) -> None:
    """The version filter names versions without reading their texts; the rows come by the primary key's index, not sorted by enqueued_at."""
    with CaptureQueriesContext(connection) as captured:
        response = admin_client_.get(LIST)
    assert "kv-cache-size v1" in response.content.decode()  # the version filter
    assert [row.pk for row in response.context["cl"].result_list] == sorted((each.pk for each in submissions.values()), reverse=True)
    assert not [query["sql"] for query in captured.captured_queries if "instructions_md" in query["sql"] or "hidden_tests" in query["sql"]]
    rows = [query["sql"] for query in captured.captured_queries if "ORDER BY" in query["sql"] and 'FROM "grader_submission"' in query["sql"]]
    assert rows and all("enqueued_at" not in sql.split("ORDER BY", 1)[1] for sql in rows)


def test_a_rejudge_page_counts_its_results_instead_of_listing_them(admin_client_: Client, submissions: dict[str, Submission],
                                                                  admin_user: Any) -> None:
    from grader.rejudge import start_rejudge

    rejudge = start_rejudge(Submission.objects.all(), target="current", user=admin_user)
    with CaptureQueriesContext(connection) as captured:
        page = admin_client_.get(f"/admin/grader/rejudge/{rejudge.pk}/change/").content.decode()
    assert "2 submissions, 0 graded again, 0 applied" in page
    assert not [query["sql"] for query in captured.captured_queries if 'FROM "grader_rejudgeresult"' in query["sql"] and "COUNT" not in query["sql"]]

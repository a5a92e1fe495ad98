"""A paginator that stops counting at its cap and says "N+" (core/pagination.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.formats import localize

from core.pagination import CappedPaginator, CountAtLeast

pytestmark = pytest.mark.django_db


class ThreeCap(CappedPaginator):
    cap = 3


@pytest.fixture
def users(django_user_model: Any) -> Any:
    for number in range(5):
        django_user_model.objects.create_user(username=f"user-{number}")
    return django_user_model.objects.order_by("pk")


def test_it_counts_at_most_cap_plus_one_rows(users: Any) -> None:
    paginator = ThreeCap(users, 2)
    with CaptureQueriesContext(connection) as captured:
        count = paginator.count
    assert count == 4 and paginator.capped and str(count) == "3+" and localize(count) == "3+"
    assert len(captured) == 1 and "LIMIT 4" in captured.captured_queries[0]["sql"]
    assert paginator.num_pages == 2 and [row.username for row in paginator.page(2)] == ["user-2", "user-3"]


def test_under_the_cap_the_count_is_exact(users: Any) -> None:
    paginator = CappedPaginator(users, 2)
    assert paginator.count == 5 and not paginator.capped and type(paginator.count) is int
    assert paginator.num_pages == 3
    assert not ThreeCap(users[:3], 2).capped and ThreeCap(list(users), 2).capped


def test_a_capped_count_is_an_int_that_reads_as_at_least() -> None:
    count = CountAtLeast(10_000)
    assert count == 10_001 and count > 10_000 and count + 1 == 10_002 and f"{count}" == "10,000+"

"""A paginator that never counts millions of rows.

Django's paginator counts every row its queryset matches before it shows a
page: on the admin's list of a year of submissions (1,000,000 rows,
bench/scale.py) that COUNT(*) read a quarter of the table on each filtered
page (1.2 s) and every matching row of a search. :class:`CappedPaginator`
counts at most ``cap + 1`` rows (``SELECT COUNT(*) FROM (... LIMIT cap + 1)``,
which keeps the list's ordering, so the database walks the ordering's
index and stops) and, past the cap, says so: its count is a
:class:`CountAtLeast`, an ``int`` for the arithmetic (pages, "show all")
whose text is "5,000+", so every template that prints the count (the
admin's "5,000+ results", "Select all 5,000+ submissions") reads right
without being copied.
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property

# Rows counted at most: fifty pages of the admin's hundred rows. Counting them walks the list's
# index and reads each row (the filters), some 20 ms on a warm year of submissions.
COUNT_CAP = 5_000


class CountAtLeast(int):
    """A count that stopped at its cap: it compares and adds as ``cap + 1``, and reads "cap+"."""

    cap: int

    def __new__(cls, cap: int) -> CountAtLeast:
        count = super().__new__(cls, cap + 1)
        count.cap = cap
        return count

    def __str__(self) -> str:
        return f"{self.cap:,}+"

    __repr__ = __str__


class CappedPaginator(Paginator[Any]):
    """A :class:`~django.core.paginator.Paginator` whose count stops at ``cap`` rows (past it, a :class:`CountAtLeast`).

    The pages past the cap are not reachable: narrow the list (filters, a search) instead.
    """

    cap = COUNT_CAP

    @cached_property
    def count(self) -> int:
        rows: Any = self.object_list
        counted = rows[: self.cap + 1].count() if isinstance(rows, QuerySet) else len(rows)
        return CountAtLeast(self.cap) if counted > self.cap else counted

    @property
    def capped(self) -> bool:
        """Whether the count stopped at the cap (there are more rows than it says)."""
        return isinstance(self.count, CountAtLeast)

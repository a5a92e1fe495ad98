"""One learner's requests, one after another, where a count gates a write.

A cap checked by counting rows, then met by inserting one, lets requests
sent at once all pass the count before any of them is stored (a red-team
stored nine jobs against a cap of three, and seventeen problem reports
against ten an hour). ``lock_learner`` holds the learner's own user row
until the transaction ends, so the next request of the same learner waits
at that line; other learners never do.
"""

from __future__ import annotations

from .types import User


def lock_learner(user: User) -> None:
    """Hold ``user``'s row until the transaction ends (SQLite serialises its writers anyway).

    Call inside ``transaction.atomic()``, before the count.
    """
    list(User.objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True))

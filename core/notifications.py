"""Notify a user that something happened for them, count what they have not read, mark it read.

A notification is a kind and its facts (``params``) plus where it leads
(``url``, a path on this site); the sentence is worded when it is shown
(``grader.messages.notification_sentence``), never stored. Feedback on a
submission (courses) and a reply to a problem report (aids) come through
here; the header's badge and the list page (frontend) read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils import timezone

from .models import Notification
from .types import User

# The list page shows at most this many, newest first.
NOTIFICATIONS_SHOWN = 50
# A param is a short fact (a title, a name): longer ones are cut, so a row stays small.
PARAM_MAX_CHARS = 200


def _is_local_path(url: str) -> bool:
    # "/x" only: never "//host" or "/\host" (both leave the site in a browser), nor a scheme.
    return url.startswith("/") and not url.startswith(("//", "/\\")) and "\x00" not in url


def notify(user: User, kind: str, params: dict[str, Any], url: str, *, coalesce: bool = False) -> Notification:
    """Record that ``kind`` happened for ``user``, with the facts its sentence names.

    ``url`` must be a path on this site (what ``reverse`` gives): the list
    page links to it, so it may never lead elsewhere. With ``coalesce``, an
    unread notification of the same kind leading to the same place stands
    for the new one (five line comments on one submission are one badge).
    """
    if not _is_local_path(url):
        raise ValueError(f"A notification leads to a path on this site, not {url!r}.")
    url = url[:500]
    if coalesce:
        unread = Notification.objects.filter(user=user, kind=kind, url=url, read_at__isnull=True).first()
        if unread is not None:
            return unread
    facts = {str(key): str(value).replace("\x00", "")[:PARAM_MAX_CHARS] for key, value in params.items()}
    return Notification.objects.create(user=user, kind=kind, params=facts, url=url)


def unread_count(user: User) -> int:
    """How many of ``user``'s notifications are unread: one COUNT on the (user, read_at) index."""
    return Notification.objects.filter(user=user, read_at__isnull=True).count()


def recent(user: User, limit: int = NOTIFICATIONS_SHOWN) -> list[Notification]:
    """``user``'s unread notifications, newest first, then the newest read ones, ``limit`` in all. Never anyone else's.

    Unread ones come first so that every one the badge counts is shown (and
    so marked read) in turn, however many arrived.
    """
    mine = Notification.objects.filter(user=user).order_by("-created_at", "-pk")
    unread = list(mine.filter(read_at__isnull=True)[:limit])
    if len(unread) >= limit:
        return unread
    return unread + list(mine.filter(read_at__isnull=False)[: limit - len(unread)])


def mark_read(user: User, ids: Iterable[int]) -> int:
    """Mark ``user``'s notifications ``ids`` read; returns how many this call marked.

    A conditional UPDATE (``read_at`` still empty, the row ``user``'s own):
    one already read keeps its first time, and an id of someone else's
    notification changes nothing.
    """
    wanted = [int(pk) for pk in ids]
    if not wanted:
        return 0
    return Notification.objects.filter(user=user, pk__in=wanted, read_at__isnull=True).update(read_at=timezone.now())

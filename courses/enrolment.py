"""Putting learners in a course: join links and codes, roster uploads, and taking a learner out.

Every path enrols through ``courses.membership`` semantics: a member is
never lowered (a teacher who opens a learner's join link stays a teacher).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import secrets
from dataclasses import dataclass, field
from enum import StrEnum
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.types import User
from grader import messages

from .constants import CourseRole, EnrolSource
from .membership import enrol
from .models import Course, JoinLink, Membership

# Codes are typed by hand from a slide or a board: no 0/O or 1/I/L.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 10  # 31**10, about 8e14: not guessable behind a login

# A roster is a class list, not a data dump: past these it is refused whole.
ROSTER_MAX_BYTES = 256 * 1024
ROSTER_MAX_ROWS = 2000
ROSTER_HEADERS = frozenset({"username", "user", "login", "email", "e-mail", "mail"})


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(typed: str) -> str:
    """A code as typed (any case, spaces or dashes between groups) as stored."""
    return "".join(ch for ch in typed.upper() if ch.isalnum())


def create_join_link(course: Course, by: User, expires_at: dt.datetime | None) -> JoinLink:
    # A code drawn twice (about 1 in 1e14 per pair) is drawn again, not a 500.
    for _ in range(2):
        try:
            with transaction.atomic():
                return JoinLink.objects.create(course=course, code=new_code(), expires_at=expires_at, created_by=by)
        except IntegrityError:
            continue
    return JoinLink.objects.create(course=course, code=new_code(), expires_at=expires_at, created_by=by)


def revoke_join_link(course: Course, link_id: int) -> bool:
    """Withdraw a link of ``course``; False when it was already withdrawn (or is not the course's)."""
    changed = JoinLink.objects.filter(pk=link_id, course=course, revoked_at__isnull=True).update(revoked_at=timezone.now())
    return changed == 1


class JoinState(StrEnum):
    OPEN = "open"
    UNKNOWN = "unknown"
    EXPIRED = "expired"
    REVOKED = "revoked"


@dataclass(frozen=True)
class JoinCheck:
    state: JoinState
    link: JoinLink | None
    sentence: str = ""


def check_join_code(code: str, now: dt.datetime | None = None) -> JoinCheck:
    """Whether ``code`` opens a course now, and the sentence a learner reads when it does not."""
    now = now or timezone.now()
    link = JoinLink.objects.select_related("course").filter(code=normalise_code(code)).first()
    if link is None:
        return JoinCheck(JoinState.UNKNOWN, None, messages.JOIN_UNKNOWN)
    if link.revoked_at is not None:
        return JoinCheck(JoinState.REVOKED, link, messages.JOIN_REVOKED)
    if link.expires_at is not None and link.expires_at <= now:
        expired = timezone.localtime(link.expires_at, ZoneInfo(link.course.time_zone)).strftime("%Y-%m-%d %H:%M %Z")
        return JoinCheck(JoinState.EXPIRED, link, messages.JOIN_EXPIRED.format(expired=expired))
    return JoinCheck(JoinState.OPEN, link)


def join_with_code(user: User, code: str) -> tuple[JoinCheck, Membership | None]:
    """Enrol ``user`` as a learner through a join code that is open now.

    Joining changes no state of the link, so a link stays usable by the
    whole class until it expires or is revoked; a member keeps a higher role.
    """
    check = check_join_code(code)
    if check.state is not JoinState.OPEN or check.link is None:
        return check, None
    return check, enrol(check.link.course, user, CourseRole.LEARNER, EnrolSource.LINK)


# ---- Roster upload ----


class RosterRefused(Exception):
    """A roster nothing was enrolled from: one reason, or the rows that named no one."""

    def __init__(self, reason: str, problems: list[str] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.problems = problems or []


@dataclass
class RosterResult:
    added: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)


def read_roster(data: bytes) -> list[tuple[int, str]]:
    """The (row number, username or email) pairs of a CSV roster: first cell of each row, header optional.

    Raises ``RosterRefused`` for a file too big, not UTF-8 text, not CSV, or with too many rows.
    """
    if len(data) > ROSTER_MAX_BYTES:
        raise RosterRefused(f"The roster is over {ROSTER_MAX_BYTES // 1024} KiB; split it into smaller files.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RosterRefused("The roster is not UTF-8 text; save it as CSV (UTF-8) and upload it again.") from exc
    if "\x00" in text:
        raise RosterRefused("The roster is not a CSV file (it holds binary data).")
    entries: list[tuple[int, str]] = []
    try:
        for number, row in enumerate(csv.reader(io.StringIO(text, newline=""), strict=True), start=1):
            cell = next((value.strip() for value in row if value.strip()), "")
            if not cell:
                continue
            if not entries and number == 1 and cell.lower() in ROSTER_HEADERS:
                continue  # a header row
            entries.append((number, cell))
            if len(entries) > ROSTER_MAX_ROWS:
                raise RosterRefused(f"The roster has more than {ROSTER_MAX_ROWS} rows; split it into smaller files.")
    except csv.Error as exc:
        raise RosterRefused(f"The roster is not valid CSV: {exc}.") from exc
    if not entries:
        raise RosterRefused("The roster names no one: put one username or email on each row.")
    return entries


def resolve_roster(entries: list[tuple[int, str]]) -> tuple[dict[int, User], list[str]]:
    """Each row's user (by username, or by email when the cell has an @), and a sentence per row that names no one."""
    usernames = {cell for _, cell in entries if "@" not in cell}
    emails = {cell.lower() for _, cell in entries if "@" in cell}
    by_username = {user.username: user for user in User.objects.filter(username__in=usernames, is_active=True)}
    by_email: dict[str, list[User]] = {}
    if emails:
        email_match = Q()
        for email in emails:
            email_match |= Q(email__iexact=email)
        for account in User.objects.filter(email_match, is_active=True):
            by_email.setdefault(account.email.lower(), []).append(account)
    found: dict[int, User] = {}
    problems: list[str] = []
    for number, cell in entries:
        user: User | None
        if "@" in cell:
            matches = by_email.get(cell.lower(), [])
            if len(matches) > 1:
                problems.append(f"Row {number}: {cell} is the email of more than one account; use the username.")
                continue
            user = matches[0] if matches else None
        else:
            user = by_username.get(cell)
        if user is None:
            problems.append(f"Row {number}: no account is {cell}.")
        else:
            found[number] = user
    return found, problems


def upload_roster(course: Course, data: bytes) -> RosterResult:
    """Enrol every row of a CSV roster as a learner, or nobody.

    Everything is checked first (size, text, CSV, every row naming one
    active account); one bad row refuses the whole file with every bad row
    listed, so a teacher never has to work out which half went in.
    Members already in the course keep their role.
    """
    entries = read_roster(data)
    found, problems = resolve_roster(entries)
    if problems:
        raise RosterRefused("Nobody was enrolled: fix these rows and upload the file again.", problems)
    result = RosterResult()
    with transaction.atomic():
        members = set(Membership.objects.filter(course=course, user__in=list(found.values())).values_list("user_id", flat=True))
        seen: set[int] = set()
        for user in found.values():
            if user.pk in seen:
                continue
            seen.add(user.pk)
            if user.pk in members:
                result.already.append(user.username)
                continue
            enrol(course, user, CourseRole.LEARNER, EnrolSource.ROSTER)
            result.added.append(user.username)
    return result


def remove_learner(course: Course, user_id: int) -> bool:
    """Take a learner out of the course; their submissions stay theirs. False when they were not a learner of it."""
    deleted, _ = Membership.objects.filter(course=course, user_id=user_id, role=CourseRole.LEARNER).delete()
    return deleted == 1

"""The vocabularies of courses: course roles, how someone joined, late policies."""

from __future__ import annotations

from django.db import models


class CourseRole(models.TextChoices):
    """A role in one course. Never a role on the catalog's content (authoring's editor and viewer)."""

    OWNER = "owner", "Owner"
    TEACHER = "teacher", "Teacher"
    TA = "ta", "Teaching assistant"
    LEARNER = "learner", "Learner"


# Who of a course is staff: they see the course's learners' work.
STAFF_ROLES = frozenset({CourseRole.OWNER, CourseRole.TEACHER, CourseRole.TA})


class EnrolSource(models.TextChoices):
    """How a membership came to be."""

    CREATED = "created", "Created the course"
    STAFF = "staff", "Added by the course's owner"
    LINK = "link", "Join link or code"
    ROSTER = "roster", "Roster upload"
    LTI = "lti", "LMS launch"


class LatePolicy(models.TextChoices):
    """What a Submit after the due date counts for."""

    CLOSED = "closed", "Closed at the due date"
    PENALTY = "penalty", "Accepted until a hard close, with a penalty factor"


class ReportState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"

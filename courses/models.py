"""Courses on the shared catalog: members and their course roles, join links,
assignments with deadlines and extensions, feedback on submissions, and
similarity reports.

A course uses catalog modules and rungs; it never owns them. Its staff
(owner, teacher, TA) see their own learners' work; what a rung hides
(hidden tests' source, generated inputs, wrong solutions, mutants, the
export) stays with the content roles on the module (authoring).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from exercises.models import Module, Rung
from grader.models import Submission

from .constants import CourseRole, EnrolSource, LatePolicy, ReportState


class Course(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    term = models.CharField(max_length=100, blank=True, help_text="E.g. Spring 2027.")
    # An IANA name (zoneinfo): deadlines are shown to the course's learners in it.
    time_zone = models.CharField(max_length=64, default="UTC")
    modules = models.ManyToManyField(Module, blank=True, related_name="courses", help_text="Whole catalog modules the course uses.")
    rungs = models.ManyToManyField(Rung, blank=True, related_name="courses", help_text="Single rungs the course uses beyond its modules.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "slug"]

    def __str__(self) -> str:
        return self.title


class Membership(models.Model):
    """Someone's one role in one course."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="course_memberships")
    role = models.CharField(max_length=10, choices=CourseRole.choices)
    source = models.CharField(max_length=10, choices=EnrolSource.choices)
    joined_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["course", "role", "user__username"]
        constraints = [models.UniqueConstraint(fields=["course", "user"], name="one_membership_per_course_and_user")]
        indexes = [models.Index(fields=["course", "role"], name="courses_member_course_role")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.course}"


class JoinLink(models.Model):
    """A link (and the code inside it) that enrols whoever opens it as a learner, until it expires or is revoked."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="join_links")
    code = models.CharField(max_length=32, unique=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"join {self.course} ({self.code})"


class Assignment(models.Model):
    """A set of rungs a course's learners solve between an open date and a due date."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assignments")
    title = models.CharField(max_length=200)
    opens_at = models.DateTimeField()
    due_at = models.DateTimeField()
    late_policy = models.CharField(max_length=10, choices=LatePolicy.choices, default=LatePolicy.CLOSED)
    # With LatePolicy.PENALTY: a pass after due_at and up to hard_close_at counts late_factor of a point.
    hard_close_at = models.DateTimeField(null=True, blank=True)
    late_factor = models.FloatField(default=1.0)
    rungs = models.ManyToManyField(Rung, through="AssignmentRung", related_name="assignments")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["course", "due_at", "pk"]
        indexes = [models.Index(fields=["course", "due_at"], name="courses_assign_course_due")]

    def __str__(self) -> str:
        return f"{self.title} ({self.course})"


class AssignmentRung(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="assignment_rungs")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="+")
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["assignment", "order", "pk"]
        constraints = [models.UniqueConstraint(fields=["assignment", "rung"], name="one_rung_once_per_assignment")]

    def __str__(self) -> str:
        return f"{self.assignment}: {self.rung}"


class Extension(models.Model):
    """One learner's own deadlines for one assignment."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="extensions")
    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="course_extensions")
    due_at = models.DateTimeField()
    hard_close_at = models.DateTimeField(null=True, blank=True)
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    granted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "learner"], name="one_extension_per_assignment_and_learner")]

    def __str__(self) -> str:
        return f"{self.learner}: {self.assignment} due {self.due_at:%Y-%m-%d %H:%M}"


class Feedback(models.Model):
    """A course staff member's comment on a submission: general (no line) or on one line of the code."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="feedback")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="feedback")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    line = models.PositiveIntegerField(null=True, blank=True, help_text="1-based line of the submission's code; empty: the whole submission.")
    body = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["submission", "line", "created_at", "pk"]

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "general"
        return f"feedback on #{self.submission_id} ({where})"


class SimilarityReport(models.Model):
    """Pairs of a course's learners whose code for one rung of an assignment is alike, starter code subtracted."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="similarity_reports")
    rung = models.ForeignKey(Rung, on_delete=models.CASCADE, related_name="+")
    threshold = models.FloatField(default=0.6)
    state = models.CharField(max_length=10, choices=ReportState.choices, default=ReportState.QUEUED)
    # [{"a": submission id, "b": submission id, "score_a": float, "score_b": float}], highest first.
    pairs = models.JSONField(default=list, blank=True)
    compared = models.PositiveIntegerField(default=0, help_text="How many learners' submissions were compared.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"similarity of {self.rung} in {self.assignment} ({self.state})"

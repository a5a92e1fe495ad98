"""The course pages' forms. Dates are typed in the course's time zone: a view
validates them inside ``timezone.override(course zone)``, and Django stores them in UTC."""

from __future__ import annotations

import datetime as dt
from typing import Any, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django import forms
from django.db.models import QuerySet

from core.types import User
from exercises.models import Module, Rung

from .assignments import date_problems, extension_problems
from .constants import CourseRole, LatePolicy
from .courses import STAFF_PAGE_ROLES
from .enrolment import ROSTER_MAX_BYTES
from .models import Assignment, Course

# Course addresses the courses pages use themselves (courses/urls.py).
RESERVED_SLUGS = frozenset({"new", "join"})

# What <input type="datetime-local"> sends and shows.
LOCAL_INPUT_FORMAT = "%Y-%m-%dT%H:%M"


class LocalDateTimeInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs=attrs, format=LOCAL_INPUT_FORMAT)


def _local_datetime(label: str, *, required: bool = True, help_text: str = "") -> forms.DateTimeField:
    return forms.DateTimeField(label=label, required=required, help_text=help_text, widget=LocalDateTimeInput())


def _rung_label(rung: Rung) -> str:
    return f"{rung.module.title}: {rung.current_version.title if rung.current_version else rung.slug}"


class ModuleChoices(forms.ModelMultipleChoiceField[Module]):
    def label_from_instance(self, obj: Module) -> str:
        return f"{obj.external_id} — {obj.title}" if obj.external_id else obj.title


class RungChoices(forms.ModelMultipleChoiceField[Rung]):
    def label_from_instance(self, obj: Rung) -> str:
        return _rung_label(obj)


class LearnerChoice(forms.ModelChoiceField[User]):
    def label_from_instance(self, obj: User) -> str:
        return obj.username


class CourseForm(forms.ModelForm[Course]):
    class Meta:
        model = Course
        fields = ["title", "slug", "term", "time_zone", "modules", "rungs"]
        field_classes = {"modules": ModuleChoices, "rungs": RungChoices}
        widgets = {"modules": forms.CheckboxSelectMultiple, "rungs": forms.CheckboxSelectMultiple}
        help_texts = {
            "slug": "The course's address: /courses/<slug>/ (letters, digits, hyphens).",
            "time_zone": "An IANA name such as Europe/Paris or America/New_York: deadlines are typed and shown in it.",
            "rungs": "Single published rungs beyond the modules ticked above.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(ModuleChoices, self.fields["modules"]).queryset = Module.objects.select_related("track")
        published = Rung.objects.filter(current_version__isnull=False).select_related("current_version", "module")
        cast(RungChoices, self.fields["rungs"]).queryset = published

    def clean_slug(self) -> str:
        slug = str(self.cleaned_data["slug"])
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"“{slug}” is taken by the courses pages' own address; choose another.")
        return slug

    def clean_time_zone(self) -> str:
        name = str(self.cleaned_data["time_zone"]).strip()
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise forms.ValidationError("Not a time zone: use an IANA name such as Europe/Paris, America/New_York or UTC.") from exc
        return name

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not self.errors and not cleaned.get("modules") and not cleaned.get("rungs"):
            raise forms.ValidationError("Choose at least one module or rung for the course to use.")
        return cleaned


class StaffAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=[(role.value, role.label) for role in STAFF_PAGE_ROLES], initial=CourseRole.TEACHER)

    def clean_username(self) -> User:
        username = self.cleaned_data["username"].strip()
        user = User.objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError(f"No account is {username}.")
        return user


class StaffRoleForm(forms.Form):
    role = forms.ChoiceField(choices=[(role.value, role.label) for role in STAFF_PAGE_ROLES])


class JoinLinkForm(forms.Form):
    expires_at = _local_datetime("Expires", required=False, help_text="Empty: until you revoke it.")


class JoinCodeForm(forms.Form):
    code = forms.CharField(label="Join code", max_length=40, help_text="The code your teacher gave you, e.g. ABCD-EF2345.")


class RosterForm(forms.Form):
    roster = forms.FileField(
        label="Roster (CSV)", help_text="One username or email per row, a header row optional. Everyone joins as a learner."
    )

    def clean_roster(self) -> bytes:
        upload = self.cleaned_data["roster"]
        if upload.size > ROSTER_MAX_BYTES:
            raise forms.ValidationError(f"The roster is over {ROSTER_MAX_BYTES // 1024} KiB; split it into smaller files.")
        return bytes(upload.read())


class AssignmentForm(forms.Form):
    title = forms.CharField(max_length=200)
    rungs = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="Learners see them in the course's catalog order.")
    opens_at = _local_datetime("Opens")
    due_at = _local_datetime("Due")
    late_policy = forms.ChoiceField(label="Late work", choices=LatePolicy.choices, initial=LatePolicy.CLOSED)
    hard_close_at = _local_datetime("Hard close", required=False, help_text="With late work accepted: the last moment a late pass counts.")
    late_factor = forms.FloatField(
        label="Late factor",
        required=False,
        initial=0.5,
        min_value=0.0,
        max_value=1.0,
        help_text="What a late pass counts for, from 0 to 1.",
    )

    def __init__(self, *args: Any, course_rungs: list[Rung], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.course_rungs = course_rungs
        cast(forms.MultipleChoiceField, self.fields["rungs"]).choices = [(str(rung.pk), _rung_label(rung)) for rung in course_rungs]

    @staticmethod
    def initial_for(assignment: Assignment) -> dict[str, Any]:
        return {
            "title": assignment.title,
            "rungs": [str(link.rung_id) for link in assignment.assignment_rungs.all()],
            "opens_at": assignment.opens_at,
            "due_at": assignment.due_at,
            "late_policy": assignment.late_policy,
            "hard_close_at": assignment.hard_close_at,
            "late_factor": assignment.late_factor,
        }

    def ordered_rungs(self) -> list[Rung]:
        chosen = set(self.cleaned_data["rungs"])
        return [rung for rung in self.course_rungs if str(rung.pk) in chosen]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        opens_at, due_at = cleaned.get("opens_at"), cleaned.get("due_at")
        if isinstance(opens_at, dt.datetime) and isinstance(due_at, dt.datetime) and "late_policy" in cleaned:
            for name, problem in date_problems(
                opens_at, due_at, cleaned["late_policy"], cleaned.get("hard_close_at"), cleaned.get("late_factor")
            ).items():
                self.add_error(name, problem)
        return cleaned


class ExtensionForm(forms.Form):
    learner = LearnerChoice(queryset=User.objects.none())
    due_at = _local_datetime("Extended due date")
    hard_close_at = _local_datetime("Extended hard close", required=False, help_text="Late work only; empty: the assignment's.")

    def __init__(self, *args: Any, assignment: Assignment, learners: QuerySet[User], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.assignment = assignment
        cast(LearnerChoice, self.fields["learner"]).queryset = learners

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        due_at = cleaned.get("due_at")
        if isinstance(due_at, dt.datetime):
            for name, problem in extension_problems(self.assignment, due_at, cleaned.get("hard_close_at")).items():
                self.add_error(name, problem)
        return cleaned

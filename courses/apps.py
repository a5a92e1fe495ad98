from __future__ import annotations

from django.apps import AppConfig


class CoursesConfig(AppConfig):
    """A teacher's class on the shared catalog: courses, course roles, enrolment,
    assignments and deadlines, the gradebook, feedback and the teacher's reports.

    Course roles never open a rung's hidden tests, generated inputs, wrong
    solutions, mutants or the export: those belong to content roles on a
    catalog module (authoring).
    """

    name = "courses"
    verbose_name = "Courses"

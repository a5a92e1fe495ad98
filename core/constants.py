"""Vocabularies several apps share: who is an instructor, how long catalog Markdown may be."""

from __future__ import annotations

from django.db import models

# Members of this group (and holders of the permission) are instructors: they author their own modules.
INSTRUCTORS_GROUP = "instructors"
AUTHOR_PERMISSION = "authoring.author_modules"



class ContentRole(models.TextChoices):
    """A role on one catalog module's content (authoring.ModuleRole; issue 57).

    An editor changes and publishes the content and grants these roles; a
    viewer reads everything an editor reads (references and hidden tests
    included) and changes nothing. Admins are editors of every module. Course
    roles (courses.constants.CourseRole) are another thing: they never reach content.
    """

    EDITOR = "editor", "Editor"
    VIEWER = "viewer", "Viewer"


# The longest Markdown text of the catalog (a concept, a worked example, a
# quick reference, a rung's instructions): seven times the longest shipped
# one. Rendering and searching are timed at this length
# (core/tests/test_markdown_worst_case.py, core/tests/test_untrusted_patterns.py).
MARKDOWN_MAX_CHARS = 50_000

"""``{{ version|test_strength }}``: the line telling a learner how much a pass of this version means (issue 58)."""

from __future__ import annotations

from django import template

from exercises.models import RungVersion
from exercises.strength import complete
from grader import messages

register = template.Library()


@register.filter
def test_strength(version: RungVersion | None) -> str:
    """The version's strength line, or "" when it has no complete measured figures (no claim rather than a false one)."""
    figures = dict(version.strength or {}) if version is not None else {}
    return messages.test_strength(figures) if complete(figures) else ""

"""``{% workspace_aids rung %}``: the hints and report box of a rung's workspace.

A tag rather than view context, so the workspace page needs one include
line and no change to its view.
"""

from __future__ import annotations

from typing import Any

from django import template

from core.markdown import render_markdown
from exercises.models import Rung

from .. import services

register = template.Library()


@register.inclusion_tag("aids/workspace_aids.html", takes_context=True)
def workspace_aids(context: dict[str, Any], rung: Rung) -> dict[str, Any]:
    request = context["request"]
    user = request.user
    hints = services.rung_hints(rung)
    shown = services.revealed_count(user, rung) if user.is_authenticated else 0
    return {
        "rung": rung,
        "user": user,
        "csrf_token": context.get("csrf_token"),
        "hint_total": len(hints),
        "revealed": [{"number": n, "html": render_markdown(text)} for n, text in enumerate(hints[:shown], start=1)],
        "next_hint": shown + 1 if shown < len(hints) else None,
        "reports": list(services.learner_reports(user, rung)) if user.is_authenticated else [],
    }

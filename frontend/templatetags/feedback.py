"""``{% workspace_feedback rung %}``: the feedback teachers left on the learner's own attempts at a rung.

Shown beside the workspace's history of attempts, one block per attempt
(``#feedback-<id>``, where a feedback notification leads). A tag, so the
workspace view is unchanged; one query, none for a visitor.
"""

from __future__ import annotations

from typing import Any

from django import template

from core.markdown import render_markdown
from courses.feedback import feedback_for_learner
from exercises.models import Rung

register = template.Library()


@register.inclusion_tag("frontend/_workspace_feedback.html", takes_context=True)
def workspace_feedback(context: dict[str, Any], rung: Rung) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"attempts": []}
    attempts = []
    for submission_id, rows in feedback_for_learner(user, rung).items():
        submission = rows[0].submission
        code_lines = submission.code.splitlines()
        attempts.append(
            {
                "id": submission_id,
                "kind": submission.get_kind_display(),
                "enqueued_at": submission.enqueued_at,
                "comments": [
                    {
                        "pk": row.pk,
                        "line": row.line,
                        "code": code_lines[row.line - 1] if row.line and row.line <= len(code_lines) else "",
                        "author": row.author.get_username() if row.author else "",
                        "course": row.course.title,
                        "created_at": row.created_at,
                        "html": render_markdown(row.body),
                    }
                    for row in rows
                ],
            }
        )
    return {"attempts": attempts}

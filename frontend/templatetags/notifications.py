"""``{% notification_badge %}``: the header's link to the notification list, with the unread count.

A tag, so every page's header gets it from the base template alone; it
costs one COUNT query, and none for a visitor who is not logged in.
"""

from __future__ import annotations

from typing import Any

from django import template

from core.notifications import unread_count

register = template.Library()


@register.inclusion_tag("frontend/_notification_badge.html", takes_context=True)
def notification_badge(context: dict[str, Any]) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"show": False}
    return {"show": True, "unread": unread_count(user)}

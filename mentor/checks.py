"""System checks: a mentor model URL that cannot work is reported at start-up."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import CheckMessage, Error, register


@register()
def check_mentor_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    url = settings.MENTOR_LLM_URL
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            errors.append(Error(f"MENTOR_LLM_URL must be an http(s) URL, got {url!r}", hint="e.g. http://127.0.0.1:8000/v1", id="mentor.E001"))
        if not settings.MENTOR_LLM_MODEL:
            errors.append(Error("MENTOR_LLM_MODEL must be set when MENTOR_LLM_URL is", hint="the model name the server serves", id="mentor.E002"))
    if settings.MENTOR_LLM_TIMEOUT_S <= 0:
        errors.append(Error("MENTOR_LLM_TIMEOUT_S must be positive", id="mentor.E003"))
    return errors

"""Django configuration for the platform: settings, URLs, the Celery app."""

from __future__ import annotations

from .celery import app as celery_app

__all__ = ["celery_app"]

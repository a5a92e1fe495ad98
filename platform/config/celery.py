"""The Celery application. Tasks live in the apps (``grader.tasks``)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("llm_dojo")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

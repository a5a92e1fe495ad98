from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Settings-aware glue several apps use: Markdown, roles, the learner lock, the write guard, the runner.

    It may import ``sandbox`` and nothing above it (tests/test_import_graph.py).
    """

    name = "core"
    verbose_name = "Core"

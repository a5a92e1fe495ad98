"""Celery worker hooks: what a worker and its pool children do as they start and stop.

Connected to ``celery.signals`` when the grader app is ready (``grader.apps``);
the Django signals grader sends are in ``grader.signals``.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

from celery.signals import (
    after_setup_logger,
    after_setup_task_logger,
    before_task_publish,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
)
from django.conf import settings

from core.logs import TASK_HEADER, JsonLines, bound_ids, replace_ids

log = logging.getLogger(__name__)


@worker_init.connect
def _check_dependencies(sender: Any = None, **kwargs: Any) -> None:
    """A worker without its sandbox image or broker stops here, saying which."""
    from django.core.exceptions import ImproperlyConfigured

    from core.runners import WORKER_NODE_ENV

    from .checks import require_grading_dependencies

    # The pool children (forked after this) name their warm containers by
    # this worker's node name, so that a worker starting over removes its
    # own and never another worker's on the same Docker engine.
    node = str(getattr(sender, "hostname", "") or "")
    if node:
        os.environ[WORKER_NODE_ENV] = node
    try:
        require_grading_dependencies()
    except ImproperlyConfigured as exc:
        # NOTE: Celery logs and swallows an Exception raised by a signal
        # handler; SystemExit is not an Exception, so the worker really stops.
        log.critical("the worker cannot grade: %s", exc)
        raise SystemExit(f"worker start-up check failed: {exc}") from exc


@worker_init.connect
def _remove_old_containers(sender: Any = None, **kwargs: Any) -> None:
    """A worker that comes back removes the sandbox containers it left behind.

    Here, before its pool processes start: from then on each of them warms
    containers under this worker's name (``_start_pool``), which a removal
    at ``worker_ready`` raced with and could take away while they warmed.
    """
    from sandbox.runner import remove_stale_containers

    hostname = str(getattr(sender, "hostname", "") or "")
    try:
        # Older than the hard limit means no live task can still be reading
        # it; pre-started containers of this worker's previous life go too.
        remove_stale_containers(max_age_s=settings.GRADER_HARD_TIME_LIMIT_S, pool_owner_prefix=f"{hostname or socket.gethostname()}:")
    except Exception as exc:  # noqa: BLE001 - Docker being down must not stop the worker
        log.warning("could not clean up old sandbox containers: %s", exc)


@worker_init.connect
def _serve_metrics(sender: Any = None, **kwargs: Any) -> None:
    """With WORKER_METRICS_PORT, the worker serves its pool children's metrics there for Prometheus.

    Its children count into the multiprocess folder (PROMETHEUS_MULTIPROC_DIR,
    required then); this process reads that folder on each scrape.
    """
    if not settings.WORKER_METRICS_PORT:
        return
    from prometheus_client import start_http_server

    from core.metrics import shared_registry

    registry = shared_registry()
    if registry is None:
        log.error("WORKER_METRICS_PORT is set but PROMETHEUS_MULTIPROC_DIR is not: the pool children's metrics would be lost; not serving them")
        return
    start_http_server(settings.WORKER_METRICS_PORT, registry=registry)


@worker_ready.connect
def _recover_on_start(sender: Any = None, **kwargs: Any) -> None:
    """A worker that comes back re-enqueues what it was grading when it died."""
    from .lifecycle import recover_claims

    hostname = str(getattr(sender, "hostname", "") or "")
    if hostname:
        recover_claims(hostname)


@worker_process_init.connect
def _start_pool(**kwargs: Any) -> None:
    """A pool child starts warming its sandbox containers at once, so that its
    first job (often one of a class's burst) does not wait for them."""
    from core.runners import start_pool

    try:
        start_pool()
    except Exception as exc:  # noqa: BLE001 - the first job starts the pool instead
        log.warning("could not start the sandbox pool at start-up: %s", exc)


@worker_process_shutdown.connect
def _close_pool(**kwargs: Any) -> None:
    """A pool child going away removes the containers it kept warm."""
    from core.runners import close_runners

    try:
        close_runners()
    except Exception as exc:  # noqa: BLE001 - shutting down regardless
        log.warning("could not remove pre-started sandbox containers: %s", exc)


@after_setup_logger.connect
@after_setup_task_logger.connect
def _log_json(logger: logging.Logger | None = None, **kwargs: Any) -> None:
    """Celery sets up the worker's log handlers itself: with LOG_FORMAT json, they write JSON lines too."""
    if logger is None or settings.LOG_FORMAT != "json":
        return
    for handler in logger.handlers:
        handler.setFormatter(JsonLines())


@before_task_publish.connect
def _send_log_ids(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """A task sent while a request is served carries its request and user ids (core/logs.py)."""
    ids = bound_ids()
    if headers is not None and ids:
        headers[TASK_HEADER] = ids


@task_prerun.connect
def _bind_log_ids(task: Any = None, **kwargs: Any) -> None:
    """The task's lines carry the ids it was sent with; the task binds its own (the submission's) on top."""
    request = getattr(task, "request", None)
    ids = getattr(request, TASK_HEADER, None) or ((getattr(request, "headers", None) or {}).get(TASK_HEADER))
    replace_ids(ids if isinstance(ids, dict) else {})


@task_postrun.connect
def _unbind_log_ids(**kwargs: Any) -> None:
    replace_ids(None)

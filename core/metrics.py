"""The platform's Prometheus metrics: defined once here, counted where things happen.

Every label has a bounded set of values: a view's name from the resolver
(never the raw path), a job's kind, outcome or error code, a queue's name.

Each process counts into its own registry. With ``PROMETHEUS_MULTIPROC_DIR``
set (it must be set before the process starts: prometheus-client reads it at
import), every process writes its counts to files in that folder instead,
and a scrape adds up the files of all the processes that share it: gunicorn's
workers and a Celery worker's pool children (docs/operations.md, "Metrics").
What is read at scrape time (queue depth, jobs in flight) is not here but in
the endpoint (``frontend.metrics``), which reads the broker and the database.
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.multiprocess import MultiProcessCollector

MULTIPROC_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"

# prometheus-client writes each process's counts into that folder from the
# first metric made below: a missing folder would stop every web and worker
# process at boot (FileNotFoundError), so it is made here if need be.
if os.environ.get(MULTIPROC_DIR_ENV):
    os.makedirs(os.environ[MULTIPROC_DIR_ENV], exist_ok=True)

# Request latency: Django's pages answer in milliseconds, a slow one in seconds.
_REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Grading (claim to finish) and queue waits: a warm Run takes about a second, a Submit up to minutes.
_JOB_BUCKETS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0, 300.0)

REQUEST_SECONDS = Histogram("dojo_request_seconds", "Wall time of a request, by the view that answered it.", ["view"], buckets=_REQUEST_BUCKETS)
SLOW_REQUESTS = Counter("dojo_slow_requests", "Requests over the request budget (frontend/request_budget.py), by view.", ["view"])
JOBS = Counter("dojo_jobs", "Graded Runs and Submits, by kind and outcome.", ["kind", "outcome"])
GRADING_SECONDS = Histogram("dojo_grading_seconds", "A Run's or Submit's time from claim to finish, by kind.", ["kind"], buckets=_JOB_BUCKETS)
QUEUE_WAIT_SECONDS = Histogram("dojo_queue_wait_seconds", "A Run's or Submit's wait from enqueue to claim, by kind.", ["kind"], buckets=_JOB_BUCKETS)
BUSY_REFUSALS = Counter("dojo_busy_refusals", "Runs and Submits refused because the queue was full (503, 'busy').")
INFRA_ERRORS = Counter("dojo_infra_errors", "Runs and Submits that ended as infra_error, by error code.", ["code"])
SANDBOX_STARTS = Counter("dojo_sandbox_starts", "Jobs by how their sandbox container started: warm (pre-started) or cold.", ["start"])
REAPER_RECOVERIES = Counter("dojo_reaper_recoveries", "Jobs the reaper recovered, by job type and action (requeued, reset, abandoned).", ["job", "action"])
PASSBACK_FAILURES = Counter("dojo_lti_passback_failures", "LTI grade passbacks recorded as failed for good.")


def multiprocess_dir() -> str:
    """The folder the processes of this host share their counts in; empty when each keeps its own."""
    return os.environ.get(MULTIPROC_DIR_ENV, "")


def shared_registry() -> CollectorRegistry | None:
    """A registry that reads every process's counts from the multiprocess folder; None outside multiprocess mode."""
    folder = multiprocess_dir()
    if not folder:
        return None
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=folder)  # type: ignore[no-untyped-call]
    return registry

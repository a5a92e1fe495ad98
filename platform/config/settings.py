"""Settings, read from the environment through strict parsers.

Every value can be overridden with an environment variable of the same name;
a malformed value stops start-up with the variable's name (``config.env``).
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from pathlib import Path

import django_stubs_ext
import environ
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

# Lets `admin.ModelAdmin[Model]` and friends be subscripted at run time, for mypy.
django_stubs_ext.monkeypatch()

DEBUG: bool = env_bool("DEBUG", False)
SECRET_KEY: str = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    # Development and the test suite may run without one; production may not.
    if not (DEBUG or "pytest" in sys.modules):
        raise ImproperlyConfigured("SECRET_KEY must be set (a long random string) when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-never-use-in-production"
ALLOWED_HOSTS: list[str] = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env_list("CSRF_TRUSTED_ORIGINS", [])
# Behind a proxy that ends TLS and sets X-Forwarded-Proto: trust it, so a
# request it got over HTTPS counts as secure (LTI launches need the Secure,
# SameSite=None cookies only a secure request gets; docs/lti.md).
TRUST_X_FORWARDED_PROTO: bool = env_bool("TRUST_X_FORWARDED_PROTO", False)
if TRUST_X_FORWARDED_PROTO:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Production serves the site over HTTPS only (docker-compose.yml sets
# HTTPS_ONLY=1, with TRUST_X_FORWARDED_PROTO=1 for the load balancer that ends
# TLS): cookies are sent over HTTPS only, plain HTTP is redirected, and
# browsers are told (HSTS) to never try HTTP again. Off by default so that
# `make run`, the load test and the test suite keep serving plain HTTP.
# NOTE: behind a proxy that ends TLS, HTTPS_ONLY needs TRUST_X_FORWARDED_PROTO,
# or a request that came in over HTTPS looks like HTTP here and is redirected
# forever.
HTTPS_ONLY: bool = env_bool("HTTPS_ONLY", False)
if HTTPS_ONLY:
    SECURE_SSL_REDIRECT = True
    # The load balancer's health probe speaks plain HTTP to the web process.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # An hour to start with: raise it (a year is usual) once every page works over HTTPS.
    SECURE_HSTS_SECONDS: int = env_int("SECURE_HSTS_SECONDS", 3600, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS: bool = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD: bool = env_bool("SECURE_HSTS_PRELOAD", False)
# security.W021 asks for the HSTS "preload" directive. Preloading puts the
# domain into browsers' built-in lists for months, on the domain owner's
# request at hstspreload.org (which also wants a max-age of a year): a choice
# for whoever owns the domain, not a default of the software. The other HTTPS
# warnings are answered by HTTPS_ONLY above, not silenced.
SILENCED_SYSTEM_CHECKS = ["security.W021"]

INSTALLED_APPS = [
    # First, so its registration/*.html templates win over the admin's.
    "frontend",
    "django.contrib.admin",
    "django.contrib.auth",
    # Failed logins, counted per name and address (frontend/lockout.py).
    "axes",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    # Settings-aware glue the apps below share (Markdown, roles, the runner): it imports none of them.
    "core",
    "exercises",
    "grader",
    "mentor",
    "authoring",
    # LTI 1.3: django-lti's registrations, deployments and keys, then ours (lti/).
    "lti_tool",
    "lti",
    "aids",
    # Courses on the shared catalog: course roles, enrolment, assignments, the gradebook (issue 57).
    "courses",
    # The HTTP API under /api/v1/ and its personal access tokens (issue 62).
    "api",
]

MIDDLEWARE = [
    # The request id on every log line of the request (core/logs.py); around the budget, which logs.
    "core.logs.BindRequestIds",
    # Outermost but one: each request's wall, CPU and database time; over 500 ms is logged and counted (issue 55).
    "frontend.request_budget.RequestBudget",
    "django.middleware.security.SecurityMiddleware",
    # Before anything reads a form: a body in another charset is refused (400).
    "frontend.middleware.Utf8BodiesOnly",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The signed-in user's id on the request's log lines (core/logs.py).
    "core.logs.BindUserId",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: it answers a locked-out login.
    "axes.middleware.AxesMiddleware",
]

# Logins: django-axes counts failed ones. AXES_FAILURE_LIMIT failures for one
# name from one address lock that pair out for AXES_COOLOFF_TIME (429 with a
# Retry-After, frontend/lockout.py); a success resets the count. The pair, not
# the address alone: a class behind one network must not lock itself out,
# and a guesser still gets only AXES_FAILURE_LIMIT tries per cool-off. Behind
# a proxy every client has the proxy's address, and the lock is per name.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT: int = env_int("AXES_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 5, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# A try while locked out does not push the end of the pause (the Retry-After stays true).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Successful logins are not logged (a row per login, at a class's surge).
AXES_DISABLE_ACCESS_LOG = True
AXES_LOCKOUT_CALLABLE = "frontend.lockout.locked_out"

# Content-Security-Policy on every response (django-csp): scripts only from
# this site's own files, so markup that slips past the Markdown sanitiser or
# an escape (an event handler, an inline script) does not run. Styles may be
# inline: KaTeX sets style attributes on what it typesets and the editor
# injects its own stylesheet. No frame-ancestors: an LMS frames the tool
# (LTI), and X-Frame-Options already answers for the other pages.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
    },
}

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "authoring.context_processors.roles",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

# SQLite by default (embedded, nothing to start); DATABASE_URL switches to
# PostgreSQL, e.g. postgres://user:pass@127.0.0.1:5432/dojo.
DATABASE_URL = env_url("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}", schemes=("sqlite", "postgres", "postgresql", "pgsql"))
DATABASES = {"default": environ.Env.db_url_config(DATABASE_URL)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(exist_ok=True)  # the embedded database and its test copies live here
    # The web process and the workers write concurrently: WAL lets readers
    # proceed during a write and IMMEDIATE avoids lock-upgrade deadlocks.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE", "timeout": 20}
    )
    # A file, not :memory:, so a Celery worker process can share it; one per
    # test process so concurrent runs never write to each other's database.
    DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_PATH", str(VAR_DIR / f"test-{os.getpid()}.sqlite3"))}
else:
    # A PostgreSQL connection is checked before reuse, so a restarted server
    # costs one failed check, not a failed request.
    # NOTE: each gunicorn thread and each Celery pool process may hold one
    # connection: PostgreSQL's max_connections must exceed their sum
    # (docs/operations.md, "Sizing").
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # On PostgreSQL too, one test database per test process (pytest-django
    # creates and drops it), so two test runs against one cluster never meet.
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"}
# Persistent connections: a request or a task reuses its thread's connection
# instead of opening one every time. On PostgreSQL the opening is a backend
# process, about as costly as a small request (under a login surge a good
# share of the work); on SQLite it is the file, Django's functions and the
# schema, parsed again by each new connection's first query, about a quarter
# of a state poll's web CPU (bench/experiments/README.md). 0 opens and closes one per
# request.
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", int(DATABASES["default"].get("CONN_MAX_AGE", 60)), minimum=0)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sessions live on the server, in the project's Redis (SESSION_CACHE_URL), so
# that logout, a password change and an admin's "log out everywhere" end
# them: a cookie copied before then stops working (frontend/sessions.py, issue
# 55). Not in the database: a login there wrote the session two or three
# times, and a login surge queued those writes behind SQLite's single writer
# ("database is locked" under `make loadtest`, issue 21); in Redis a login
# writes one row (last_login) on every engine. Redis keeps them on disk
# (appendonly, as docker-compose.yml and scripts/run.sh start it); losing
# Redis logs everyone out, nothing more.
SESSION_ENGINE: str = env_str("SESSION_ENGINE", "django.contrib.sessions.backends.cache")
SESSION_CACHE_ALIAS = "sessions"
SESSION_COOKIE_HTTPONLY = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "catalog"
LOGOUT_REDIRECT_URL = "catalog"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
)

# --- Exercises -------------------------------------------------------------
EXERCISES_DIR = Path(env_str("EXERCISES_DIR", str(BASE_DIR / "exercises")))

# --- Mentor ----------------------------------------------------------------
# "Ask the mentor" (mentor/): answers from the module's own passages. With
# MENTOR_LLM_URL set (an OpenAI-compatible base URL such as a vLLM server,
# e.g. http://127.0.0.1:8000/v1) a model writes the answer from those
# passages; empty means no model: the passages alone are the answer.
MENTOR_LLM_URL: str = env_url("MENTOR_LLM_URL", "", schemes=("http", "https"), allow_empty=True)
MENTOR_LLM_MODEL: str = env_str("MENTOR_LLM_MODEL", "")
MENTOR_LLM_API_KEY: str = env_str("MENTOR_LLM_API_KEY", "")
# Bounds the connect and every read from the model server, so one that
# stalls mid-answer is noticed too.
MENTOR_LLM_TIMEOUT_S: float = env_float("MENTOR_LLM_TIMEOUT_S", 30.0, minimum=0.1)
MENTOR_LLM_MAX_TOKENS: int = env_int("MENTOR_LLM_MAX_TOKENS", 512, minimum=1)
# Questions one learner may ask per hour; 0 means no limit.
MENTOR_MAX_QUESTIONS_PER_HOUR: int = env_int("MENTOR_MAX_QUESTIONS_PER_HOUR", 60, minimum=0)

# --- Grading: one clock ----------------------------------------------------
# Every timeout derives from SANDBOX_MAX_TIME_S, the longest wall-clock limit
# any rung may ask for: sandbox limit < Celery soft limit < hard limit <
# broker visibility timeout. If these disagree, a broker redelivers a job
# that is still running (Read the Docs #12317).
SANDBOX_MAX_TIME_S: int = env_int("SANDBOX_MAX_TIME_S", 60, minimum=1)
# Container creation, start-up grace and teardown on top of the test run.
SANDBOX_OVERHEAD_S: int = env_int("SANDBOX_OVERHEAD_S", 45, minimum=0)
# The longest speed phase a speed-graded rung's Submit may have (its budget,
# capped here by exercises.jobs); the harness may take twice it (issue 60).
SANDBOX_MAX_SPEED_S: int = env_int("SANDBOX_MAX_SPEED_S", 30, minimum=2)
# A Submit runs the hidden tests twice (shared, then each test alone), each
# pass within the rung's limit: hence the factor 2; then the speed phase.
GRADER_SOFT_TIME_LIMIT_S = SANDBOX_MAX_TIME_S * 2 + SANDBOX_MAX_SPEED_S * 2 + SANDBOX_OVERHEAD_S
GRADER_HARD_TIME_LIMIT_S = GRADER_SOFT_TIME_LIMIT_S + 30
BROKER_VISIBILITY_TIMEOUT_S = GRADER_HARD_TIME_LIMIT_S * 2 + 60
# An authoring Check grades the reference, the starter and every wrong
# solution (two jobs each, two at a time): it gets most of the broker's
# visibility timeout, never more, or the broker would hand a running Check
# to a second worker.
AUTHORING_CHECK_HARD_TIME_LIMIT_S = BROKER_VISIBILITY_TIMEOUT_S - 30
AUTHORING_CHECK_SOFT_TIME_LIMIT_S = AUTHORING_CHECK_HARD_TIME_LIMIT_S - 30
# Checks one instructor may have queued or running at once (besides one per
# draft): a Check is a burst of Submit-sized jobs on the graders learners use.
AUTHORING_MAX_CHECKS_IN_FLIGHT: int = env_int("AUTHORING_MAX_CHECKS_IN_FLIGHT", 1, minimum=1)
# Infrastructure failures (Docker down, unreadable report) are retried this
# many times before the submission ends as infra_error.
GRADER_MAX_ATTEMPTS: int = env_int("GRADER_MAX_ATTEMPTS", 3, minimum=1)
# A queued submission older than this is enqueued again by the sweeper (its
# broker message may be lost); duplicates are no-ops thanks to the claim.
GRADER_QUEUED_STALE_S: int = env_int("GRADER_QUEUED_STALE_S", 120, minimum=1)
GRADER_SWEEP_EVERY_S: int = env_int("GRADER_SWEEP_EVERY_S", 30, minimum=1)
# Backpressure: per-learner rate limit, and a bound on each queue beyond
# which a new job is refused with "busy, try again in N s".
GRADER_RATE_LIMIT_PER_MIN: int = env_int("GRADER_RATE_LIMIT_PER_MIN", 30, minimum=1)
# The bound derives from the longest wait we accept and the grading rate
# measured from the last jobs (grader/capacity.py): what the slots grade in
# GRADER_MAX_WAIT_S may wait, more hears "busy, try again in N s" with N the
# time to grade what is queued. The estimate stands in until jobs are measured.
GRADER_MAX_WAIT_S: int = env_int("GRADER_MAX_WAIT_S", 8, minimum=1)
GRADER_SECONDS_PER_JOB_ESTIMATE: float = env_float("GRADER_SECONDS_PER_JOB_ESTIMATE", 1.0, minimum=0.1)
GRADER_WORKER_SLOTS: int = env_int("GRADER_WORKER_SLOTS", 2, minimum=1)
# A fixed bound instead of the measured one (0: measured).
GRADER_MAX_QUEUED: int = env_int("GRADER_MAX_QUEUED", 0, minimum=0)
# Jobs (Runs and Submits) one learner may have queued or running at once,
# across all rungs: a few accounts cannot fill the queue for everyone.
GRADER_MAX_JOBS_IN_FLIGHT: int = env_int("GRADER_MAX_JOBS_IN_FLIGHT", 3, minimum=1)
GRADER_MAX_CODE_BYTES: int = env_int("GRADER_MAX_CODE_BYTES", 64 * 1024, minimum=1)
# A Run's wall-clock limit (the rung's own limit when that is shorter): Runs
# are quick checks, so a loop ends sooner there than in a Submit.
GRADER_RUN_TIME_S: int = env_int("GRADER_RUN_TIME_S", 15, minimum=1)
# How often a worker checks whether the job it runs was cancelled.
GRADER_CANCEL_POLL_S: float = env_float("GRADER_CANCEL_POLL_S", 1.0, minimum=0.1)
# A running job's test rows are written (and its pages told) at most this
# often: a Submit's hidden tests end every few milliseconds (grader.live).
GRADER_LIVE_ROWS_EVERY_S: float = env_float("GRADER_LIVE_ROWS_EVERY_S", 0.25, minimum=0.0)

# Live-update streams (server-sent events) one web process holds open at
# once; each holds a thread, so keep this well under the thread count.
LIVE_STREAMS_PER_PROCESS: int = env_int("LIVE_STREAMS_PER_PROCESS", 8, minimum=1)

# --- Sandbox ---------------------------------------------------------------
# Empty means: the image built from this checkout (sandbox.image.tag.image_tag(),
# a hash of files). Never built at runtime: `manage.py check --deploy` and a
# worker's start-up fail when it is missing (grader/checks.py).
SANDBOX_IMAGE: str = env_str("SANDBOX_IMAGE", "")
# --- GPU grading: two processes, two questions ----------------------------
# The web process decides the queue, a worker attaches the GPU, and each reads
# its own answer here (docs/operations.md, "GPU workers"):
# GRADER_GPU_WORKERS (every process): this platform runs workers on the `gpu`
# queue, so GPU rungs are sent there. Off: `preferred` rungs are graded on the
# CPU queues (their GPU-only checks skipped) and `required` ones wait.
GRADER_GPU_WORKERS: bool = env_bool("GRADER_GPU_WORKERS", False)
# SANDBOX_GPU_ENABLED (a GPU worker): attach a GPU to GPU rungs' containers
# and use the cuda image variant.
SANDBOX_GPU_ENABLED: bool = env_bool("SANDBOX_GPU_ENABLED", False)
# The GPUs this worker hands out, one per worker slot (Docker device ids:
# indexes or UUIDs); the worker runs one slot per device, so a job never
# shares its GPU with another job.
SANDBOX_GPU_DEVICES: list[str] = env_list("SANDBOX_GPU_DEVICES", ["0"])
if SANDBOX_GPU_ENABLED and (not SANDBOX_GPU_DEVICES or len(set(SANDBOX_GPU_DEVICES)) != len(SANDBOX_GPU_DEVICES)):
    raise ImproperlyConfigured(f"SANDBOX_GPU_DEVICES must name each GPU once (e.g. 0,1), not {SANDBOX_GPU_DEVICES!r}")
# Pre-started containers each grading process keeps warm (torch and pytest
# already imported), each used for exactly one job; 0 starts every job cold.
# Two, because one takes ~3 s of CPU to warm up: a learner pressing Run again
# within that time would otherwise find it still importing (bench/results.json).
SANDBOX_POOL_SIZE: int = env_int("SANDBOX_POOL_SIZE", 2, minimum=0)
# Start each grading process's pool when the process starts, not at its
# first job. Celery hands a lone learner's jobs to the same process, so the
# other one met its first job, often the first of a class's burst, with no
# runner at all: it started its containers then, cold, while its neighbour
# graded (docs/operations.md has what that cost a burst).
SANDBOX_POOL_WARM_AT_START: bool = env_bool("SANDBOX_POOL_WARM_AT_START", True)
# Jobs one pooled container serves, one after another, each under a fresh
# learner uid after everything of the last one is removed (docs/security.md,
# "Reused containers"); then, or after any anomaly, it is replaced. 1 gives
# every job a fresh container. Always 1 under runsc. A replacement imports
# torch and pytest again, seconds of CPU, shared by the jobs it serves
# (docs/operations.md).
# At most 16000: job n's learner uid is 1000 + 2n.
SANDBOX_REUSE_JOBS: int = env_int("SANDBOX_REUSE_JOBS", 100, minimum=1, maximum=16000)
# Pin each Celery worker slot's sandbox containers to one host core (slot i
# on core i): the harness and the learner's process answer each other about
# a thousand times in a Submit, and on one core each answer costs about half
# what it costs across cores (bench/experiments/pinning.py). Off: the kernel places them.
SANDBOX_PIN_CPUS: bool = env_bool("SANDBOX_PIN_CPUS", True)
# Let the harness's processes keep their malloc heap in transparent huge
# pages (the host's THP mode madvise or always): a Submit forks a torch-sized
# process per hidden test, and each fork and exit then handles one page-table
# entry per 2 MiB of heap instead of 512 (bench/experiments/hugepages.py). Off: 4 KiB pages.
SANDBOX_HUGE_PAGES: bool = env_bool("SANDBOX_HUGE_PAGES", True)
# The Docker runtime of sandbox containers: "" for Docker's default (runc),
# or "runsc" for gVisor (docs/security.md says when to choose it).
SANDBOX_RUNTIME: str = env_str("SANDBOX_RUNTIME", "")
if SANDBOX_RUNTIME not in ("", "runc", "runsc"):
    raise ImproperlyConfigured(f"SANDBOX_RUNTIME must be empty, 'runc' or 'runsc', not {SANDBOX_RUNTIME!r}")

# --- Authoring: the mutation gate -------------------------------------------
# Publishing a rung is refused while its hidden tests kill less than this
# share of the reference's mutants (killed / (mutants - equivalent)); see
# exercises/mutation.py and docs/authoring.md.
MUTATION_MIN_SCORE: float = env_float("MUTATION_MIN_SCORE", 0.9, minimum=0.0)
if MUTATION_MIN_SCORE > 1.0:
    raise ImproperlyConfigured(f"MUTATION_MIN_SCORE={MUTATION_MIN_SCORE:g} is not valid: expected a share between 0 and 1")

# --- Celery / Redis --------------------------------------------------------
REDIS_URL: str = env_url("REDIS_URL", "redis://127.0.0.1:6390/0", schemes=("redis", "rediss", "unix"))
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": BROKER_VISIBILITY_TIMEOUT_S}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_SOFT_TIME_LIMIT = GRADER_SOFT_TIME_LIMIT_S
CELERY_TASK_TIME_LIMIT = GRADER_HARD_TIME_LIMIT_S
CELERY_TASK_DEFAULT_QUEUE = "run"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    # Its own queue: behind a backlog of grading jobs the reaper would never
    # run exactly when it is needed. A sweep not run within a period is dropped.
    "sweep-stuck-submissions": {
        "task": "grader.sweep_stuck_submissions_task",
        "schedule": GRADER_SWEEP_EVERY_S,
        "options": {"queue": "maintenance", "expires": GRADER_SWEEP_EVERY_S},
    },
}
if SANDBOX_GPU_ENABLED:
    # One slot per GPU (grader.gpu_slots): concurrency follows the device list.
    CELERY_WORKER_CONCURRENCY = len(SANDBOX_GPU_DEVICES)
CELERY_TASK_ALWAYS_EAGER: bool = env_bool("CELERY_TASK_ALWAYS_EAGER", False)

# --- LTI 1.3 (lti/, docs/lti.md) ---------------------------------------------
# The OIDC state and nonce live between the login redirect and the launch
# POST, which may reach another web process: a cache every web process shares.
# Default: the project's Redis; "locmemcache://lti" suits one process only.
LTI_CACHE_URL: str = env_url("LTI_CACHE_URL", REDIS_URL, schemes=("redis", "rediss", "locmemcache"))
# Login sessions (SESSION_ENGINE above): every web process must see them.
SESSION_CACHE_URL: str = env_url("SESSION_CACHE_URL", REDIS_URL, schemes=("redis", "rediss", "locmemcache"))
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "lti": environ.Env.cache_url_config(LTI_CACHE_URL),
    "sessions": environ.Env.cache_url_config(SESSION_CACHE_URL),
}
# Every request to an LMS (its key set, tokens, scores, rosters) gives up after this.
LTI_HTTP_TIMEOUT_S: float = env_float("LTI_HTTP_TIMEOUT_S", 10.0, minimum=0.1)
# Tries of one grade passback before it is recorded as failed; the wait
# between tries doubles from LTI_SCORE_RETRY_DELAY_S.
LTI_SCORE_MAX_ATTEMPTS: int = env_int("LTI_SCORE_MAX_ATTEMPTS", 5, minimum=1)
LTI_SCORE_RETRY_DELAY_S: int = env_int("LTI_SCORE_RETRY_DELAY_S", 10, minimum=1)
# Accounts made by an LTI launch are named ``<this><registration>-<hash of sub>``;
# the sign-up form refuses names that start with it (a constant, not an option).
LTI_USERNAME_PREFIX = "lti-"

# The Prometheus endpoint /metrics answers only a bearer of this token; unset, it is a 404 (frontend/metrics.py).
METRICS_TOKEN: str = env_str("METRICS_TOKEN", "")
# A Celery worker serves its processes' metrics on this port (0: it does not; grader/worker_hooks.py).
WORKER_METRICS_PORT: int = env_int("WORKER_METRICS_PORT", 0, minimum=0, maximum=65535)

# json: one JSON object a line, with the request, user and submission ids bound (core/logs.py); plain: text.
LOG_FORMAT: str = env_str("LOG_FORMAT", "json")
if LOG_FORMAT not in ("json", "plain"):
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r} is not one of json, plain")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.logs.JsonLines"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

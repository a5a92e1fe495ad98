"""Settings, read from the environment through strict parsers.

Every value can be overridden with an environment variable of the same name;
a malformed value fails loudly at start-up (django-environ raises).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import django_stubs_ext
import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

# Lets `admin.ModelAdmin[Model]` and friends be subscripted at run time, for mypy.
django_stubs_ext.monkeypatch()

env = environ.Env()

DEBUG: bool = env.bool("DEBUG", default=False)
SECRET_KEY: str = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    # Development and the test suite may run without one; production may not.
    if not (DEBUG or "pytest" in sys.modules):
        raise ImproperlyConfigured("SECRET_KEY must be set (a long random string) when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-never-use-in-production"
ALLOWED_HOSTS: list[str] = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # First, so its registration/*.html templates win over the admin's.
    "frontend",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "exercises",
    "grader",
    "mentor",
    "authoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

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
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(exist_ok=True)  # the embedded database and its test copies live here
    # The web process and the workers write concurrently: WAL lets readers
    # proceed during a write and IMMEDIATE avoids lock-upgrade deadlocks.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE", "timeout": 20}
    )
    # A file, not :memory:, so a Celery worker process can share it; one per
    # test process so concurrent runs never write to each other's database.
    DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_PATH", default=str(VAR_DIR / f"test-{os.getpid()}.sqlite3"))}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

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
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.console.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
)

# --- Exercises -------------------------------------------------------------
EXERCISES_DIR = Path(env.str("EXERCISES_DIR", default=str(BASE_DIR / "exercises")))

# --- Mentor ----------------------------------------------------------------
# "Ask the mentor" (mentor/): answers from the module's own passages. With
# MENTOR_LLM_URL set (an OpenAI-compatible base URL such as a vLLM server,
# e.g. http://127.0.0.1:8000/v1) a model writes the answer from those
# passages; empty means no model: the passages alone are the answer.
MENTOR_LLM_URL: str = env.str("MENTOR_LLM_URL", default="")
MENTOR_LLM_MODEL: str = env.str("MENTOR_LLM_MODEL", default="")
MENTOR_LLM_API_KEY: str = env.str("MENTOR_LLM_API_KEY", default="")
# Bounds the connect and every read from the model server, so one that
# stalls mid-answer is noticed too.
MENTOR_LLM_TIMEOUT_S: float = env.float("MENTOR_LLM_TIMEOUT_S", default=30.0)
MENTOR_LLM_MAX_TOKENS: int = env.int("MENTOR_LLM_MAX_TOKENS", default=512)
# Questions one learner may ask per hour; 0 means no limit.
MENTOR_MAX_QUESTIONS_PER_HOUR: int = env.int("MENTOR_MAX_QUESTIONS_PER_HOUR", default=60)

# --- Grading: one clock ----------------------------------------------------
# Every timeout derives from SANDBOX_MAX_TIME_S, the longest wall-clock limit
# any rung may ask for: sandbox limit < Celery soft limit < hard limit <
# broker visibility timeout. If these disagree, a broker redelivers a job
# that is still running (Read the Docs #12317).
SANDBOX_MAX_TIME_S: int = env.int("SANDBOX_MAX_TIME_S", default=60)
# Container creation, start-up grace and teardown on top of the test run.
SANDBOX_OVERHEAD_S: int = env.int("SANDBOX_OVERHEAD_S", default=45)
# A Submit runs the hidden tests twice (shared, then each test alone), each
# pass within the rung's limit: hence the factor 2.
GRADER_SOFT_TIME_LIMIT_S = SANDBOX_MAX_TIME_S * 2 + SANDBOX_OVERHEAD_S
GRADER_HARD_TIME_LIMIT_S = GRADER_SOFT_TIME_LIMIT_S + 30
BROKER_VISIBILITY_TIMEOUT_S = GRADER_HARD_TIME_LIMIT_S * 2 + 60
# Infrastructure failures (Docker down, unreadable report) are retried this
# many times before the submission ends as infra_error.
GRADER_MAX_ATTEMPTS: int = env.int("GRADER_MAX_ATTEMPTS", default=3)
# A queued submission older than this is enqueued again by the sweeper (its
# broker message may be lost); duplicates are no-ops thanks to the claim.
GRADER_QUEUED_STALE_S: int = env.int("GRADER_QUEUED_STALE_S", default=120)
GRADER_SWEEP_EVERY_S: int = env.int("GRADER_SWEEP_EVERY_S", default=30)
# Backpressure: per-learner rate limit, and a bound on each queue beyond
# which a new job is refused with "busy, try again in N s".
GRADER_RATE_LIMIT_PER_MIN: int = env.int("GRADER_RATE_LIMIT_PER_MIN", default=30)
# The bound derives from the longest wait we accept: slots x wait / job time
# (the load test measured ~8-10 s a job on two busy cores). A bound of "a few
# hundred" never fired and learners waited minutes instead of hearing "busy".
GRADER_MAX_WAIT_S: int = env.int("GRADER_MAX_WAIT_S", default=90)
GRADER_SECONDS_PER_JOB_ESTIMATE: float = env.float("GRADER_SECONDS_PER_JOB_ESTIMATE", default=8.0)
GRADER_WORKER_SLOTS: int = env.int("GRADER_WORKER_SLOTS", default=2)
GRADER_MAX_QUEUED: int = env.int(
    "GRADER_MAX_QUEUED", default=max(1, int(GRADER_WORKER_SLOTS * GRADER_MAX_WAIT_S / GRADER_SECONDS_PER_JOB_ESTIMATE))
)
GRADER_MAX_CODE_BYTES: int = env.int("GRADER_MAX_CODE_BYTES", default=64 * 1024)

# Live-update streams (server-sent events) one web process holds open at
# once; each holds a thread, so keep this well under the thread count.
LIVE_STREAMS_PER_PROCESS: int = env.int("LIVE_STREAMS_PER_PROCESS", default=8)

# --- Sandbox ---------------------------------------------------------------
# Empty means: the image built from this checkout (sandbox.build.image_tag()).
SANDBOX_IMAGE: str = env.str("SANDBOX_IMAGE", default="")
SANDBOX_GPU_ENABLED: bool = env.bool("SANDBOX_GPU_ENABLED", default=False)
# Pre-started containers each grading process keeps warm (torch and pytest
# already imported), each used for exactly one job; 0 starts every job cold.
# Two, because one takes ~3 s of CPU to warm up: a learner pressing Run again
# within that time would otherwise find it still importing (bench/results.json).
SANDBOX_POOL_SIZE: int = env.int("SANDBOX_POOL_SIZE", default=2)

# --- Authoring: the mutation gate -------------------------------------------
# Publishing a rung is refused while its hidden tests kill less than this
# share of the reference's mutants (killed / (mutants - equivalent)); see
# exercises/mutation.py and docs/authoring.md.
MUTATION_MIN_SCORE: float = env.float("MUTATION_MIN_SCORE", default=0.9)
if not 0.0 <= MUTATION_MIN_SCORE <= 1.0:
    raise ImproperlyConfigured(f"MUTATION_MIN_SCORE must lie between 0 and 1, got {MUTATION_MIN_SCORE}")

# --- Celery / Redis --------------------------------------------------------
REDIS_URL: str = env.str("REDIS_URL", default="redis://127.0.0.1:6390/0")
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
CELERY_TASK_ALWAYS_EAGER: bool = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}

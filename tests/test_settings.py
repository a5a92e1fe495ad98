"""Strict settings: a malformed value stops start-up with the variable's name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("name", "value", "parse"),
    [
        ("SANDBOX_GPU_ENABLED", "ture", lambda: env.env_bool("SANDBOX_GPU_ENABLED", False)),
        ("DEBUG", "2", lambda: env.env_bool("DEBUG", False)),
        ("GRADER_WORKER_SLOTS", "two", lambda: env.env_int("GRADER_WORKER_SLOTS", 2)),
        ("GRADER_WORKER_SLOTS", "0", lambda: env.env_int("GRADER_WORKER_SLOTS", 2, minimum=1)),
        ("SANDBOX_REUSE_JOBS", "16001", lambda: env.env_int("SANDBOX_REUSE_JOBS", 100, minimum=1, maximum=16000)),
        ("GRADER_SECONDS_PER_JOB_ESTIMATE", "8s", lambda: env.env_float("GRADER_SECONDS_PER_JOB_ESTIMATE", 8.0)),
        ("GRADER_SECONDS_PER_JOB_ESTIMATE", "nan", lambda: env.env_float("GRADER_SECONDS_PER_JOB_ESTIMATE", 8.0)),
        ("REDIS_URL", "127.0.0.1:6379", lambda: env.env_url("REDIS_URL", "", schemes=("redis",))),
        ("REDIS_URL", "redis://host:port/0", lambda: env.env_url("REDIS_URL", "", schemes=("redis",))),
        ("MENTOR_LLM_URL", "ftp://model", lambda: env.env_url("MENTOR_LLM_URL", "", schemes=("http", "https"), allow_empty=True)),
    ],
)
def test_a_malformed_value_is_refused_with_the_variables_name(monkeypatch, name, value, parse):
    monkeypatch.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=f"^{name}="):
        parse()


@pytest.mark.parametrize(
    ("value", "expected"), [("true", True), ("Yes", True), ("1", True), ("on", True), ("false", False), ("0", False), ("no", False), ("", True)]
)
def test_booleans_accept_the_usual_words_and_empty_means_default(monkeypatch, value, expected):
    monkeypatch.setenv("FLAG", value)
    assert env.env_bool("FLAG", True) is expected


def test_well_formed_values_parse(monkeypatch):
    monkeypatch.setenv("N", " 12 ")
    monkeypatch.setenv("F", "2.5")
    monkeypatch.setenv("U", "redis://127.0.0.1:6390/1")
    assert env.env_int("N", 0) == 12
    assert env.env_float("F", 0.0) == 2.5
    assert env.env_url("U", "", schemes=("redis",)) == "redis://127.0.0.1:6390/1"
    monkeypatch.delenv("N")
    assert env.env_int("N", 7) == 7


def _start(**overrides: str) -> subprocess.CompletedProcess[str]:
    env_vars = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x", **overrides}
    code = "import django; django.setup(); from django.conf import settings; print(settings.GRADER_MAX_QUEUED)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env_vars, "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}"},
                          capture_output=True, text=True, timeout=120)


def test_start_up_stops_on_a_misspelt_boolean():
    out = _start(SANDBOX_GPU_ENABLED="ture")
    assert out.returncode != 0
    assert "SANDBOX_GPU_ENABLED='ture' is not a boolean" in out.stderr


def test_the_queue_bound_is_measured_unless_fixed():
    # 0: derived from the measured grading rate (grader/tests/test_capacity.py).
    out = _start(GRADER_WORKER_SLOTS="4", GRADER_MAX_WAIT_S="60", GRADER_SECONDS_PER_JOB_ESTIMATE="10")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "0"
    out = _start(GRADER_MAX_QUEUED="12")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "12"



def test_a_container_never_serves_more_jobs_than_it_has_learner_uids():
    # Job n runs as uid 1000 + 2n: the setting stops where the harness does.
    sys.path.insert(0, str(ROOT / "sandbox" / "harness"))
    from dojo_harness import main as harness_main  # type: ignore[import-not-found]

    assert harness_main.learner_uid(harness_main.MAX_JOBS) < 65534
    out = _start(SANDBOX_REUSE_JOBS=str(harness_main.MAX_JOBS + 1))
    assert out.returncode != 0
    assert f"SANDBOX_REUSE_JOBS='{harness_main.MAX_JOBS + 1}'" in out.stderr
    assert _start(SANDBOX_REUSE_JOBS=str(harness_main.MAX_JOBS)).returncode == 0

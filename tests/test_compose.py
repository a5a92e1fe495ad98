"""docker-compose.yml is valid and has the production shape."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.compose

ROOT = Path(__file__).resolve().parents[1]


def _config(*args: str) -> Any:
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.fail("docker-compose is not installed (make test installs it; or apt-get install docker-compose)")
    out = subprocess.run(
        [binary, *args, "config"], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "SECRET_KEY": "compose-test-key"},
    )
    assert out.returncode == 0, out.stderr
    return yaml.safe_load(out.stdout)


def test_compose_file_validates_with_the_production_services():
    config = _config()
    services = config["services"]
    assert {"postgres", "redis", "web", "worker", "sandbox-image", "migrate"} <= set(services)
    assert services["web"]["command"][0] == "gunicorn"
    assert "/var/run/docker.sock" in str(services["worker"]["volumes"])
    assert services["worker-gpu"]["profiles"] == ["gpu"]


def test_beat_is_one_service_of_its_own_and_no_worker_embeds_another():
    services = _config("--profile", "gpu", "--profile", "mentor")["services"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "config", "beat"]
    assert "deploy" not in services["beat"] or services["beat"]["deploy"].get("replicas", 1) == 1
    for name, service in services.items():
        if name != "beat":
            assert not {"-B", "--beat"} & set(service.get("command") or []), f"{name} runs a second beat"
    assert "maintenance" in services["worker"]["command"][services["worker"]["command"].index("-Q") + 1]


def test_the_mentor_profile_serves_a_pinned_vllm_on_one_gpu_and_is_off_by_default():
    assert _config()["services"]["mentor-llm"]["profiles"] == ["mentor"]  # started only with --profile mentor
    services = _config("--profile", "mentor")["services"]
    server = services["mentor-llm"]
    assert server["image"].startswith("vllm/vllm-openai:v")  # a pinned release, never latest
    assert server["command"][server["command"].index("--served-model-name") + 1] == "mentor"
    devices = server["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and devices[0]["count"] == 1
    assert "MENTOR_LLM_URL" in services["web"]["environment"]


def test_the_gpu_profile_adds_a_worker_that_requests_nvidia_devices():
    services = _config("--profile", "gpu")["services"]
    gpu = services["worker-gpu"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert gpu["environment"]["SANDBOX_GPU_ENABLED"] == "1"
    assert "gpu" in gpu["command"]

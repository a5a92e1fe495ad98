"""End to end: HTTP -> Django -> Redis -> a real Celery worker -> Docker -> results."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import requests

# sqlite_pass: also run in `make test`'s SQLite pass (the embedded default).
pytestmark = [pytest.mark.worker, pytest.mark.redis, pytest.mark.docker, pytest.mark.sqlite_pass]

KV = Path(__file__).resolve().parents[2] / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


class Learner:
    """A learner driving the site over HTTP, as a browser would (session + CSRF)."""

    def __init__(self, base_url: str) -> None:
        self.base = base_url
        self.http = requests.Session()

    def _csrf(self, path: str) -> str:
        page = self.http.get(self.base + path, timeout=10)
        page.raise_for_status()
        match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert match, f"no CSRF token on {path}"
        return match.group(1)

    def sign_up(self, username: str, password: str) -> None:
        token = self._csrf("/signup/")
        response = self.http.post(
            self.base + "/signup/",
            data={"csrfmiddlewaretoken": token, "username": username, "password1": password, "password2": password},
            headers={"Referer": self.base + "/signup/"},
            timeout=10,
        )
        assert response.status_code == 200 and "Log out" in response.text, response.text[:2000]

    def send(self, slug: str, kind: str, code: str) -> dict[str, Any]:
        page = self.http.get(f"{self.base}/rungs/{slug}/", timeout=10)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        version = re.search(r'data-version="(\d+)"', page.text).group(1)  # type: ignore[union-attr]
        response = self.http.post(
            f"{self.base}/rungs/{slug}/{kind}",
            data={"code": code, "version": version},
            headers={"X-CSRFToken": token, "Referer": f"{self.base}/rungs/{slug}/"},
            timeout=10,
        )
        assert response.status_code == 202, response.text
        state_url = response.json()["state_url"]
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            state = self.http.get(self.base + state_url, timeout=10).json()
            if state["status"] == "done":
                return dict(state)
            time.sleep(0.1)
        raise AssertionError(f"not graded in time: {state}")


@pytest.fixture
def lena(live_server, catalog, worker) -> Learner:
    learner = Learner(live_server.url)
    learner.sign_up("lena", "a-long-learner-password-1")
    return learner


def test_a_correct_solution_passes_run_and_submit_and_unlocks_the_reference(lena):
    reference = (KV / "reference.py").read_text()
    before = lena.http.get(f"{lena.base}/rungs/kv-cache-size/reference", timeout=10)
    assert before.status_code == 403
    page = lena.http.get(f"{lena.base}/rungs/kv-cache-size/", timeout=10).text
    assert reference not in page

    run = lena.send("kv-cache-size", "run", reference)
    assert run["outcome"] == "passed", run
    assert run["tests"] and all(test["outcome"] == "passed" for test in run["tests"])
    assert "reference_unlocked" not in run

    submit = lena.send("kv-cache-size", "submit", reference)
    assert submit["outcome"] == "passed", submit
    assert submit["reference_unlocked"] is True
    unlocked = lena.http.get(f"{lena.base}/rungs/kv-cache-size/reference", timeout=10)
    assert unlocked.status_code == 200
    assert unlocked.json()["reference"] == reference


def test_a_wrong_solution_fails_with_test_names_and_messages(lena):
    wrong = (KV / "wrong" / "forgets_values.py").read_text()
    run = lena.send("kv-cache-size", "run", wrong)
    assert run["outcome"] == "failed", run
    failing = [test for test in run["tests"] if test["outcome"] == "failed"]
    assert failing
    assert all(test["name"].startswith("test_") and test["message"] for test in failing)

    submit = lena.send("kv-cache-size", "submit", wrong)
    assert submit["outcome"] == "failed"
    assert submit.get("reference_unlocked") is False
    hidden_failures = [test for test in submit["tests"] if test["outcome"] == "failed"]
    assert hidden_failures and all(test["hidden"] for test in hidden_failures)
    assert lena.http.get(f"{lena.base}/rungs/kv-cache-size/reference", timeout=10).status_code == 403


def test_a_syntax_error_ends_as_error_with_the_message(lena):
    run = lena.send("kv-cache-size", "run", "def kv_cache_bytes(config, seq_len:\n    return 0\n")
    assert run["outcome"] == "error", run
    assert "SyntaxError" in run["message"]

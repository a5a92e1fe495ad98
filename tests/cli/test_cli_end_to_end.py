"""End to end (issue 62): a learner logs in with a token, fetches a rung, fails
the visible tests locally, fixes the code, passes them locally, submits to a
real worker, passes, and the reference becomes fetchable. Run with -s to see
the CLI session's transcript."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.constants import Scope

from .dojo import Dojo

pytestmark = [pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

KV = Path(__file__).resolve().parents[2] / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"


def test_fetch_test_locally_fix_submit_and_fetch_the_reference(live_server, catalog, worker, learner_client, tmp_path):
    # The token is made on the API tokens page, as a learner makes one.
    made = learner_client.post("/api/tokens/", {"name": "laptop", "scope": Scope.RUN_SUBMIT, "days": "7"})
    secret = made.context["secret"]
    assert secret and secret in made.content.decode()
    dojo = Dojo(config_dir=tmp_path / "config", cwd=tmp_path)
    try:
        assert dojo("login", live_server.url, input=secret + "\n").returncode == 0
        assert dojo("fetch", "kv-cache-size").returncode == 0
        folder = tmp_path / "kv-cache-size"

        failing = dojo("test", cwd=folder)
        assert failing.returncode == 1 and "failed" in failing.stdout
        locked = dojo("reference", cwd=folder)
        assert locked.returncode == 2 and "unlocks once you pass" in locked.stderr

        (folder / "solution.py").write_text((KV / "reference.py").read_text())
        passing = dojo("test", cwd=folder)
        assert passing.returncode == 0 and "passed" in passing.stdout and "failed" not in passing.stdout

        submitted = dojo("submit", cwd=folder, timeout=240)
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        assert "All tests passed." in submitted.stdout and "reference solution is unlocked" in submitted.stdout

        assert dojo("reference", cwd=folder).returncode == 0
        assert (folder / "reference.py").read_text() == (KV / "reference.py").read_text()
        status = dojo("status", cwd=folder)
        assert status.returncode == 0 and "solved" in status.stdout and "not solved" not in status.stdout
    finally:
        print("\n\n".join(dojo.transcript).replace(secret, "dojo_…"))

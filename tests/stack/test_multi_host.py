"""Production-shaped, on one machine: docker-compose.yml's web on two hosts,
its workers under two node names, its beat alone, on PostgreSQL and Redis
(conftest.py says how each is started). A learner is served by either web
host, a result recorded by a worker anywhere reaches the learner's live
stream on whichever web host holds it, a worker killed mid-job loses
nothing, and the production settings pass Django's deployment checks."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
import requests
import yaml

from tests.faults.test_faults import wait_for

from . import compose
from .conftest import WORKER_NODES, Stack
from .learner import Learner

pytestmark = [pytest.mark.stack, pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

KV = compose.ROOT / "exercises" / "llm-systems-frontier" / "inference-and-serving" / "rungs" / "01-kv-cache-size"
REFERENCE = (KV / "reference.py").read_text()
HIDDEN_TESTS = list(yaml.safe_load((KV / "rung.yaml").read_text())["hidden_tests"])
PASSWORD = "tangerine-orbit-5530-kv"
_names = itertools.count(1)
SWEEP_DONE = re.compile(r"Task grader\.sweep_stuck_submissions_task\[[0-9a-f-]+\] succeeded")


@pytest.fixture
def learner(stack: Stack) -> Learner:
    """A new account, signed up on web B, then logged in afresh on web A."""
    username = f"stack-learner-{next(_names)}"
    Learner().sign_up(stack.web_url("b"), username, PASSWORD)
    learner = Learner()
    learner.log_in(stack.web_url("a"), username, PASSWORD)
    return learner


def submission_row(stack: Stack, pk: int) -> tuple[str, str, int, str]:
    (row,) = stack.sql("SELECT status, outcome, attempts, claimed_by FROM grader_submission WHERE id = %s", pk)
    return str(row[0]), str(row[1]), int(row[2]), str(row[3])


def pk_of(sent: dict[str, object]) -> int:
    return int(str(sent["state_url"]).strip("/").split("/")[1])


def test_manage_check_deploy_passes_with_the_production_settings(stack):
    checked = stack.manage("check", "--deploy", "--fail-level", "WARNING")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # One silenced: security.W021 (HSTS preload), argued in the settings.
    assert "System check identified no issues (1 silenced)." in checked.stdout, checked.stdout


def test_the_web_hosts_serve_https_only_behind_the_balancer(stack):
    web = stack.web_url("a")
    plain = requests.get(web + "/", allow_redirects=False, timeout=30)
    assert plain.status_code == 301 and plain.headers["Location"] == f"https://127.0.0.1:{stack.web_ports['a']}/"
    assert requests.get(web + "/healthz", allow_redirects=False, timeout=30).status_code == 200  # the balancer's probe
    forwarded = requests.get(web + "/", headers={"X-Forwarded-Proto": "https"}, allow_redirects=False, timeout=30)
    assert forwarded.status_code == 200
    assert forwarded.headers["Strict-Transport-Security"] == "max-age=3600; includeSubDomains"
    login_page = requests.get(web + "/accounts/login/", headers={"X-Forwarded-Proto": "https"}, timeout=30)
    assert "secure" in login_page.headers["Set-Cookie"].lower()  # the CSRF cookie never travels over HTTP


def test_a_learner_on_web_a_sees_live_results_recorded_by_a_worker_on_host_b(stack, learner):
    if "worker-a" in stack.processes:
        stack.processes["worker-a"].stop()  # host B's worker alone consumes, so host B's records it
    web_a = stack.web_url("a")
    sent = learner.send(web_a, "kv-cache-size", "run", REFERENCE)
    state, statuses = learner.follow(web_a, sent, timeout_s=180)

    assert state["outcome"] == "passed", state
    assert state["tests"] and all(test["outcome"] == "passed" for test in state["tests"])
    # The first event comes with the subscription; the later ones were
    # published by the worker process and reached web A's stream through Redis.
    assert statuses[0] != "done" and len(statuses) >= 2, statuses
    status, outcome, _, claimed_by = submission_row(stack, pk_of(sent))
    assert (status, outcome) == ("done", "passed")
    assert claimed_by.startswith(f"{WORKER_NODES['b']}#"), claimed_by


def test_a_worker_killed_mid_job_loses_nothing_and_grades_once(stack, learner):
    workers = {host: stack.worker(host) for host in WORKER_NODES}
    sent = learner.send(stack.web_url("b"), "kv-cache-size", "submit", REFERENCE)
    pk = pk_of(sent)
    claimed_by = wait_for(lambda: submission_row(stack, pk)[0] == "running" and submission_row(stack, pk)[3], 120, "a worker to claim the job",
                          stack.logs)
    victim = next(host for host, node in WORKER_NODES.items() if claimed_by.startswith(f"{node}#"))
    survivor = next(host for host in WORKER_NODES if host != victim)

    workers[victim].kill()  # SIGKILL to the worker and its pool: a host dying mid-job
    assert workers[survivor].alive
    assert submission_row(stack, pk)[0] == "running"  # nobody finished it
    stack.worker(victim)  # compose's `restart: unless-stopped`: the same host, the same node name

    state, _ = learner.follow(stack.web_url("a"), sent, timeout_s=240)
    assert state["outcome"] == "passed", state
    status, outcome, attempts, finished_by = submission_row(stack, pk)
    assert (status, outcome) == ("done", "passed")
    # The killed claim and the one that finished (more when a loaded machine made Docker retry).
    assert attempts >= 2, (attempts, finished_by)
    assert not finished_by.startswith(claimed_by)
    names = [row[0] for row in stack.sql("SELECT name FROM grader_submissiontestresult WHERE submission_id = %s", pk)]
    assert sorted(names) == sorted(HIDDEN_TESTS)  # one row per hidden test: recorded once
    (progress,) = stack.sql(
        "SELECT p.attempts FROM grader_progress p JOIN auth_user u ON u.id = p.user_id WHERE u.username = %s", learner.username
    )
    assert progress == (1,)  # graded once, counted once


def test_beat_runs_alone_and_its_sweeps_reach_the_workers(stack):
    worker_command = compose.command("worker")
    assert "-B" not in worker_command and "--beat" not in worker_command
    beat_log = stack.processes["beat"]
    wait_for(lambda: "Sending due task sweep-stuck-submissions" in beat_log.log_path.read_text(), 60, "beat to send a sweep", stack.logs)
    worker_logs = [process.log_path for name, process in stack.processes.items() if name.startswith("worker-")]
    wait_for(
        lambda: any(SWEEP_DONE.search(_text(path)) for path in worker_logs),
        60,
        "a worker to run a sweep",
        stack.logs,
    )
    assert not any("beat: Starting" in _text(path) for path in worker_logs)  # no worker embeds a second beat
    assert "beat: Starting" in beat_log.log_path.read_text()


def _text(path: Path) -> str:
    return path.read_text(errors="replace")

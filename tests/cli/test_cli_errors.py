"""The CLI against a live server (no worker): login, fetch, and its one-line errors."""

from __future__ import annotations

import json
import socket
import stat

import pytest

from api import tokens
from api.constants import Scope
from api.models import ApiToken

from .dojo import Dojo


@pytest.fixture
def dojo(tmp_path) -> Dojo:
    work = tmp_path / "work"
    work.mkdir()
    return Dojo(config_dir=tmp_path / "config", cwd=work)


@pytest.fixture
def secret(transactional_db, learner) -> str:
    return tokens.create_token(user=learner, name="laptop", scope=Scope.RUN_SUBMIT, days=30).secret


def _one_line_error(done, *words: str) -> str:
    assert done.returncode != 0 and done.stdout == ""
    line = done.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and line.startswith("dojo: "), done.stderr
    for word in words:
        assert word in line, line
    return str(line)


def test_login_keeps_the_token_in_a_0600_file_then_list_and_fetch_work(live_server, transactional_db, catalog, secret, dojo):
    done = dojo("login", live_server.url, input=secret + "\n")
    assert done.returncode == 0, done.stderr
    config = dojo.config_dir / "config.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text()) == {"server": live_server.url, "token": secret}
    listed = dojo("list")
    assert listed.returncode == 0 and "kv-cache-size" in listed.stdout and "not started" in listed.stdout, listed.stdout
    fetched = dojo("fetch", "kv-cache-size")
    assert fetched.returncode == 0, fetched.stderr
    folder = dojo.cwd / "kv-cache-size"
    names = {path.name for path in folder.iterdir()}
    assert {"instructions.md", "solution.py", "test_visible.py", "grading.py", "conftest.py", ".dojo.json"} <= names
    assert not {"test_hidden.py", "reference.py"} & names


def test_a_bad_token_is_one_line(live_server, transactional_db, secret, dojo):
    _one_line_error(dojo("login", live_server.url, input="dojo_wrong\n"), "token was refused", "not known")
    assert not (dojo.config_dir / "config.json").exists()


def test_an_expired_token_is_one_line(live_server, transactional_db, catalog, secret, dojo):
    assert dojo("login", live_server.url, input=secret + "\n").returncode == 0
    ApiToken.objects.update(expires_at="2000-01-01T00:00:00Z")
    _one_line_error(dojo("fetch", "kv-cache-size"), "expired", "dojo login")


def test_an_unreachable_server_is_one_line(transactional_db, secret, dojo):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    _one_line_error(dojo("login", f"http://127.0.0.1:{port}", input=secret + "\n"), "Cannot reach the server")


def test_a_changed_rung_and_an_oversized_file_are_one_line(live_server, transactional_db, catalog, secret, dojo, settings):
    assert dojo("login", live_server.url, input=secret + "\n").returncode == 0
    assert dojo("fetch", "kv-cache-size").returncode == 0
    folder = dojo.cwd / "kv-cache-size"
    state = json.loads((folder / ".dojo.json").read_text())
    (folder / ".dojo.json").write_text(json.dumps({**state, "version": state["version"] + 1}))
    _one_line_error(dojo("run", cwd=folder), "changed since you fetched it", "dojo fetch kv-cache-size")
    (folder / ".dojo.json").write_text(json.dumps(state))
    (folder / "solution.py").write_text("x" * (state["max_code_bytes"] + 1))
    _one_line_error(dojo("submit", cwd=folder), "the limit is", "bytes")


def test_a_speed_rung_that_requires_a_prediction_says_so_in_one_line(live_server, transactional_db, catalog, secret, dojo):
    from exercises.models import Rung

    version = Rung.objects.get(slug="batched-kv-gather").current_version
    assert version is not None
    version.speed = {**version.speed, "section": {**version.speed["section"], "predict": "required"}}
    version.save(update_fields=["speed"])
    assert dojo("login", live_server.url, input=secret + "\n").returncode == 0
    assert dojo("fetch", "batched-kv-gather").returncode == 0
    folder = dojo.cwd / "batched-kv-gather"
    _one_line_error(dojo("submit", cwd=folder), "predict the speed-up")
    _one_line_error(dojo("submit", "--predict", "5000", cwd=folder), "number from 0.01 to 1000")

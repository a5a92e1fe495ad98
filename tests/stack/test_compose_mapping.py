"""The stack test runs what docker-compose.yml says, or fails saying what drifted."""

from __future__ import annotations

import pytest

from . import compose


def test_the_commands_are_compose_s_own_with_only_the_mapped_values_swapped():
    expected = [str(part) for part in compose.services()["web"]["command"]]
    expected[expected.index("--bind") + 1] = "127.0.0.1:9999"
    assert compose.command("web", replace={"--bind": "127.0.0.1:9999"}) == expected
    assert compose.command("worker", append=("-n", "w@h"))[-2:] == ["-n", "w@h"]


def test_an_option_compose_no_longer_has_is_drift_not_a_silent_change():
    with pytest.raises(compose.ComposeDrift, match="--port"):
        compose.command("web", replace={"--port": "1"})


def test_the_environment_resolves_compose_variables_and_maps_the_hosts():
    env = compose.environment(
        "web", variables={"SECRET_KEY": "k" * 50, "ALLOWED_HOSTS": "dojo.example.org"},
        hosts={"DATABASE_URL": "postgres://here/db", "REDIS_URL": "redis://here:1/0"},
    )
    assert (env["SECRET_KEY"], env["ALLOWED_HOSTS"], env["DEBUG"]) == ("k" * 50, "dojo.example.org", "0")
    assert env["CSRF_TRUSTED_ORIGINS"] == "http://localhost:8000"  # compose's default, as `docker-compose up` would use
    assert env["DATABASE_URL"] == "postgres://here/db"


def test_a_variable_left_pointing_at_a_compose_host_is_refused():
    with pytest.raises(compose.ComposeDrift, match="REDIS_URL"):
        compose.environment("web", variables={"SECRET_KEY": "k"}, hosts={"DATABASE_URL": "postgres://here/db"})


def test_a_required_variable_without_a_value_is_refused():
    with pytest.raises(compose.ComposeDrift, match="SECRET_KEY"):
        compose.environment("web", variables={}, hosts={"DATABASE_URL": "postgres://here/db", "REDIS_URL": "redis://here:1/0"})

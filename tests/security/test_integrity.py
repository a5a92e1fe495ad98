"""Attacks on the verdict: forged reports, fake results, tampering with the tests."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from grader import messages
from grader.constants import Kind
from grader.models import Progress

from .support import REFERENCE, VISIBLE_TESTS, Sandbox, grade_through_the_site

pytestmark = [pytest.mark.docker, pytest.mark.security]

RETURNS_ZERO = """
def kv_cache_bytes(*args, **kwargs):
    return 0

def max_sequences(*args, **kwargs):
    return 0
"""


def test_attack_14_conftest_rewrites_reports(sandbox: Sandbox) -> None:
    rewrite = textwrap.dedent(
        """
        import pytest

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome, report.longrepr = "passed", None
        """
    )
    files = {
        "conftest.py": rewrite,
        "dojo_rewrite.py": rewrite,
        "pytest.ini": "[pytest]\naddopts = -p dojo_rewrite\n",
        "tox.ini": "[pytest]\naddopts = -p dojo_rewrite\n",
        "setup.cfg": "[tool:pytest]\naddopts = -p dojo_rewrite\n",
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p dojo_rewrite'\n",
    }
    graded = sandbox.attack(
        textwrap.dedent(
            f"""
            import os

            pytest_plugins = ["dojo_rewrite"]
            for folder in ("/work/learner", "/tmp", "/work", "/work/harness", "/work/harness/tests", "/"):
                for name, text in {files!r}.items():
                    try:
                        with open(os.path.join(folder, name), "w") as handle:
                            handle.write(text)
                    except OSError:
                        pass
            """
        )
        + RETURNS_ZERO,
        # Submit: the second, isolated pytest run starts after the files exist.
        mode="submit",
    )
    assert graded.outcome == "failed", graded.describe()
    outcomes = [test.outcome for test in graded.result.tests]
    assert outcomes.count("passed") < len(outcomes) // 2, outcomes
    assert "got 0 bytes" in graded.everything()


def test_attack_15_sys_exit_is_an_error(sandbox: Sandbox, kv_rung: Any, learner: Any, django_capture_on_commit_callbacks: Any) -> None:
    code = REFERENCE + "\nimport os\n\ndef kv_cache_bytes(*args, **kwargs):\n    os._exit(0)\n"
    submission = grade_through_the_site(sandbox, learner, kv_rung, Kind.SUBMIT, code, django_capture_on_commit_callbacks)
    assert submission.outcome == "error", (submission.outcome, submission.message)
    assert "ended its process" in submission.message
    assert not Progress.objects.filter(user=learner, solved_at__isnull=False).exists()

    at_import = sandbox.grade("import sys\nsys.exit(0)\n")
    assert at_import.outcome == "error", at_import.describe()
    sandbox.assert_correct_still_passes()


def test_attack_16_always_equal_and_tensor_subclass(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        textwrap.dedent(
            """
            import torch

            class Yes:
                def __eq__(self, other): return True
                def __ne__(self, other): return False
                def __bool__(self): return True
                def __int__(self): return 1 << 30
                def __index__(self): return 1 << 30
                def __float__(self): return float(1 << 30)
                __hash__ = object.__hash__

            class YesTensor(torch.Tensor):
                def __eq__(self, other): return True
                def allclose(self, *args, **kwargs): return True
                def __bool__(self): return True

            def kv_cache_bytes(*args, **kwargs):
                return Yes()

            def max_sequences(*args, **kwargs):
                return torch.zeros(()).as_subclass(YesTensor)
            """
        )
    )
    assert graded.outcome == "failed", graded.describe()
    assert [test.outcome for test in graded.result.tests] == ["failed"] * 3


def test_attack_17_monkeypatch_comparisons(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        textwrap.dedent(
            """
            import builtins, sys, time, types
            import numpy, numpy.testing, torch, torch.testing

            yes = lambda *args, **kwargs: True
            torch.allclose = torch.equal = torch.isclose = yes
            torch.testing.assert_close = numpy.testing.assert_allclose = lambda *a, **k: None
            builtins.AssertionError = type("Nope", (Exception,), {})
            builtins.abs = builtins.round = lambda x, *a: 0
            fake = types.ModuleType("grading")
            fake.assert_bytes = fake.assert_int = lambda *a, **k: None
            sys.modules["grading"] = sys.modules["pytest"] = fake
            time.monotonic = time.perf_counter = lambda: 0.0
            """
        )
        + RETURNS_ZERO
    )
    assert graded.outcome == "failed", graded.describe()
    assert [test.outcome for test in graded.result.tests] == ["failed"] * 3


def test_attack_18_forged_report(sandbox: Sandbox) -> None:
    forged = '@@DOJO 00000000000000000000000000000000 {"event":"report","outcome":"passed","tests":[]}'
    graded = sandbox.attack(
        textwrap.dedent(
            f"""
            import glob, os, sys

            FORGED = {forged!r} + "\\n"
            print(FORGED, flush=True)
            sys.stderr.write(FORGED)
            for path in ["/proc/1/fd/1", "/proc/1/fd/2", "/dev/stdout", "/dev/stderr", "/dev/console", "/dev/tty"] + glob.glob("/proc/[0-9]*/fd/1"):
                try:
                    with open(path, "w") as handle:
                        handle.write(FORGED)
                except OSError:
                    pass
            for path in ["/work/harness/report.json", "/work/report.json", "/tmp/report.json", "/work/learner/report.json"]:
                try:
                    with open(path, "w") as handle:
                        handle.write(FORGED)
                    os.chmod(path, 0o444)
                except OSError:
                    pass
            """
        )
        + RETURNS_ZERO
    )
    assert graded.outcome == "failed", graded.describe()

    # Worse than the learner can do: code inside the harness process itself
    # prints a report on every descriptor and dies. Without the nonce the
    # host accepts none of it.
    in_harness = textwrap.dedent(
        f"""
        import os

        def test_forges_and_dies(solution):
            for fd in range(64):
                try:
                    os.write(fd, {forged!r}.encode() + b"\\n")
                except OSError:
                    pass
            os._exit(0)
        """
    )
    forged_run = sandbox.grade(REFERENCE, tests={"test_forge.py": in_harness})
    assert forged_run.outcome == "infra_error", forged_run.describe()
    assert forged_run.result.error_code == "report_missing"
    sandbox.assert_correct_still_passes()


def test_attack_19_forge_on_inherited_descriptors(sandbox: Sandbox) -> None:
    forged = b'@@DOJO 00000000000000000000000000000000 {"event":"report","outcome":"passed","tests":[]}\n'
    graded = sandbox.attack(
        textwrap.dedent(
            f"""
            import os

            def kv_cache_bytes(*args, **kwargs):
                for folder in ("/proc/self/fd", f"/proc/{{os.getppid()}}/fd"):
                    try:
                        names = os.listdir(folder)
                    except OSError:
                        continue
                    for name in names:
                        try:
                            fd = os.open(os.path.join(folder, name), os.O_WRONLY)
                        except OSError:
                            fd = int(name) if folder == "/proc/self/fd" else -1
                        try:
                            os.write(fd, {forged!r} + b"pass\\n")
                        except OSError:
                            pass
                return 0

            max_sequences = kv_cache_bytes
            """
        )
    )
    # Junk written on the learner's own channel breaks its session: the
    # learner's fault (error), never ours (infra_error), never a pass.
    assert graded.outcome in {"failed", "error", "timeout"}, graded.describe()
    assert not any(test.outcome == "passed" for test in graded.result.tests), graded.describe()


def test_attack_20_mutate_inputs_in_place(sandbox: Sandbox) -> None:
    callers_copy = textwrap.dedent(
        """
        def test_compares_against_the_callers_own_copy(solution):
            config = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64}
            sizes = [8]
            got = solution.kv_cache_bytes(config, sizes[0])
            head_dim = config["hidden_size"] // config["num_attention_heads"]
            assert got == 2 * config["num_hidden_layers"] * config["num_attention_heads"] * sizes[0] * head_dim * 2
        """
    )
    graded = sandbox.attack(
        textwrap.dedent(
            """
            def kv_cache_bytes(config, seq_len, *args, **kwargs):
                config["num_hidden_layers"] = 0  # so that "expected" would be 0 too
                config.clear()
                return 0

            max_sequences = kv_cache_bytes
            """
        ),
        tests={**VISIBLE_TESTS, "test_inputs.py": callers_copy},
    )
    assert graded.outcome == "failed", graded.describe()
    assert {test.name: test.outcome for test in graded.result.tests}["test_compares_against_the_callers_own_copy"] == "failed"


def test_attack_21_hard_coded_visible_answers(sandbox: Sandbox) -> None:
    code = textwrap.dedent(
        """
        def kv_cache_bytes(config, seq_len, batch_size=1, dtype="fp16"):
            return 4 * 2**30 if config.get("num_key_value_heads") == 8 else 2**30

        def max_sequences(*args, **kwargs):
            return 24
        """
    )
    visible = sandbox.grade(code)
    assert visible.outcome == "passed", visible.describe()  # the visible tests alone are fooled
    graded = sandbox.attack(code, mode="submit")
    assert graded.outcome == "failed", graded.describe()


def test_attack_24_reduce_payload_is_never_unpickled(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        textwrap.dedent(
            """
            import os

            class Payload:
                def __reduce__(self):
                    return (os.system, ("echo PWNED > /tmp/pwned",))

                def __eq__(self, other):
                    return True

            def kv_cache_bytes(*args, **kwargs):
                return Payload()

            def max_sequences(*args, **kwargs):
                return [Payload()]
            """
        )
    )
    assert graded.outcome == "failed", graded.describe()
    assert [test.outcome for test in graded.result.tests] == ["failed"] * 3
    assert "Payload object in your solution" in graded.result.tests[0].message, graded.describe()


def test_attack_25_kill_the_harness(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        REFERENCE
        + textwrap.dedent(
            """
            import os, signal

            _exact = kv_cache_bytes

            def kv_cache_bytes(*args, **kwargs):
                denied = []
                for entry in os.listdir("/proc"):
                    if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid != os.getuid():
                        try:
                            os.kill(int(entry), signal.SIGKILL)
                        except PermissionError:
                            denied.append(entry)
                os.kill(os.getppid(), signal.SIGKILL)  # the fork server runs as the learner too
                return _exact(*args, **kwargs)
            """
        )
    )
    assert graded.outcome in {"error", "timeout"}, graded.describe()


def test_attack_28_state_kept_between_hidden_tests(
    sandbox: Sandbox, kv_rung: Any, learner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    code = REFERENCE + textwrap.dedent(
        """
        _exact = kv_cache_bytes

        def kv_cache_bytes(config, seq_len, batch_size=1, dtype="fp16", _calls=[]):
            _calls.append(1)  # a mutable default: state that outlives the call
            if len(_calls) > 6:  # right only while the process is young
                return 0
            return _exact(config, seq_len, batch_size, dtype)
        """
    )
    submission = grade_through_the_site(sandbox, learner, kv_rung, Kind.SUBMIT, code, django_capture_on_commit_callbacks)
    assert submission.outcome == "failed", (submission.outcome, submission.message)
    rows = list(submission.test_results.order_by("order"))
    leaky = [row for row in rows if messages.STATE_LEAK_NOTE in row.message]
    assert leaky, [(row.name, row.outcome, row.message) for row in rows]
    assert all(row.outcome == "failed" for row in leaky)
    assert any("keeps state between calls" in row.detail for row in leaky)
    sandbox.assert_correct_still_passes()

"""Attacks that reach outside the job: network, persistence, daemons, privilege, secrets."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sandbox import runner as runner_module
from sandbox.jobs import Job

from .support import REFERENCE, VISIBLE_TESTS, Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.security]


def with_probe(probe: str) -> str:
    """The correct solution, plus ``probe()`` run (and printed) on the first call."""
    return (
        REFERENCE
        + textwrap.dedent(probe)
        + textwrap.dedent(
            """
            import json as _json
            _exact, _probed = kv_cache_bytes, []

            def kv_cache_bytes(*args, **kwargs):
                if not _probed:
                    _probed.append(True)
                    print("PROBE " + _json.dumps(probe(), sort_keys=True), flush=True)
                return _exact(*args, **kwargs)
            """
        )
    )


def probe_result(graded_stdout: str) -> dict[str, Any]:
    match = re.search(r"^PROBE (.*)$", graded_stdout, re.MULTILINE)
    assert match, f"the probe did not run:\n{graded_stdout[:3000]}"
    return dict(json.loads(match.group(1)))


def test_attack_9_network(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        textwrap.dedent(
            """
            import socket

            TARGETS = [("1.1.1.1", 80), ("169.254.169.254", 80), ("172.17.0.1", 6379), ("172.17.0.1", 5432),
                       ("172.17.0.1", 2375), ("10.0.0.1", 443), ("127.0.0.1", 6379)]

            def kv_cache_bytes(*args, **kwargs):
                failures = []
                try:
                    socket.getaddrinfo("pypi.org", 443)
                except OSError as exc:
                    failures.append(f"dns: {type(exc).__name__}")
                for host, port in TARGETS:
                    try:
                        socket.create_connection((host, port), timeout=2).close()
                    except OSError as exc:
                        failures.append(f"{host}:{port}: {type(exc).__name__}")
                raise ConnectionError("all failed: " + "; ".join(failures))

            max_sequences = kv_cache_bytes
            """
        )
    )
    assert graded.outcome == "failed", graded.describe()
    message = graded.result.tests[0].message
    assert "dns:" in message, message
    for host, port in (("1.1.1.1", 80), ("169.254.169.254", 80), ("172.17.0.1", 6379), ("172.17.0.1", 5432), ("127.0.0.1", 6379)):
        assert f"{host}:{port}:" in message, message


def test_attack_10_persistence(sandbox: Sandbox) -> None:
    places = ["/tmp/.persist", "/dev/shm/.persist", "/var/tmp/.persist", "/work/learner/.persist", "/work/.persist", "/home/.persist"]
    writer = with_probe(
        f"""
        def probe():
            written = []
            for path in {places!r}:
                try:
                    with open(path, "w") as handle:
                        handle.write("from an earlier job")
                    written.append(path)
                except OSError:
                    pass
            return {{"written": written}}
        """
    )
    first = sandbox.grade(writer)
    assert first.outcome == "passed", first.describe()
    assert {"/tmp/.persist", "/dev/shm/.persist", "/work/learner/.persist"} <= set(probe_result(first.result.stdout)["written"])
    reader = with_probe(
        f"""
        import os

        def probe():
            return {{"found": [path for path in {places!r} if os.path.exists(path)]}}
        """
    )
    later = sandbox.attack(reader)
    assert later.outcome == "passed", later.describe()
    assert probe_result(later.result.stdout) == {"found": []}


def test_attack_11_daemonize(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        with_probe(
            """
            import os, signal, time

            def probe():
                pid = os.fork()
                if pid == 0:
                    os.setsid()
                    if os.fork():
                        os._exit(0)
                    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                        signal.signal(sig, signal.SIG_IGN)
                    os.closerange(0, 1024)
                    while True:
                        time.sleep(0.1)
                os.waitpid(pid, 0)
                return {"daemon": "started"}
            """
        )
    )
    # The job itself is fine; ``Sandbox.grade`` has already checked that no
    # process of its container outlived it.
    assert graded.outcome == "passed", graded.describe()
    assert probe_result(graded.result.stdout) == {"daemon": "started"}


def test_attack_12_privilege(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        with_probe(
            """
            import ctypes, os, stat, subprocess

            libc = ctypes.CDLL(None, use_errno=True)

            def attempt(name, action):
                try:
                    result = action()
                except (OSError, subprocess.SubprocessError) as exc:
                    return f"{name}: {type(exc).__name__}"
                return f"{name}: ALLOWED {result!r}"

            def syscall(number, *args):
                if libc.syscall(number, *args) == -1:
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
                return "ok"

            def run(*argv):
                done = subprocess.run(argv, capture_output=True, timeout=5)
                if done.returncode:
                    raise subprocess.SubprocessError(done.stderr.decode()[-200:])
                return done.stdout.decode()[-200:]

            def harness_pids():
                found = []
                for entry in os.listdir("/proc"):
                    if entry.isdigit():
                        try:
                            if os.stat(f"/proc/{entry}").st_uid in (0, 1001):
                                found.append(int(entry))
                        except OSError:
                            pass
                return found

            def probe():
                open("/work/learner/x", "w").close()
                results = [
                    attempt("setuid", lambda: os.setuid(0)),
                    attempt("setgid", lambda: os.setgid(0)),
                    attempt("chmod-setuid", lambda: os.chmod("/work/learner/x", 0o4755)),
                    attempt("sudo", lambda: run("sudo", "id")),
                    attempt("su", lambda: run("su", "-c", "id")),
                    attempt("mount", lambda: run("mount", "-t", "tmpfs", "none", "/work/learner")),
                    attempt("unshare", lambda: run("unshare", "-r", "id")),
                    attempt("mknod", lambda: os.mknod("/work/learner/sda", 0o600 | stat.S_IFBLK, os.makedev(8, 0))),
                    attempt("keyctl", lambda: syscall(250, 1, 0)),  # KEYCTL_JOIN_SESSION_KEYRING
                    attempt("chroot", lambda: os.chroot("/work/learner")),
                ]
                for pid in harness_pids():
                    results.append(attempt(f"ptrace-{pid}", lambda: syscall(101, 16, pid, 0, 0)))  # PTRACE_ATTACH
                    results.append(attempt(f"signal-{pid}", lambda: os.kill(pid, 0)))
                return {"results": results}
            """
        )
    )
    assert graded.outcome == "passed", graded.describe()
    found = probe_result(graded.result.stdout)
    results = found["results"]
    assert isinstance(results, list) and len(results) > 10, found
    assert not [line for line in results if "ALLOWED" in line and not line.startswith("chmod-setuid")], found
    # chmod of one's own file may succeed, but the bit is refused (nosuid
    # mounts, no-new-privileges): it never grants anything.
    assert any(line.startswith("ptrace-") for line in results), found


def test_attack_13_read_hidden_tests(sandbox: Sandbox) -> None:
    graded = sandbox.attack(
        with_probe(
            """
            import gc, glob, os

            def read(path, mode="r"):
                try:
                    with open(path, mode) as handle:
                        return handle.read(100_000)
                except OSError as exc:
                    return type(exc).__name__

            def probe():
                found = {"glob": glob.glob("/work/harness/**", recursive=True) + glob.glob("/work/**/test_*.py", recursive=True)}
                found["tests"] = read("/work/harness/tests/test_visible.py")
                found["listdir"] = read("/work/harness")
                found["me"] = os.getuid()
                found["procs"] = {}
                for entry in os.listdir("/proc"):
                    if not entry.isdigit():
                        continue
                    info = {"cmdline": read(f"/proc/{entry}/cmdline").replace("\\x00", " ")}
                    for name in ("environ", "mem", "maps"):
                        value = read(f"/proc/{entry}/{name}", "rb") if name == "mem" else read(f"/proc/{entry}/{name}")
                        info[name] = value if isinstance(value, str) and len(value) < 40 else "READ"
                    try:
                        info["fd"] = os.listdir(f"/proc/{entry}/fd")
                    except OSError as exc:
                        info["fd"] = type(exc).__name__
                    try:
                        info["uid"] = os.stat(f"/proc/{entry}").st_uid
                    except OSError:
                        continue
                    found["procs"][entry] = info
                found["objects"] = sorted({o for o in gc.get_objects() if isinstance(o, str) and ("LLAMA" in o or "@@DOJO" in o)})
                return found
            """
        )
    )
    assert graded.outcome == "passed", graded.describe()
    found = probe_result(graded.result.stdout)
    assert found["glob"] in ([], ["/work/harness/"]), found["glob"]  # the folder exists; nothing in it shows
    assert found["tests"] in {"PermissionError", "FileNotFoundError"}, found["tests"]
    assert found["objects"] == [], found["objects"]
    procs = found["procs"]
    assert isinstance(procs, dict)
    # The learner's uid is the job's own (1002 for a container's first job).
    others = {pid: info for pid, info in procs.items() if info["uid"] != found["me"]}
    assert others, "the harness and init processes should be visible (and closed)"
    for info in others.values():
        assert info["environ"] == "PermissionError", info
        assert info["mem"] == "PermissionError", info
        assert info["fd"] == "PermissionError", info
    # Command lines are world-readable: none may carry a secret (the nonce
    # is 32 hex digits and lives only in the harness's memory).
    for info in procs.values():
        assert not re.search(r"[0-9a-f]{32}", info["cmdline"]), info["cmdline"]
        assert "LLAMA" not in info["cmdline"]
    assert "LLAMA2_7B" in VISIBLE_TESTS["test_visible.py"]  # the marker looked for is real


def test_attack_22_shadow_modules(sandbox: Sandbox) -> None:
    poison = "import builtins\\nbuiltins.__dict__['AssertionError'] = type('Nope', (Exception,), {})\\n"
    noop = "def _ok(*a, **k):\\n    return None\\nassert_bytes = assert_int = assert_close = assert_equal = _ok\\nGB, GIB = 10**9, 2**30\\n"
    graded = sandbox.attack(
        textwrap.dedent(
            f"""
            import os

            SHADOWS = {{
                "grading.py": "{noop}",
                "pytest.py": "{poison}raise SystemExit(0)\\n",
                "torch.py": "{poison}",
                "sitecustomize.py": "{poison}",
                "usercustomize.py": "{poison}",
                "zz-poison.pth": "import builtins; builtins.__dict__['AssertionError'] = ValueError\\n",
            }}
            for folder in ("/work/learner", "/tmp", "/work", "/work/harness", "/work/harness/tests", "/opt/harness", "/opt/venv/lib/python3.11/site-packages"):
                for name, text in SHADOWS.items():
                    try:
                        with open(os.path.join(folder, name), "w") as handle:
                            handle.write(text)
                    except OSError:
                        pass
                try:
                    os.makedirs(os.path.join(folder, "__pycache__"), exist_ok=True)
                    with open(os.path.join(folder, "__pycache__", "grading.cpython-311.pyc"), "wb") as handle:
                        handle.write(b"garbage")
                except OSError:
                    pass

            def kv_cache_bytes(*args, **kwargs):
                return 0

            def max_sequences(*args, **kwargs):
                return 0
            """
        )
    )
    # Every shadow stayed in the learner's own process: the real asserts ran.
    assert graded.outcome == "failed", graded.describe()
    assert [test.outcome for test in graded.result.tests] == ["failed"] * 3
    assert "got 0 bytes" in graded.result.tests[0].message, graded.describe()


def test_attack_23_symlinks_are_never_followed_by_the_host(sandbox: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-SECRET-7f3a9c")
    before = secret.stat()
    links = [str(secret), "/etc/passwd", "/etc/shadow", "/proc/1/environ", "/var/run/docker.sock", "../../../../etc/passwd"]
    graded = sandbox.attack(
        with_probe(
            f"""
            import os

            def probe():
                made = []
                for folder in ("/work/learner", "/tmp", "/dev/shm"):
                    for i, target in enumerate({links!r}):
                        for name in (f"link{{i}}", f"report{{i}}.json", f"result{{i}}.xml"):
                            try:
                                os.symlink(target, os.path.join(folder, name))
                                made.append(name)
                            except OSError:
                                pass
                return {{"made": len(made)}}
            """
        )
    )
    assert graded.outcome == "passed", graded.describe()
    assert probe_result(graded.result.stdout)["made"] > 0
    text = graded.everything()
    assert "HOST-SECRET" not in text
    host_passwd_only = [line for line in Path("/etc/passwd").read_text().splitlines() if line and not line.startswith(("root:", "daemon:", "bin:", "sys:", "sync:", "games:", "man:", "lp:", "mail:", "news:", "uucp:", "proxy:", "www-data:", "backup:", "list:", "irc:", "_apt:", "nobody:", "gnats:"))]
    for line in host_passwd_only:
        assert line not in text
    after = secret.stat()
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    # The host reads nothing from the container's filesystem: no archive or
    # copy API is used, only the log stream of nonce-tagged lines.
    code = Path(runner_module.__file__ or "").read_text()
    for api in ("get_archive", "put_archive", "export(", "docker cp", "volumes", "mounts"):
        assert api not in code, api


def test_attack_27_platform_secrets(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOJO_CANARY_SECRET", "canary-1e5b")
    graded = sandbox.attack(
        with_probe(
            """
            import os

            def read(path):
                try:
                    with open(path) as handle:
                        return handle.read(20000)
                except OSError as exc:
                    return type(exc).__name__

            def probe():
                return {
                    "environ": dict(os.environ),
                    "init_environ": read("/proc/1/environ"),
                    "sockets": [p for p in ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock") if os.path.exists(p)],
                    "secrets": [p for p in ("/run/secrets", "/var/run/secrets", "/work/main", "/app", "/etc/llm-dojo") if os.path.exists(p)] + os.listdir("/srv"),
                    "mounts": read("/proc/self/mounts"),
                }
            """
        )
    )
    assert graded.outcome == "passed", graded.describe()
    found = probe_result(graded.result.stdout)
    environ = found["environ"]
    assert isinstance(environ, dict)
    assert set(environ) <= {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "OMP_NUM_THREADS", "LC_CTYPE", "USER", "LOGNAME"}, environ
    assert found["init_environ"] == "PermissionError"
    assert found["sockets"] == [] and found["secrets"] == []
    mounts = str(found["mounts"])
    assert "docker.sock" not in mounts and " /work/main" not in mounts and "bind" not in mounts
    text = graded.everything()
    assert "canary-1e5b" not in text
    for name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL"):
        value = os.environ.get(name, "")
        if len(value) >= 8:  # a short test value could match anything
            assert value not in text, name
    assert sandbox_runner_env_is_closed()


def sandbox_runner_env_is_closed() -> bool:
    """The runner states the container's environment; it never copies the host's.

    The harness (never the learner) also learns the image tag, to name it in results.
    """
    options = runner_module.container_options("image", Job(mode="run", source="", tests={}), gpu_enabled=False)
    environment = dict(options["environment"])
    return set(environment) == {"OMP_NUM_THREADS", "DOJO_IMAGE"} and environment["DOJO_IMAGE"] == "image"

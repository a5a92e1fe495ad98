"""What one call from a test into the learner's code costs, against a bare round trip.

Usage (from the repository root)::

    .venv/bin/python -m bench.experiments.round_trips

In a container of the sandbox image, pinned to one core as a worker's slot
is, under runc and under gVisor (runsc, when Docker has it), it measures:

- **bare**: one byte there and back over a socketpair between two
  processes (the floor of any call that crosses a process boundary);
- **call**: a method call on an object living in the learner's process,
  through the harness's own ``LearnerSession`` and the learner's own
  ``_Session.serve``, framing, encoding and waiting included.

- **bare_mb** and **tensors**: the same for a large call, as the
  speculative-decoding rung's large-vocabulary tests make one: 40 MiB of
  float16 probabilities ([128, 3, 32768] and [128, 2, 32768]) sent to the
  learner's process and a small answer back. The baseline writes the same
  number of raw bytes over a socketpair and reads one byte back.

It prints microseconds per call and call / bare for each runtime, and
writes bench/experiments/round-trips-results.json. A hidden test that drives a
learner's object through thousands of calls (the paged-attention rung's
generated call sequences make about 2,200, twice in a Submit) pays this
per call. Knobs: ROUND_TRIPS_CALLS (5000), ROUND_TRIPS_BIG_CALLS (8),
ROUND_TRIPS_CORE (1), ROUND_TRIPS_IMAGE (another sandbox image to measure,
e.g. an older build).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / "bench" / "experiments" / "round-trips-results.json"

# Runs inside the container, as root, with the image's harness on the path.
PROBE = r"""
import json, os, socket, sys, time
sys.path.insert(0, "/opt/harness")
from dojo_harness import learner, proxy

calls, big_calls = int(sys.argv[1]), int(sys.argv[2])
SOURCE = '''
class Counter:
    def __init__(self):
        self.n = 0
    def step(self, k):
        self.n += k
        return self.n

def rows(p, q):
    return [p.shape[0], q.shape[0]]
'''


def bare(n):
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        a.close()
        while True:
            data = b.recv(64)
            if not data:
                os._exit(0)
            b.send(data)
    b.close()
    for _ in range(200):
        a.send(b"x"); a.recv(64)
    started = time.perf_counter()
    for _ in range(n):
        a.send(b"x"); a.recv(64)
    elapsed = time.perf_counter() - started
    a.close(); os.waitpid(pid, 0)
    return elapsed / n


def bare_bytes(n, size):
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        a.close()
        while True:
            got = 0
            while got < size:
                data = b.recv(1 << 20)
                if not data:
                    os._exit(0)
                got += len(data)
            b.send(b"x")
    b.close()
    payload = bytes(size)
    started = time.perf_counter()
    for _ in range(n):
        a.sendall(payload); a.recv(64)
    elapsed = time.perf_counter() - started
    a.close(); os.waitpid(pid, 0)
    return elapsed / n


def session():
    harness, other = socket.socketpair()
    control, _server_end = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        harness.close()
        served = learner._Session(other)
        served.load(SOURCE)
        try:
            served.serve()
        except Exception:
            pass
        os._exit(0)
    other.close()
    # A session as ``LearnerSession`` opens one, without a fork server in between.
    opened = object.__new__(proxy.LearnerSession)
    opened.channel = proxy.Channel(control, deadline=time.monotonic() + 600)
    opened.ended, opened._callables, opened.sock = False, set(), harness
    if hasattr(proxy, "FrameReader"):  # since 2026-12-02; an older image (ROUND_TRIPS_IMAGE) has none
        harness.setblocking(False)
        opened.reader = proxy.FrameReader(harness)
    return proxy.SolutionProxy(opened), harness, pid, control, _server_end


def call(n):
    solution, harness, pid, *_ = session()
    counter = solution.Counter()
    for _ in range(200):
        counter.step(1)
    started = time.perf_counter()
    for _ in range(n):
        counter.step(1)
    elapsed = time.perf_counter() - started
    harness.close()
    os.waitpid(pid, 0)
    return elapsed / n


def tensors(n):
    solution, harness, pid, *_ = session()
    p = torch.rand(128, 3, 32768).half()
    q = torch.rand(128, 2, 32768).half()
    assert solution.rows(p, q) == [128, 128]
    started = time.perf_counter()
    for _ in range(n):
        solution.rows(p, q)
    elapsed = time.perf_counter() - started
    harness.close()
    os.waitpid(pid, 0)
    return elapsed / n, p.numel() * 2 + q.numel() * 2


import torch
torch.set_num_threads(1)
tensor_s, size = tensors(big_calls)
print(json.dumps({
    "bare_us": round(bare(calls) * 1e6, 1), "call_us": round(call(calls) * 1e6, 1),
    "mib": round(size / 2**20, 1), "bare_mb_ms": round(bare_bytes(big_calls, size) * 1e3, 1), "tensors_ms": round(tensor_s * 1e3, 1),
}))
"""


def runtimes() -> list[str]:
    info = subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"], capture_output=True, text=True, check=True).stdout
    return ["runc", *(["runsc"] if "runsc" in json.loads(info or "{}") else [])]


def measure(image: str, runtime: str, calls: int, big_calls: int, core: int) -> dict[str, float]:
    command = [
        "docker", "run", "--rm", "--network", "none", "--runtime", runtime, f"--cpuset-cpus={core}", "--memory", "2g",
        "--entrypoint", "/opt/venv/bin/python", image, "-c", PROBE, str(calls), str(big_calls),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the probe failed under {runtime}: {done.stderr[-2000:]}")
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> int:
    sys.path.insert(0, str(REPO_ROOT))
    from sandbox.build import ensure_image

    image = os.environ.get("ROUND_TRIPS_IMAGE") or ensure_image("cpu")
    calls = int(os.environ.get("ROUND_TRIPS_CALLS", 5000))
    big_calls = int(os.environ.get("ROUND_TRIPS_BIG_CALLS", 8))
    core = int(os.environ.get("ROUND_TRIPS_CORE", 1)) % (os.cpu_count() or 1)
    results: dict[str, Any] = {"image": image, "calls": calls, "big_calls": big_calls, "core": core}
    for runtime in runtimes():
        found = measure(image, runtime, calls, big_calls, core)
        results[f"{runtime}_bare_us"] = found["bare_us"]
        results[f"{runtime}_call_us"] = found["call_us"]
        results[f"{runtime}_call_vs_bare"] = round(found["call_us"] / found["bare_us"], 2)
        print(f"  {runtime:6s} bare round trip {found['bare_us']:7.1f} us   call {found['call_us']:7.1f} us   call/bare {results[f'{runtime}_call_vs_bare']:.2f}", flush=True)
        results["tensor_mib"] = found["mib"]
        results[f"{runtime}_bare_mb_ms"] = found["bare_mb_ms"]
        results[f"{runtime}_tensors_ms"] = found["tensors_ms"]
        results[f"{runtime}_tensors_vs_bare"] = round(found["tensors_ms"] / found["bare_mb_ms"], 2)
        print(
            f"  {runtime:6s} {found['mib']} MiB of raw bytes {found['bare_mb_ms']:7.1f} ms   as tensors in a call {found['tensors_ms']:7.1f} ms   "
            f"tensors/bare {results[f'{runtime}_tensors_vs_bare']:.2f}",
            flush=True,
        )
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"  written to bench/{RESULTS.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

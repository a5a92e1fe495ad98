"""Attack 3 needs a GPU: it runs where the host has one, or with DOJO_GPU_TESTS=1."""

from __future__ import annotations

import os
import textwrap

import pytest

from sandbox.runner import SandboxRunner

from .support import REFERENCE, Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.security]


def _has_gpu() -> bool:
    if os.environ.get("DOJO_GPU_TESTS") == "1":
        return True
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.mark.skipif(not _has_gpu(), reason="needs a GPU host (or DOJO_GPU_TESTS=1)")
def test_attack_3_gpu_memory_bomb() -> None:
    from sandbox.build import ensure_image

    sandbox = Sandbox(ensure_image("cuda"))
    sandbox.runner = SandboxRunner(sandbox.runner.image, gpu_enabled=True)
    free_memory = textwrap.dedent(
        """
        import torch

        def kv_cache_bytes(*args, **kwargs):
            free, total = torch.cuda.mem_get_info()
            raise RuntimeError(f"GPU free {free} of {total}")

        max_sequences = kv_cache_bytes
        """
    )
    before = sandbox.grade(free_memory, gpu=True, memory_mb=2048)
    graded = sandbox.grade(
        textwrap.dedent(
            """
            import torch

            def kv_cache_bytes(*args, **kwargs):
                hog = []
                while True:
                    hog.append(torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda"))

            max_sequences = kv_cache_bytes
            """
        ),
        gpu=True,
        memory_mb=2048,
    )
    # CUDA's OutOfMemoryError is the learner's error inside the job.
    assert graded.outcome in {"failed", "error"}, graded.describe()
    assert "OutOfMemoryError" in graded.everything() or "out of memory" in graded.everything()
    after = sandbox.grade(free_memory, gpu=True, memory_mb=2048)
    free_before = int(before.result.tests[0].message.split("GPU free ")[1].split()[0])
    free_after = int(after.result.tests[0].message.split("GPU free ")[1].split()[0])
    assert free_after >= free_before * 0.95, (free_before, free_after)
    correct = sandbox.grade(REFERENCE, gpu=True, memory_mb=2048)
    assert correct.outcome == "passed", correct.describe()

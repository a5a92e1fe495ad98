"""The cuda image variant: its tag names it, its wheelhouse asks for PyPI's CUDA torch, its smoke test wants a CUDA build."""

from __future__ import annotations

from sandbox.image.build import smoke_test_passes
from sandbox.image.tag import REQUIREMENTS, image_tag
from sandbox.image.wheelhouse import _pip_target_args, _torch_constraint, _torch_version


def test_each_variant_has_its_own_tag_that_names_it():
    cpu, cuda = image_tag("cpu"), image_tag("cuda")
    assert cpu.startswith("llm-dojo-sandbox:cpu-") and cuda.startswith("llm-dojo-sandbox:cuda-")
    assert cpu.split("-")[-1] != cuda.split("-")[-1]


def test_the_cuda_wheelhouse_pins_the_same_torch_without_the_cpu_label():
    version = _torch_version(REQUIREMENTS.read_text())
    assert version == "2.13.0"
    # `===` matches the exact string, so PyPI's CUDA build 2.13.0 and never the local 2.13.0+cpu.
    assert _torch_constraint("cuda", version) == "torch===2.13.0"
    assert _torch_constraint("cpu", version) == "torch==2.13.0+cpu"


def test_wheels_are_chosen_for_the_images_python_and_glibc_not_the_hosts():
    args = _pip_target_args()
    assert args[args.index("--python-version") + 1] == "3.11" and "--only-binary=:all:" in args
    # CUDA torch, triton and the nvidia-* libraries ship manylinux_2_28 wheels: the image's glibc 2.36 takes them.
    assert any(tag.startswith("manylinux_2_28_") for tag in args)


def test_the_smoke_test_tells_the_builds_apart():
    assert smoke_test_passes("cpu", "2.13.0+cpu", "")
    assert not smoke_test_passes("cpu", "2.13.0", "13.0")
    assert smoke_test_passes("cuda", "2.13.0", "13.0")
    assert not smoke_test_passes("cuda", "2.13.0+cpu", "")
    assert not smoke_test_passes("cuda", "2.13.0", "")  # a CPU-only build under a plain version

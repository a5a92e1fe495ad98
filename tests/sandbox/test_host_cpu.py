"""The grading host's CPU model, read by the worker for the speed boards (sandbox.host): one clean, capped line."""

from __future__ import annotations

from sandbox import host


def test_the_first_model_name_is_read_as_one_clean_line() -> None:
    text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD  EPYC 7B13\x00 64-Core\tProcessor\nprocessor\t: 1\nmodel name\t: other\n"
    assert host.cpu_model_from(text) == "AMD EPYC 7B13 64-Core Processor"


def test_an_arm_host_and_nothing_readable() -> None:
    assert host.cpu_model_from("processor\t: 0\nCPU part\t: 0xd0c\n") == "0xd0c"
    assert host.cpu_model_from("") == "" and host.cpu_model_from("model name\t:\n") == ""
    assert len(host.cpu_model_from("model name\t: " + "x" * 5000)) == host.MAX_CPU_TEXT


def test_this_host_has_a_model() -> None:
    assert host.cpu_model()  # /proc/cpuinfo of the machine the tests run on

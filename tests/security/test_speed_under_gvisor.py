"""The speed phase under gVisor (issue 60): no cgroup to read, so the wall clock, said as such.

Debian's runsc shows the container no ``/sys/fs/cgroup`` (``ls`` answers
"Invalid argument"; checked 2026-12-05), so the container's CPU time cannot
be read from outside the learner's process there. The phase then charges
each call its wall time, taken outside that process, and the result says
so: ``clock`` is ``wall`` and ``cpu_checked`` false, never a silent mix.
"""

from __future__ import annotations

import pytest

from .support import Sandbox
from .test_speed_cheats import FAST, SLOW, measure, speed_job

pytestmark = [pytest.mark.docker, pytest.mark.security, pytest.mark.gvisor]


def test_without_a_cgroup_the_phase_times_on_the_wall_clock_and_says_so(gvisor_sandbox: Sandbox) -> None:
    # A 1.5x pair, a target of 1.0: decided on the wall clock as on the CPU clock.
    _, facts = measure(gvisor_sandbox, speed_job(FAST, SLOW, 1.0))
    assert (facts.clock, facts.cpu_checked) == ("wall", False), facts
    assert facts.verdict in ("pass", "ambiguous"), facts
    assert (facts.device, facts.driver) == ("", ""), facts

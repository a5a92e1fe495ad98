"""Entry point of the learner process (run as the learner uid)."""

import sys

sys.path.insert(0, "/opt/harness")

from dojo_harness.learner import main

main(sys.argv)

"""Container entry point: the harness, started as root, drops to its own uid."""

import sys

sys.path.insert(0, "/opt/harness")

from dojo_harness.main import main

sys.exit(main())

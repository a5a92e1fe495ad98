"""Remove sandbox containers that nobody will read again (a crashed worker's)."""

from __future__ import annotations

from datetime import UTC, datetime

import docker

from .container import LABEL
from .pool import POOL_LABEL

# A pre-started container older than this is replaced (its harness exits by
# itself a minute later if nobody took it).
POOL_MAX_IDLE_S = 600.0
EXITED_GRACE_S = 120.0


def remove_stale_containers(max_age_s: float = 600, pool_owner_prefix: str = "") -> int:
    """Remove sandbox containers left by a crashed worker; returns how many.

    A job's container older than ``max_age_s`` is dead by construction (every
    job ends before the hard limit). A pre-started pool container is removed
    when it has exited, when it is older than the pool's idle limit, or when
    it belongs to ``pool_owner_prefix`` (a worker of that name starting over).
    """
    client = docker.from_env(timeout=30)
    removed = 0
    now = datetime.now(UTC)
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        created_text = str(container.attrs.get("Created", "")).split(".")[0].rstrip("Z")
        try:
            age = (now - datetime.fromisoformat(created_text).replace(tzinfo=UTC)).total_seconds()
        except ValueError:
            age = max_age_s + 1
        owner = (container.labels or {}).get(POOL_LABEL)
        if owner is None:
            # An exited job container is garbage once its runner had time to
            # read it (a worker killed mid-job leaves one behind).
            stale = age > max_age_s or (container.status == "exited" and age > EXITED_GRACE_S)
        else:
            stale = container.status != "running" or age > POOL_MAX_IDLE_S + 120 or bool(pool_owner_prefix and owner.startswith(pool_owner_prefix))
        if stale:
            container.remove(force=True)
            removed += 1
    return removed

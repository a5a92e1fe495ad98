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


def _seconds_since(text: object, now: datetime) -> float | None:
    """Seconds since Docker's ISO timestamp ``text``; None when it is unset or unreadable."""
    stamp = str(text or "").split(".")[0].rstrip("Z")
    if not stamp or stamp.startswith("0001-"):
        return None
    try:
        return (now - datetime.fromisoformat(stamp).replace(tzinfo=UTC)).total_seconds()
    except ValueError:
        return None


def remove_stale_containers(max_age_s: float = 600, pool_owner_prefix: str = "") -> int:
    """Remove sandbox containers left by a crashed worker; returns how many.

    A job's container older than ``max_age_s`` is dead by construction (every
    job ends before the hard limit). A pre-started pool container is removed
    when it has exited, when it is older than the pool's idle limit, or when
    it belongs to ``pool_owner_prefix`` (a worker of that name starting over).
    An exited container is left alone for ``EXITED_GRACE_S`` after it
    exited, whoever owns it: its runner may still be reading its output
    (another worker on the same engine must not take that from it).
    """
    client = docker.from_env(timeout=30)
    removed = 0
    now = datetime.now(UTC)
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        age = _seconds_since(container.attrs.get("Created"), now)
        if age is None:
            age = max_age_s + 1
        exited_for = _seconds_since((container.attrs.get("State") or {}).get("FinishedAt"), now)
        # An exited container is garbage once its runner had time to read it
        # (a worker killed mid-job leaves one behind).
        exited_long_ago = container.status == "exited" and (exited_for is None or exited_for > EXITED_GRACE_S)
        owner = (container.labels or {}).get(POOL_LABEL)
        if owner is None:
            stale = age > max_age_s or exited_long_ago
        else:
            mine = bool(pool_owner_prefix and owner.startswith(pool_owner_prefix))
            # A worker starting over removes everything of its previous
            # life; another worker's containers go only when they are
            # abandoned (exited long ago, never started, or past idle age).
            stale = (
                mine
                or exited_long_ago
                or (container.status not in {"running", "exited"} and age > EXITED_GRACE_S)
                or age > POOL_MAX_IDLE_S + 120
            )
        if stale:
            container.remove(force=True)
            removed += 1
    return removed

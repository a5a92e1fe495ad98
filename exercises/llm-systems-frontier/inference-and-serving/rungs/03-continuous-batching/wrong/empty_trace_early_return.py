"""Static vs continuous batching."""

from __future__ import annotations

FIELDS = ("arrival", "prompt", "output")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _validate(requests, max_slots, kv_budget, policy):
    if not _is_int(max_slots) or max_slots <= 0:
        raise ValueError("max_slots must be a positive int")
    if not _is_int(kv_budget) or kv_budget <= 0:
        raise ValueError("kv_budget must be a positive int")
    if policy not in ("continuous", "static"):
        raise ValueError(f"unknown policy {policy!r}")
    seen = set()
    for r in requests:
        for f in FIELDS:
            if not _is_int(r[f]) or r[f] < 0:
                raise ValueError(f"request {r['id']!r}: {f} must be a non-negative int")
        if r["id"] in seen:
            raise ValueError(f"duplicate id {r['id']!r}")
        seen.add(r["id"])
        if r["prompt"] + r["output"] > kv_budget:
            raise ValueError(f"request {r['id']!r} can never fit the budget")


def simulate_batching(requests: list[dict], max_slots: int, kv_budget: int, policy: str = "continuous") -> dict:
    if not requests:
        return {"steps": 0, "generated_tokens": 0, "throughput": 0.0, "finish": {}, "latency": {}}
    _validate(requests, max_slots, kv_budget, policy)
    queue = sorted(requests, key=lambda r: r["arrival"])
    finish: dict = {}
    steps = 0
    t = 0
    head = 0

    def admit(now, running_count, reserved):
        """Admit from the head while possible; returns the admitted requests."""
        nonlocal head
        admitted = []
        while head < len(queue):
            r = queue[head]
            need = r["prompt"] + r["output"]
            if r["arrival"] > now or running_count >= max_slots or reserved + need > kv_budget:
                break
            admitted.append(r)
            head += 1
            if policy == "continuous" and r["output"] == 0:
                finish[r["id"]] = now  # releases its slot at once
                continue
            running_count += 1
            reserved += need
        return admitted

    if policy == "continuous":
        running: list = []  # (finish_time, request)
        while head < len(queue) or running:
            running = [(f, r) for f, r in running if f > t]
            reserved = sum(r["prompt"] + r["output"] for _, r in running)
            for r in admit(t, len(running), reserved):
                if r["output"] > 0:
                    finish[r["id"]] = t + r["output"]
                    running.append((t + r["output"], r))
            if running:
                steps += 1
                t += 1
            elif head < len(queue):
                t = max(t, queue[head]["arrival"])
    else:
        while head < len(queue):
            batch = admit(t, 0, 0)
            if not batch:
                t = max(t, queue[head]["arrival"])
                continue
            longest = max(r["output"] for r in batch)
            for r in batch:
                finish[r["id"]] = t + r["output"]
            steps += longest
            t += longest

    generated = sum(r["output"] for r in requests)
    return {
        "steps": steps,
        "generated_tokens": generated,
        "throughput": generated / steps if steps else 0.0,
        "finish": finish,
        "latency": {r["id"]: finish[r["id"]] - r["arrival"] for r in requests},
    }

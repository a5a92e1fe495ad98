"""Correct, written from the instructions alone: event-driven, jumping from
one admission or finish time to the next instead of stepping, with steps
counted as the union of the intervals in which someone generates."""

from __future__ import annotations


def _is_count(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def simulate_batching(requests: list[dict], max_slots: int, kv_budget: int, policy: str = "continuous") -> dict:
    if not _is_count(max_slots, 1) or not _is_count(kv_budget, 1):
        raise ValueError("max_slots and kv_budget must be positive ints")
    if not isinstance(policy, str) or policy not in {"continuous", "static"}:
        raise ValueError("unknown policy")
    ids = [r["id"] for r in requests]
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique")
    for r in requests:
        if not all(_is_count(r[key], 0) for key in ("arrival", "prompt", "output")):
            raise ValueError("arrival, prompt and output must be non-negative ints")
        if r["prompt"] + r["output"] > kv_budget:
            raise ValueError("a request needs more than the whole budget")

    order = sorted(range(len(requests)), key=lambda i: requests[i]["arrival"])
    head = 0
    holders: list[tuple[int, int]] = []  # (end time, reservation)
    finish: dict = {}
    busy: list[tuple[int, int]] = []  # [start, end) intervals with generation
    now = 0
    while head < len(order) or holders:
        if policy == "continuous":
            holders = [(end, need) for end, need in holders if end > now]
        elif holders and max(end for end, _ in holders) <= now:
            holders = []
        can_admit = policy == "continuous" or not holders
        batch_started = False
        while can_admit and head < len(order):
            r = requests[order[head]]
            need = r["prompt"] + r["output"]
            if r["arrival"] > now or len(holders) >= max_slots or sum(n for _, n in holders) + need > kv_budget:
                break
            head += 1
            batch_started = True
            finish[r["id"]] = now + r["output"]
            if r["output"] > 0:
                busy.append((now, now + r["output"]))
            if r["output"] > 0 or policy == "static":
                holders.append((now + r["output"], need))
        if policy == "static" and batch_started and max(end for end, _ in holders) == now:
            holders = []
            continue
        # Next event: the earliest finish of a holder, or the queue head's arrival when nothing runs.
        future = [end for end, _ in holders if end > now]
        if head < len(order) and requests[order[head]]["arrival"] > now:
            future.append(requests[order[head]]["arrival"])
        if policy == "static" and holders:
            now = max(end for end, _ in holders)
        elif future:
            now = min(future)
        elif head < len(order):
            now = max(now, requests[order[head]]["arrival"])
        else:
            break
    steps = 0
    covered_until = -1
    for start, end in sorted(busy):
        start = max(start, covered_until)
        if end > start:
            steps += end - start
            covered_until = end
    generated = sum(r["output"] for r in requests)
    return {
        "steps": steps,
        "generated_tokens": generated,
        "throughput": generated / steps if steps else 0.0,
        "finish": finish,
        "latency": {r["id"]: finish[r["id"]] - r["arrival"] for r in requests},
    }

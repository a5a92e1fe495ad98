"""Wrong solution: admits at most one request at the start of each step."""

from __future__ import annotations

from collections import deque

POLICIES = ("static", "continuous")


def _non_negative_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _validate(requests: list[dict], max_slots: int, kv_budget: int, policy: str) -> None:
    _positive_int(max_slots, "max_slots")
    _positive_int(kv_budget, "kv_budget")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    seen = set()
    for r in requests:
        if r["id"] in seen:
            raise ValueError(f"duplicate request id {r['id']!r}")
        seen.add(r["id"])
        for key in ("arrival", "prompt", "output"):
            _non_negative_int(r[key], f"request {r['id']!r}: {key}")
        if r["prompt"] + r["output"] > kv_budget:
            raise ValueError(f"request {r['id']!r} needs {r['prompt'] + r['output']} KV tokens, more than the budget {kv_budget}")


def simulate_batching(requests: list[dict], max_slots: int, kv_budget: int, policy: str = "continuous") -> dict:
    """Simulate a serving loop; see the instructions for the exact step rules."""
    _validate(requests, max_slots, kv_budget, policy)
    # FIFO queue: by arrival step, ties by position in the list.
    queue = deque(sorted(range(len(requests)), key=lambda i: (requests[i]["arrival"], i)))
    finish: dict[str, int] = {}
    running: dict[int, int] = {}  # index -> tokens still to generate
    held_slots = 0
    reserved = 0  # KV tokens reserved: prompt + output of every slot holder
    t = 0
    steps = 0

    def head_fits() -> bool:
        r = requests[queue[0]]
        return r["arrival"] <= t and held_slots < max_slots and reserved + r["prompt"] + r["output"] <= kv_budget

    while queue or running:
        if policy == "continuous":
            if queue and head_fits():
                i = queue.popleft()
                r = requests[i]
                if r["output"] == 0:
                    finish[r["id"]] = t  # done at admission: slot and budget released at once
                    continue
                running[i] = r["output"]
                held_slots += 1
                reserved += r["prompt"] + r["output"]
            if not running:
                if queue:
                    t = max(t, requests[queue[0]]["arrival"])  # idle until the next arrival
                continue
            steps += 1
            for i in list(running):
                running[i] -= 1
                if running[i] == 0:
                    del running[i]
                    r = requests[i]
                    finish[r["id"]] = t + 1
                    held_slots -= 1
                    reserved -= r["prompt"] + r["output"]
            t += 1
        else:  # static: form a batch, run it until its longest member ends
            batch = []
            while queue and head_fits():
                r = requests[queue.popleft()]
                batch.append(r)
                held_slots += 1
                reserved += r["prompt"] + r["output"]
            if not batch:
                t = max(t, requests[queue[0]]["arrival"])
                continue
            longest = max(r["output"] for r in batch)
            for r in batch:
                finish[r["id"]] = t + r["output"]
            steps += longest
            t += longest
            held_slots = 0
            reserved = 0

    generated = sum(r["output"] for r in requests)
    return {
        "steps": steps,
        "generated_tokens": generated,
        "throughput": generated / steps if steps else 0.0,
        "finish": finish,
        "latency": {r["id"]: finish[r["id"]] - r["arrival"] for r in requests},
    }

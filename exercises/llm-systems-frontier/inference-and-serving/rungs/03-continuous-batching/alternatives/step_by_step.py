"""Correct, written from the instructions alone: a clock that advances one
step at a time (jumping over idle time), a deque for the queue, and the
bad-input checks in another order than the rules list them."""

from __future__ import annotations

from collections import deque


def _non_negative(value: object) -> bool:
    return type(value) is int and value >= 0


def _check(requests: list[dict], max_slots: object, kv_budget: object, policy: object) -> None:
    if policy not in ("continuous", "static") or type(policy) is not str:
        raise ValueError("policy must be 'continuous' or 'static'")
    for value in (max_slots, kv_budget):
        if type(value) is not int or value <= 0:
            raise ValueError("max_slots and kv_budget must be positive ints")
    seen = set()
    for request in requests:
        for key in ("arrival", "prompt", "output"):
            if not _non_negative(request[key]):
                raise ValueError(f"{key} must be a non-negative int")
        if request["prompt"] + request["output"] > kv_budget:  # type: ignore[operator]
            raise ValueError("request larger than the whole budget")
        if request["id"] in seen:
            raise ValueError("duplicate id")
        seen.add(request["id"])


def simulate_batching(requests: list[dict], max_slots: int, kv_budget: int, policy: str = "continuous") -> dict:
    _check(requests, max_slots, kv_budget, policy)
    queue = deque(sorted(({"id": r["id"], "arrival": r["arrival"], "prompt": r["prompt"], "output": r["output"]} for r in requests),
                         key=lambda r: r["arrival"]))
    finish: dict = {}
    running: list[dict] = []  # each with "end"
    reserved = 0
    time = 0
    steps = 0

    def admit(now: int) -> None:
        nonlocal reserved
        while queue:
            head = queue[0]
            need = head["prompt"] + head["output"]
            if head["arrival"] > now or len(running) >= max_slots or reserved + need > kv_budget:
                return
            queue.popleft()
            head["end"] = now + head["output"]
            running.append(head)
            reserved += need
            finish[head["id"]] = head["end"]
            if policy == "continuous" and head["output"] == 0:
                running.remove(head)
                reserved -= need

    while queue or running:
        if policy == "continuous":
            for r in [r for r in running if r["end"] <= time]:
                running.remove(r)
                reserved -= r["prompt"] + r["output"]
            admit(time)
        else:
            if running and max(r["end"] for r in running) <= time:
                running.clear()
                reserved = 0
            if not running:
                admit(time)
                if running and max(r["end"] for r in running) <= time:
                    continue  # a batch of zero outputs ends at once
        if any(r["end"] > time for r in running):
            steps += 1
            time += 1
        elif queue and not running:
            time = max(time, queue[0]["arrival"])
        elif not queue and not running:
            break
        else:
            time += 1 if running else 0
    generated = sum(r["output"] for r in requests)
    return {
        "steps": steps,
        "generated_tokens": generated,
        "throughput": generated / steps if steps else 0.0,
        "finish": finish,
        "latency": {r["id"]: finish[r["id"]] - r["arrival"] for r in requests},
    }

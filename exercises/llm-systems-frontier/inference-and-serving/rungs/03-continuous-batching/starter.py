"""Static vs continuous batching.

Write simulate_batching following the step rules in the instructions.
"""

from __future__ import annotations


def simulate_batching(requests: list[dict], max_slots: int, kv_budget: int, policy: str = "continuous") -> dict:
    """Simulate serving `requests` and return the measurements.

    requests: dicts with keys "id" (str), "arrival" (step), "prompt"
        (prompt tokens) and "output" (tokens to generate).
    max_slots: how many requests may hold a slot at once.
    kv_budget: KV tokens that all slot holders together may reserve; a
        request reserves prompt + output tokens while it holds a slot.
    policy: "continuous" or "static".

    Returns {"steps": int, "generated_tokens": int, "throughput": float,
             "finish": {id: time}, "latency": {id: finish - arrival}}.
    Raises ValueError on bad input (see the instructions).
    """
    raise NotImplementedError

"""Pipeline schedules: per-stage deques of operation names, dependencies looked up in per-slot snapshots, the bubble as an exact fraction."""

from collections import deque
from fractions import Fraction

SCHEDULES = ("gpipe", "1f1b")


def _positive(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


def bubble_fraction(stages: int, micro_batches: int) -> float:
    _positive(micro_batches, "micro_batches")
    _positive(stages, "stages")
    return float(Fraction(stages - 1, micro_batches + stages - 1))


def _names(stage, stages, micro_batches, schedule):
    if schedule == "gpipe":
        return [f"F{i}" for i in range(micro_batches)] + [f"B{i}" for i in range(micro_batches)]
    warmup = min(stages - 1 - stage, micro_batches)
    names = [f"F{i}" for i in range(warmup)]
    for j in range(micro_batches - warmup):
        names += [f"F{warmup + j}", f"B{j}"]
    return names + [f"B{i}" for i in range(micro_batches - warmup, micro_batches)]


def simulate_pipeline(stages: int, micro_batches: int, schedule: str) -> dict:
    _positive(stages, "stages")
    _positive(micro_batches, "micro_batches")
    if schedule not in SCHEDULES or type(schedule) is not str:
        raise ValueError(f"schedule must be 'gpipe' or '1f1b', got {schedule!r}")
    queues = [deque(_names(s, stages, micro_batches, schedule)) for s in range(stages)]
    done = [set() for _ in range(stages)]  # names finished on each stage before the current slot
    timeline = [[] for _ in range(stages)]
    in_flight = [0] * stages
    peak = [0] * stages
    while any(queues):
        ran = []
        for s, queue in enumerate(queues):
            name = queue[0] if queue else None
            if name is None:
                timeline[s].append("")
                continue
            if name[0] == "F":
                ready = s == 0 or name in done[s - 1]
            else:
                ready = s == stages - 1 or name in done[s + 1]
            if not ready:
                timeline[s].append("")
                continue
            queue.popleft()
            timeline[s].append(name)
            ran.append((s, name))
            in_flight[s] += 1 if name[0] == "F" else -1
            if in_flight[s] > peak[s]:
                peak[s] = in_flight[s]
        for s, name in ran:
            done[s].add(name)
    total = len(timeline[0])
    idle = sum(row.count("") for row in timeline)
    return {"timeline": timeline, "total_slots": total, "bubble_fraction": float(Fraction(idle, stages * total)), "peak_in_flight": peak}

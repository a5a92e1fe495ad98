"""Reference solution: simulate GPipe and 1F1B pipeline schedules."""

from __future__ import annotations

SCHEDULES = ("gpipe", "1f1b")


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def bubble_fraction(stages: int, micro_batches: int) -> float:
    """Idle share of a pipeline step: (p - 1) / (m + p - 1)."""
    stages = _positive_int(stages, "stages")
    micro_batches = _positive_int(micro_batches, "micro_batches")
    return (stages - 1) / (micro_batches + stages - 1)


def stage_order(stage: int, stages: int, micro_batches: int, schedule: str) -> list[tuple[str, int]]:
    """The operations one stage runs, in order: ("F", i) or ("B", i)."""
    if schedule == "gpipe":
        return [("F", i) for i in range(micro_batches)] + [("B", i) for i in range(micro_batches)]
    warmup = min(stages - 1 - stage, micro_batches)
    order = [("F", i) for i in range(warmup)]
    for i in range(micro_batches - warmup):
        order += [("F", warmup + i), ("B", i)]
    order += [("B", i) for i in range(micro_batches - warmup, micro_batches)]
    return order


def simulate_pipeline(stages: int, micro_batches: int, schedule: str) -> dict:
    """Run the schedule slot by slot; every forward and backward takes one slot."""
    stages = _positive_int(stages, "stages")
    micro_batches = _positive_int(micro_batches, "micro_batches")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    orders = [stage_order(s, stages, micro_batches, schedule) for s in range(stages)]
    position = [0] * stages
    finished: set[tuple[str, int, int]] = set()  # (kind, micro-batch, stage), done in an earlier slot
    timeline: list[list[str]] = [[] for _ in range(stages)]
    in_flight = [0] * stages
    peak = [0] * stages
    while any(position[s] < len(orders[s]) for s in range(stages)):
        done_now = []
        for s in range(stages):
            if position[s] == len(orders[s]):
                timeline[s].append("")
                continue
            kind, i = orders[s][position[s]]
            if kind == "F":
                ready = s == 0 or ("F", i, s - 1) in finished
            else:
                ready = s == stages - 1 or ("B", i, s + 1) in finished
            if not ready:
                timeline[s].append("")
                continue
            timeline[s].append(f"{kind}{i}")
            done_now.append((kind, i, s))
            position[s] += 1
            in_flight[s] += 1 if kind == "F" else -1
            peak[s] = max(peak[s], in_flight[s])
        finished.update(done_now)  # visible to the other stages from the next slot on
    total = len(timeline[0])
    idle = sum(row.count("") for row in timeline)
    return {"timeline": timeline, "total_slots": total, "bubble_fraction": idle / (stages * total), "peak_in_flight": peak}

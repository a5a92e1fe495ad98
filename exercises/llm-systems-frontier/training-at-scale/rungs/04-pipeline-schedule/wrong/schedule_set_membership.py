"""Wrong solution: checks the schedule with set membership, so a list for a schedule raises TypeError instead of ValueError."""

from __future__ import annotations


def _check_pos_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _check_schedule(schedule):
    if schedule not in {"gpipe", "1f1b"}:
        raise ValueError(f"schedule must be 'gpipe' or '1f1b', got {schedule!r}")


def bubble_fraction(stages: int, micro_batches: int) -> float:
    _check_pos_int(stages, "stages")
    _check_pos_int(micro_batches, "micro_batches")
    p, m = stages, micro_batches
    return float((p - 1) / (m + p - 1))


def _operations(p, m, s, schedule):
    if schedule == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    w = min(p - 1 - s, m)
    ops = [("F", i) for i in range(w)]
    for j in range(m - w):
        ops.append(("F", w + j))
        ops.append(("B", j))
    ops.extend(("B", i) for i in range(m - w, m))
    return ops


def simulate_pipeline(stages: int, micro_batches: int, schedule: str) -> dict:
    _check_pos_int(stages, "stages")
    _check_pos_int(micro_batches, "micro_batches")
    _check_schedule(schedule)
    p, m = stages, micro_batches
    lists = [_operations(p, m, s, schedule) for s in range(p)]
    pos = [0] * p
    finished = {}  # (kind, micro-batch, stage) -> slot in which it ran
    timeline = [[] for _ in range(p)]
    in_flight = [0] * p
    peak = [0] * p
    t = 0
    while any(pos[s] < len(lists[s]) for s in range(p)):
        ran = []
        for s in range(p):
            if pos[s] >= len(lists[s]):
                timeline[s].append("")
                continue
            kind, i = lists[s][pos[s]]
            if kind == "F":
                dep = None if s == 0 else ("F", i, s - 1)
            else:
                dep = None if s == p - 1 else ("B", i, s + 1)
            if dep is None or (dep in finished and finished[dep] < t):
                ran.append((s, kind, i))
                timeline[s].append(f"{kind}{i}")
            else:
                timeline[s].append("")
        if not ran:
            raise RuntimeError("the schedule deadlocked")
        for s, kind, i in ran:
            finished[(kind, i, s)] = t
            pos[s] += 1
            in_flight[s] += 1 if kind == "F" else -1
        for s in range(p):
            peak[s] = max(peak[s], in_flight[s])
        t += 1
    idle = sum(cell == "" for row in timeline for cell in row)
    return {
        "timeline": timeline,
        "total_slots": t,
        "bubble_fraction": idle / (p * t),
        "peak_in_flight": peak,
    }

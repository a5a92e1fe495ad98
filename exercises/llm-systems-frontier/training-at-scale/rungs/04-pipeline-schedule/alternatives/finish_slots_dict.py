"""Pipeline schedules: the slot each operation finished in kept in a dict, operations as (kind, micro-batch) pairs."""


def _check_sizes(stages, micro_batches):
    for name, value in (("stages", stages), ("micro_batches", micro_batches)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def bubble_fraction(stages, micro_batches):
    _check_sizes(stages, micro_batches)
    return (stages - 1) / (micro_batches + stages - 1)


def _operations(stage, p, m, schedule):
    if schedule == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    w = min(p - 1 - stage, m)
    ops = [("F", i) for i in range(w)]
    for j in range(m - w):
        ops.append(("F", w + j))
        ops.append(("B", j))
    ops.extend(("B", i) for i in range(m - w, m))
    return ops


def simulate_pipeline(stages, micro_batches, schedule):
    # The schedule first: an independent check, in another order than the rules list them.
    if not isinstance(schedule, str) or schedule not in {"gpipe", "1f1b"}:
        raise ValueError(f"unknown schedule {schedule!r}")
    _check_sizes(stages, micro_batches)
    p, m = stages, micro_batches
    ops = [_operations(s, p, m, schedule) for s in range(p)]
    next_op = [0] * p
    finished_in = {}  # (kind, micro-batch, stage) -> slot
    rows = [[] for _ in range(p)]
    held = [0] * p
    peak = [0] * p
    slot = 0
    while any(next_op[s] < len(ops[s]) for s in range(p)):
        for s in range(p):
            if next_op[s] >= len(ops[s]):
                rows[s].append("")
                continue
            kind, i = ops[s][next_op[s]]
            needed = None
            if kind == "F" and s > 0:
                needed = ("F", i, s - 1)
            elif kind == "B" and s < p - 1:
                needed = ("B", i, s + 1)
            if needed is not None and finished_in.get(needed, slot) >= slot:
                rows[s].append("")
                continue
            rows[s].append(kind + str(i))
            finished_in[(kind, i, s)] = slot
            next_op[s] += 1
            held[s] += 1 if kind == "F" else -1
            peak[s] = max(peak[s], held[s])
        slot += 1
    idle = sum(cell == "" for row in rows for cell in row)
    return {"timeline": rows, "total_slots": slot, "bubble_fraction": idle / (p * slot), "peak_in_flight": peak}

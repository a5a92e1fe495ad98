"""How long a similarity report's comparison takes (courses/similarity.py), without the database.

Usage (from the repository root)::

    .venv/bin/python -m bench.similarity [--learners 100] [--lines 60] [--rounds 3]

Synthetic solutions of ``--lines`` lines each (random torch-like statements,
so that independent ones share little), a tenth of them near-copies of
another (names changed), against a starter of a few lines; then
``compare_learners`` as the report's task runs it: fingerprints and every
pair. Prints the median of ``--rounds`` runs, the pairs found and the load
average, and with ``--worst`` also the bound the task is sized for:
SIMILARITY_MAX_LEARNERS learners of SIMILARITY_MAX_CODE_CHARS characters.
Figures taken while other work loads the machine are not for the record.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

STARTER = "import torch\n\n\ndef solve(q, k, v, mask=None):\n    raise NotImplementedError\n"
OPS = (
    "torch.matmul({a}, {b})", "{a}.softmax(-1)", "{a} * {n}", "{a} + {b}", "torch.cat([{a}, {b}], dim={d})", "{a}.view({n}, -1)",
    "{a}.transpose({d}, -1)", "torch.where({a} > {n}, {a}, {b})", "{a}.sum(dim={d}, keepdim=True)", "max({a}, {n})",
)


def synthetic_solution(rng: random.Random, lines: int) -> str:
    out = ["import torch", "", "", "def solve(q, k, v, mask=None):"]
    names = ["q", "k", "v"]
    for index in range(lines - 5):
        op = rng.choice(OPS).format(a=rng.choice(names), b=rng.choice(names), n=rng.randint(1, 99), d=rng.randint(0, 3))
        if rng.random() < 0.2:
            out += [f"    if {rng.choice(names)}.shape[0] > {rng.randint(1, 9)}:", f"        x{index} = {op}"]
        else:
            out.append(f"    x{index} = {op}")
        names.append(f"x{index}")
    out.append(f"    return {names[-1]}")
    return "\n".join(out) + "\n"


def run(learner_count: int, lines: int, rounds: int, chars: int | None = None) -> None:
    from courses.similarity import Learner, compare_learners

    rng = random.Random(57)
    codes = [synthetic_solution(rng, lines) for _ in range(learner_count)]
    for index in range(0, learner_count - 1, 10):  # a tenth are near-copies
        codes[index + 1] = codes[index].replace("x1", "y1").replace("x2", "zz2")
    if chars is not None:
        codes = [code[:chars] for code in codes]
    learners = [Learner(index + 1, index + 1, 1, code) for index, code in enumerate(codes)]
    times, found = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        found = len(compare_learners(learners, [STARTER], 0.6, stop_at=float("inf")))
        times.append(time.perf_counter() - start)
    average = sum(len(code.splitlines()) for code in codes) / len(codes)
    print(f"{learner_count} learners x {average:.0f} lines ({sum(map(len, codes)) // len(codes)} chars): "
          f"median {statistics.median(times):.2f} s of {rounds} (min {min(times):.2f}, max {max(times):.2f}); {found} pairs >= 0.6")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--lines", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worst", action="store_true", help="also the task's bound: the most learners, the longest code")
    args = parser.parse_args()
    sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "platform")]
    os.environ.setdefault("SECRET_KEY", "bench-similarity")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from courses.similarity import SIMILARITY_MAX_CODE_CHARS, SIMILARITY_MAX_LEARNERS

    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}, {os.cpu_count()} CPUs")
    run(args.learners, args.lines, args.rounds)
    if args.worst:
        run(SIMILARITY_MAX_LEARNERS, SIMILARITY_MAX_CODE_CHARS // 30, 1, chars=SIMILARITY_MAX_CODE_CHARS)


if __name__ == "__main__":
    main()

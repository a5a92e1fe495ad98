"""Answering a calculator question: pick the module's calculators, read the
question, compute, and write the working as Markdown (rendered like the
module pages)."""

from __future__ import annotations

from dataclasses import dataclass

from core.write_guard import outside_write_transaction
from exercises.models import Module

from .memory import Working, kv_cache, weights, zero
from .parse import CalculatorKind, Request, parse_question
from .table import load_table

# Calculators each module offers, by the module's catalog id (module.yaml `id`).
# Module 02 ("Training at scale") gets the ZeRO calculator as soon as a module
# with that id is loaded.
CALCULATORS: dict[str, tuple[str, ...]] = {
    "P10.llm-systems-frontier.01": (CalculatorKind.KV_CACHE, CalculatorKind.WEIGHTS),
    "P10.llm-systems-frontier.02": (CalculatorKind.ZERO, CalculatorKind.WEIGHTS),
}

_COMPUTE = {CalculatorKind.KV_CACHE: kv_cache, CalculatorKind.WEIGHTS: weights, CalculatorKind.ZERO: zero}


@dataclass(frozen=True)
class CalculatorAnswer:
    kind: str
    markdown: str
    total_bytes: int | None  # None when the question lacked something

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "total_bytes": self.total_bytes}


def module_calculators(module: Module) -> tuple[str, ...]:
    return CALCULATORS.get(module.external_id, ())


def _missing_markdown(request: Request) -> str:
    known = ", ".join(model.name for model in load_table())
    lines = ["To work this out I need " + " and ".join(request.missing) + "."]
    if request.model is None and request.kind == CalculatorKind.KV_CACHE:
        lines.append(f"Models I know: {known}.")
    return "\n\n".join(lines)


def working_markdown(work: Working, assumed: list[str]) -> str:
    parts = [f"**{work.title}**", ""]
    if assumed:
        parts += ["Assuming " + "; ".join(assumed) + ".", ""]
    parts += [f"{n}. {step}" for n, step in enumerate(work.steps, start=1)]
    parts += ["", f"**{work.result}**"]
    for note in work.notes:
        parts += ["", note]
    if work.sources:
        parts += ["", "Sources: " + ", ".join(f"[{title}]({url})" for title, url in work.sources) + "."]
    return "\n".join(parts)


@outside_write_transaction
def calculate(module: Module, question: str) -> CalculatorAnswer | None:
    """The calculator answer to ``question`` in ``module``, or None when it asks for no arithmetic."""
    kinds = module_calculators(module)
    if not kinds:
        return None
    request = parse_question(question, kinds)
    if request is None:
        return None
    if request.missing:
        return CalculatorAnswer(request.kind, _missing_markdown(request), None)
    work = _COMPUTE[request.kind](request)
    return CalculatorAnswer(request.kind, working_markdown(work, request.assumed), work.total_bytes)

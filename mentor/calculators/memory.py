"""The arithmetic, kept step by step so the answer can show its working.

Byte counts are exact (``Fraction``: an int4 element is half a byte); a
per-GPU share that does not divide evenly is shown exactly and rounded up
to whole bytes for the total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from .parse import DTYPES, Request
from .table import ModelConfig

X = "\N{MULTIPLICATION SIGN}"
GIB = 1024**3
GB = 1000**3

# Mixed-precision Adam, as in the ZeRO paper (Rajbhandari et al., 2020,
# section 3.1): half-precision weights and gradients, and an fp32 master copy
# of the weights plus Adam's two moments: 4 + 4 + 4 bytes per parameter.
ZERO_WEIGHT_BYTES = 2
ZERO_GRADIENT_BYTES = 2
ZERO_OPTIMIZER_BYTES = 12
ZERO_SOURCE = "https://arxiv.org/abs/1910.02054"


@dataclass
class Working:
    """A calculation's steps (Markdown-free sentences) and its result in bytes."""

    title: str
    steps: list[str] = field(default_factory=list)
    total_bytes: int = 0
    result: str = ""
    notes: list[str] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)


def grouped(value: int | Fraction) -> str:
    """12345678 -> "12,345,678"; a fraction keeps its exact decimals (0.5 -> "0.5")."""
    if isinstance(value, Fraction) and value.denominator != 1:
        whole, rest = divmod(value, 1)
        decimals = str(float(rest))[1:] if (rest * 1000).denominator == 1 else f" {rest.numerator}/{rest.denominator}"
        return f"{int(whole):,}{decimals}"
    return f"{int(value):,}"


def sizes(total: int) -> str:
    """A byte count in bytes, then GiB (2^30) and GB (10^9), or MiB and MB below a GiB."""
    if total < GIB:
        return f"{total:,} bytes = {total / 1024**2:,.2f} MiB = {total / 1000**2:,.2f} MB"
    return f"{total:,} bytes = {total / GIB:,.2f} GiB = {total / GB:,.2f} GB"


def _model_line(model: ModelConfig) -> str:
    head_dim = model.effective_head_dim
    where = (
        f"head_dim {head_dim} is given in the config (hidden / heads would be {model.hidden // model.heads})"
        if model.head_dim is not None and model.hidden % model.heads == 0
        else (f"head_dim {head_dim} is given in the config" if model.head_dim is not None else f"head_dim = hidden / heads = {model.hidden:,} / {model.heads} = {head_dim}")
    )
    return (
        f"{model.name}: {model.layers} layers, {model.heads} query heads, {model.kv_heads} key/value "
        f"head{'s' if model.kv_heads > 1 else ''} ({model.attention_kind}); {where}."
    )


def kv_cache(request: Request) -> Working:
    model = request.model
    assert model is not None and request.tokens and request.batch and request.dtype
    element = DTYPES[request.dtype]
    head_dim = model.effective_head_dim
    work = Working(f"KV cache of {model.name}, {request.tokens:,} tokens, batch {request.batch}, {request.dtype}")
    work.steps.append(_model_line(model))
    per_token_layer = 2 * model.kv_heads * head_dim
    work.steps.append(
        f"Each layer stores a key and a value vector per key/value head for every token: "
        f"2 {X} {model.kv_heads} {X} {head_dim} = {per_token_layer:,} elements per token per layer."
    )
    per_token = per_token_layer * model.layers
    work.steps.append(f"Over {model.layers} layers: {per_token_layer:,} {X} {model.layers} = {per_token:,} elements per token.")
    per_token_bytes = per_token * element
    work.steps.append(f"At {request.dtype} ({grouped(element)} byte{'s' if element != 1 else ''} per element): {per_token:,} {X} {grouped(element)} = {grouped(per_token_bytes)} bytes per token.")
    total = per_token_bytes * request.tokens * request.batch
    work.steps.append(f"For {request.tokens:,} tokens {X} batch {request.batch}: {grouped(per_token_bytes)} {X} {request.tokens:,} {X} {request.batch} = {grouped(total)} bytes.")
    work.total_bytes = math.ceil(total)
    work.result = f"The KV cache takes {sizes(work.total_bytes)}."
    if request.tokens_text and "k" in request.tokens_text.split()[0]:
        work.notes.append(f"\"{request.tokens_text}\" is read as {request.tokens:,} tokens (k = 1024).")
    work.notes.append("This counts the cache alone: the weights, activations and the serving engine's block rounding come on top.")
    work.sources.append((f"{model.name} config", model.source))
    return work


def _parameter_count(request: Request) -> tuple[int, str]:
    if request.model is not None:
        return request.model.parameters, f"{request.model.name} has {request.model.parameters:,} parameters."
    assert request.parameters is not None
    return request.parameters, f"A model of {request.parameters:,} parameters (as the question says)."


def weights(request: Request) -> Working:
    assert request.dtype is not None
    count, line = _parameter_count(request)
    element = DTYPES[request.dtype]
    name = request.model.name if request.model else f"{count:,} parameters"
    work = Working(f"Weights of {name} at {request.dtype}")
    work.steps.append(line)
    total = count * element
    work.steps.append(f"At {request.dtype}, each parameter takes {grouped(element)} byte{'s' if element != 1 else ''}: {count:,} {X} {grouped(element)} = {grouped(total)} bytes.")
    work.total_bytes = math.ceil(total)
    work.result = f"The weights take {sizes(work.total_bytes)}."
    if request.dtype in ("int8", "int4", "fp8"):
        work.notes.append("Quantised formats also store scales (and zero points): a few per cent more, depending on the group size.")
    work.notes.append("Weights only: the KV cache and activations need memory on top.")
    if request.model is not None:
        work.sources.append((f"{request.model.name} config", request.model.source))
    return work


def _zero_stage(stage: int, count: int, gpus: int) -> tuple[Fraction, str]:
    """Bytes per GPU under ``stage`` and the sentence that derives them."""
    w, g, o = ZERO_WEIGHT_BYTES, ZERO_GRADIENT_BYTES, ZERO_OPTIMIZER_BYTES
    if stage == 0:
        per = Fraction((w + g + o) * count)
        return per, f"Stage 0 (plain data parallel, nothing partitioned): ({w} + {g} + {o}) {X} {count:,} = {grouped(per)} bytes per GPU."
    if stage == 1:
        per = Fraction((w + g) * count) + Fraction(o * count, gpus)
        return per, f"Stage 1 (optimizer states split over {gpus} GPUs): ({w} + {g}) {X} {count:,} + {o} {X} {count:,} / {gpus} = {grouped(per)} bytes per GPU."
    if stage == 2:
        per = Fraction(w * count) + Fraction((g + o) * count, gpus)
        return per, f"Stage 2 (gradients and optimizer states split over {gpus} GPUs): {w} {X} {count:,} + ({g} + {o}) {X} {count:,} / {gpus} = {grouped(per)} bytes per GPU."
    per = Fraction((w + g + o) * count, gpus)
    return per, f"Stage 3 (weights, gradients and optimizer states all split over {gpus} GPUs): ({w} + {g} + {o}) {X} {count:,} / {gpus} = {grouped(per)} bytes per GPU."


def zero(request: Request) -> Working:
    assert request.gpus
    count, line = _parameter_count(request)
    name = request.model.name if request.model else f"{count:,} parameters"
    stages = [request.stage] if request.stage is not None else [0, 1, 2, 3]
    label = f"ZeRO stage {request.stage}" if request.stage is not None else "each ZeRO stage"
    work = Working(f"Training memory of {name} under {label} on {request.gpus} GPU{'s' if request.gpus > 1 else ''}")
    work.steps.append(line)
    work.steps.append(
        f"Mixed-precision Adam keeps, per parameter: {ZERO_WEIGHT_BYTES} bytes of half-precision weights, "
        f"{ZERO_GRADIENT_BYTES} bytes of half-precision gradients and {ZERO_OPTIMIZER_BYTES} bytes of optimizer state "
        "(an fp32 copy of the weights, the momentum and the variance, 4 bytes each)."
    )
    results = []
    for stage in stages:
        per, sentence = _zero_stage(stage, count, request.gpus)
        work.steps.append(sentence)
        results.append((stage, math.ceil(per)))
    work.total_bytes = results[0][1] if len(results) == 1 else results[-1][1]
    if len(results) == 1:
        work.result = f"Each GPU holds {sizes(results[0][1])} of model state under ZeRO stage {results[0][0]}."
    else:
        work.result = "Per GPU: " + "; ".join(f"stage {stage}: {total:,} bytes ({total / GB:,.2f} GB)" for stage, total in results) + "."
    work.notes.append("Model state only: activations, temporary buffers and memory fragmentation come on top.")
    work.sources.append(("ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", ZERO_SOURCE))
    if request.model is not None:
        work.sources.append((f"{request.model.name} config", request.model.source))
    return work

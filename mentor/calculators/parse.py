"""Reading a question in words into a calculator request.

The reading is deliberately strict: a number is only taken for what the
question says it is ("4096 tokens", "batch 8", "on 64 GPUs"), and what is
missing is reported by name instead of guessed, so a learner never gets an
answer to a question they did not ask.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from core.untrusted_patterns import untrusted
from core.write_guard import outside_write_transaction

from ..constants import QUESTION_MAX_CHARS
from .table import ModelConfig, find_model

# Bytes per element of each precision, with the words learners use for them.
DTYPES: dict[str, Fraction] = {
    "fp32": Fraction(4),
    "fp16": Fraction(2),
    "bf16": Fraction(2),
    "fp8": Fraction(1),
    "int8": Fraction(1),
    "int4": Fraction(1, 2),
}
_DTYPE_WORDS = {
    "fp32": "fp32", "float32": "fp32", "32-bit": "fp32", "full precision": "fp32",
    "fp16": "fp16", "float16": "fp16", "half precision": "fp16", "16-bit": "fp16",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp8": "fp8", "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8",
    "int8": "int8", "8-bit": "int8",
    "int4": "int4", "4-bit": "int4", "nf4": "int4",
}


def _learner(source: str) -> re.Pattern[str]:
    return untrusted(source, max_chars=QUESTION_MAX_CHARS, reads="a learner's mentor question")


_DTYPE = _learner(r"(?<![a-z0-9])(" + "|".join(re.escape(word) for word in sorted(_DTYPE_WORDS, key=len, reverse=True)) + r")(?![a-z0-9])")

# No two quantifiers in a row may take the same characters: "\s*(k|m)?\s*-?\s*"
# shares a run of spaces three ways, and a question of digits and spaces
# backtracked for 55 s. Each optional word carries its own trailing spaces
# instead, and a number starts only where a run of digits starts (never
# again at each of its digits).
_NUMBER_START = r"(?<!\d)(?<!\d[,_])"
_NUMBER = r"(\d[\d,_]*(?:\.\d+)?)"
_SCALE_THEN_SPACES = r"\s*(?:(k|m)\s*)?"
_OF = r"(?:(?:of|=|:|is)\s*)?"
_TOKENS = [
    _learner(_NUMBER_START + _NUMBER + _SCALE_THEN_SPACES + r"(?:-\s*)?(?:tokens?|toks?)\b"),
    _learner(r"(?:sequence|seq|context|prompt)[\s-]*(?:(?:length|len)\s*)?" + _OF + _NUMBER + r"\s*(k|m)?\b"),
    _learner(_NUMBER_START + _NUMBER + _SCALE_THEN_SPACES + r"(?:context|sequence length)\b"),
]
_BATCH = [
    _learner(r"batch(?:[\s-]*size)?\s*" + _OF + r"(\d+)\b"),
    _learner(r"\b(\d+)\s*(?:concurrent\s+|parallel\s+|simultaneous\s+)?(?:sequences|requests|users|prompts|streams)\b"),
]
_GPUS = [
    _learner(r"\b(\d+)\s*(?:gpus?|devices|ranks|accelerators|cards)\b"),
    _learner(r"\b(\d+)[\s-]*way\s+data[\s-]*parallel"),
    _learner(r"data[\s-]*parallel(?:ism)?(?:\s*degree)?\s*" + _OF + r"(\d+)\b"),
    _learner(r"\bdp\s*(?:[=:]\s*)?(\d+)\b"),
]
_STAGE = [_learner(r"\bzero[\s-]*(?:stage[\s-]*)?([0-3])\b"), _learner(r"\bstage[\s-]*([0-3])\b")]
# "7B", "7 b", "7bn", "7 billion", "1.5B", "350M", "7e9" (scientific: no space, as people type it).
_PARAMETERS = _learner(r"(?<![a-z0-9.-])(\d+(?:\.\d+)?)(?:\s*(b|bn|billion|m|million)\b|e(\d{1,2})\b)(?:\s*(?:-?parameters?|params?|model))?")

_KV_WORDS = _learner(r"\bkv\b|kv[\s-]*cache|key[\s/-]*value\s+cache")
_ZERO_WORDS = _learner(r"\bzero\b|\bzero[\s-]*[0-3]\b|\bzero[0-3]\b|training memory|memory (?:to|for) train|fsdp")
_WEIGHT_WORDS = _learner(r"\bweights?\b|memory (?:to|for) (?:load|hold|serve|store) the model|model memory")
_GROUP_SCALES = _learner(r"\bgroup|\bscales?\b")
# "How much memory does Llama-2-7B need in int4?": a size question with a precision and no other subject.
_SIZE_WORDS = _learner(r"\bmemory\b|\bvram\b|how (?:much|big|large)|\bfits?\b|\bsize\b|\bfootprint\b")
# "How much memory does it take to train a 7B model with Adam?", "memory to fine-tune 13B params with AdamW":
# training (or Adam) and a size question is the training-memory calculator's, even with no "ZeRO" in it.
_SHARDING_WORDS = _learner(r"\bzero|fsdp|shard")
_TRAIN_WORDS = _learner(r"\b(?:pre-?)?train(?:s|ed|ing)?\b|\bfine[\s-]?tun(?:e|es|ed|ing)\b|\bfinetun(?:e|es|ed|ing)\b|\badamw?\b")


class CalculatorKind:
    KV_CACHE = "kv_cache"
    WEIGHTS = "weights"
    ZERO = "zero"


# The largest parameter count, sequence length, batch or GPU count the calculator works with.
MAX_COUNT = 10**15


@dataclass
class Request:
    """What a question asks for; ``missing`` names what it left out."""

    kind: str
    model: ModelConfig | None = None
    parameters: int | None = None
    tokens: int | None = None
    tokens_text: str = ""
    batch: int | None = None
    dtype: str | None = None
    stage: int | None = None
    gpus: int | None = None
    assumed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _number(digits: str, suffix: str | None, *, binary_k: bool) -> int | None:
    value = Fraction(digits.replace(",", "").replace("_", ""))
    if suffix == "k":
        value *= 1024 if binary_k else 1000
    elif suffix == "m":
        value *= 1024 * 1024 if binary_k else 1_000_000
    return int(value) if value.denominator == 1 and value > 0 else None


def _first(patterns: list[re.Pattern[str]], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return match
    return None


def _dtype(text: str) -> str | None:
    match = _DTYPE.search(text)
    return _DTYPE_WORDS[match.group(1)] if match else None


def _parameters(text: str) -> int | None:
    match = _PARAMETERS.search(text)
    if not match:
        return None
    if match.group(3) is not None:
        scale = 10 ** int(match.group(3))
    else:
        scale = 1_000_000_000 if match.group(2) in ("b", "bn", "billion") else 1_000_000
    value = Fraction(match.group(1)) * scale
    return int(value) if value.denominator == 1 and value > 0 else None


def detect_kind(text: str) -> str | None:
    """Which calculator a question is for, or None when it asks for no arithmetic."""
    lowered = text.lower()
    if _KV_WORDS.search(lowered):
        return CalculatorKind.KV_CACHE
    if _ZERO_WORDS.search(lowered) or (_TRAIN_WORDS.search(lowered) and _SIZE_WORDS.search(lowered)):
        return CalculatorKind.ZERO
    if _WEIGHT_WORDS.search(lowered):
        return CalculatorKind.WEIGHTS
    if _SIZE_WORDS.search(lowered) and _dtype(lowered) and (find_model(text) or _parameters(lowered)):
        return CalculatorKind.WEIGHTS
    return None


@outside_write_transaction
def parse_question(text: str, kinds: tuple[str, ...]) -> Request | None:
    """The request in ``text`` for one of ``kinds``, or None when it is not a calculator question.

    A question must name what to compute and a model (from the table) or a
    parameter count ("a 7B model"); anything else it needs and lacks is
    listed in ``missing``.
    """
    kind = detect_kind(text)
    if kind is None or kind not in kinds:
        return None
    lowered = text.lower()
    if kind == CalculatorKind.WEIGHTS and _GROUP_SCALES.search(lowered):
        return None  # group-wise scales are the quantization rung's own arithmetic: the passages answer
    model = find_model(text)
    parameters = None if model else _parameters(lowered)
    if kind == CalculatorKind.KV_CACHE and model is None:
        # The KV cache depends on the architecture, not on a parameter count.
        if parameters is None and not _PARAMETERS.search(lowered):
            return None
        return Request(kind, missing=["a model from the table (the KV cache depends on its layers and key/value heads)"])
    if model is None and parameters is None:
        return None
    request = Request(kind, model=model, parameters=parameters)
    if kind == CalculatorKind.KV_CACHE:
        _read_kv(lowered, request)
    elif kind == CalculatorKind.WEIGHTS:
        _read_weights(lowered, request)
    else:
        _read_zero(lowered, request)
    _refuse_huge_counts(request)
    return request


def _refuse_huge_counts(request: Request) -> None:
    """A count past MAX_COUNT is no model's: the calculator asks for a real one
    (a 320-digit parameter count overflowed the float division of the result, a 500)."""
    for label, value in (("parameter count", request.parameters), ("sequence length", request.tokens), ("batch size", request.batch),
                         ("number of GPUs", request.gpus)):
        if value is not None and value > MAX_COUNT:
            request.missing.append(f"a {label} below {MAX_COUNT:,}")


def _read_kv(text: str, request: Request) -> None:
    tokens = _first(_TOKENS, text)
    if tokens:
        request.tokens = _number(tokens.group(1), tokens.group(2), binary_k=True)
        request.tokens_text = tokens.group(0).strip()
    if request.tokens is None:
        request.missing.append("the sequence length, e.g. \"at 4096 tokens\"")
    batch = _first(_BATCH, text)
    if batch:
        request.batch = int(batch.group(1))
    else:
        request.batch = 1
        request.assumed.append("batch 1 (the question gave no batch size)")
    if request.batch == 0:
        request.missing.append("a batch size of at least 1")
    request.dtype = _dtype(text)
    if request.dtype is None:
        request.dtype = "fp16"
        request.assumed.append("fp16, 2 bytes per element (the question named no precision)")


def _read_weights(text: str, request: Request) -> None:
    request.dtype = _dtype(text)
    if request.dtype is None:
        request.missing.append("a precision, e.g. fp16, int8 or int4")


def _read_zero(text: str, request: Request) -> None:
    stage = _first(_STAGE, text)
    request.stage = int(stage.group(1)) if stage else None
    gpus = _first(_GPUS, text)
    request.gpus = int(gpus.group(1)) if gpus else None
    if request.gpus == 0:
        request.missing.append("at least one GPU")
    if request.gpus is None and request.stage is None and not _SHARDING_WORDS.search(text):
        # "How much memory to train a 7B model with Adam?": one GPU holding everything, and said so.
        request.gpus, request.stage = 1, 0
        request.assumed.append("one GPU and no ZeRO partitioning (the question named neither a GPU count nor a stage)")
    if request.gpus is None:
        if request.stage == 0:
            request.gpus = 1
        else:
            request.missing.append("the number of data-parallel GPUs, e.g. \"on 8 GPUs\"")

"""The calculators: reading questions, and arithmetic checked against values worked out by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest

from mentor.calculators import memory
from mentor.calculators.parse import CalculatorKind, parse_question
from mentor.calculators.table import find_model, load_table

ALL = (CalculatorKind.KV_CACHE, CalculatorKind.WEIGHTS, CalculatorKind.ZERO)


def _compute(question: str) -> memory.Working:
    request = parse_question(question, ALL)
    assert request is not None and request.missing == [], request
    return {"kv_cache": memory.kv_cache, "weights": memory.weights, "zero": memory.zero}[request.kind](request)


# --- the table ------------------------------------------------------------------


def test_every_model_in_the_table_has_a_source_and_whole_head_dims():
    table = load_table()
    assert len(table) >= 10
    for model in table:
        assert model.source.startswith("https://huggingface.co/")
        assert model.heads % model.kv_heads == 0
        assert model.effective_head_dim * model.heads >= model.hidden or model.head_dim is not None


def test_the_table_covers_mqa_gqa_and_an_explicit_head_dim():
    kinds = {model.attention_kind for model in load_table()}
    assert kinds == {"multi-head attention", "grouped-query attention", "multi-query attention"}
    gemma = find_model("gemma-7b")
    assert gemma is not None and gemma.effective_head_dim == 256 != gemma.hidden // gemma.heads


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("KV cache of Llama-2-70B please", "Llama-2-70B"),
        ("kv cache of llama 2 7b", "Llama-2-7B"),
        ("Llama-3-8B", "Llama-3-8B"),
        ("qwen2.5-72b at 8k", "Qwen2.5-72B"),
        ("the falcon-7b model", "Falcon-7B"),
    ],
)
def test_it_finds_the_longest_model_name_the_question_gives(question, name):
    found = find_model(question)
    assert found is not None and found.name == name


def test_a_name_that_runs_on_into_more_digits_is_not_taken():
    assert find_model("llama-2-700b") is None


# --- reading questions -------------------------------------------------------------


def test_it_reads_model_length_batch_and_dtype():
    request = parse_question("KV cache of Llama-2-70B at 4096 tokens, batch 8, fp16", ALL)
    assert request is not None and request.model is not None
    assert (request.kind, request.model.name, request.tokens, request.batch, request.dtype) == ("kv_cache", "Llama-2-70B", 4096, 8, "fp16")
    assert request.assumed == [] and request.missing == []


@pytest.mark.parametrize(
    ("question", "tokens", "batch", "dtype"),
    [
        ("How big is the KV cache for Mistral-7B with a 32k context, batch size 16, in bf16?", 32768, 16, "bf16"),
        ("kv-cache Llama-3-8B sequence length 2,048 with 3 requests int8", 2048, 3, "int8"),
        ("key/value cache of gemma-2b at 8192-token prompts, batch of 2, float32", 8192, 2, "fp32"),
    ],
)
def test_it_reads_the_ways_learners_write_numbers(question, tokens, batch, dtype):
    request = parse_question(question, ALL)
    assert request is not None and (request.tokens, request.batch, request.dtype) == (tokens, batch, dtype)


def test_it_states_what_it_assumed_and_names_what_is_missing():
    assumed = parse_question("KV cache of Llama-3-8B at 1000 tokens", ALL)
    assert assumed is not None and assumed.batch == 1 and assumed.dtype == "fp16" and len(assumed.assumed) == 2
    missing = parse_question("KV cache of Llama-3-8B for batch 4", ALL)
    assert missing is not None and any("sequence length" in item for item in missing.missing)
    unnamed = parse_question("KV cache of a 7B model at 4096 tokens", ALL)
    assert unnamed is not None and unnamed.missing and unnamed.model is None


def test_questions_without_arithmetic_are_left_to_the_passages():
    assert parse_question("Why is decoding memory-bound?", ALL) is None
    assert parse_question("What is a KV cache?", ALL) is None
    assert parse_question("How many bytes per element does int4 take?", ALL) is None
    assert parse_question("How much memory do 7B parameters take in int4?", ALL) is not None  # a 7B count and a precision
    assert parse_question("How much memory do 7B parameters take in int4 with group scales?", ALL) is None  # the rung's own sum
    assert parse_question("Why does memory matter for Llama-2-7B?", ALL) is None  # no precision: not a size question


def test_a_calculator_the_module_does_not_offer_is_not_used():
    assert parse_question("ZeRO-2 memory of Llama-2-7B on 8 GPUs", (CalculatorKind.KV_CACHE, CalculatorKind.WEIGHTS)) is None


# --- arithmetic, against values worked out by hand -----------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # 2 x 8 kv heads x 128 x 80 layers x 2 bytes = 327,680 B/token; x 8192 x 4
        ("KV cache of Llama-3-70B at 8192 tokens, batch 4, fp16?", 10_737_418_240),
        # 2 x 32 x 128 x 32 x 2 = 524,288 B/token; x 4096 = 2 GiB
        ("KV cache of Llama-2-7B at 4096 tokens, batch 1, fp16", 2_147_483_648),
        # 327,680 / 4 (int4 is half a byte, not two) = 81,920 B/token; x 4096 x 8
        ("KV cache of Llama-2-70B at 4096 tokens, batch 8, int4", 2_684_354_560),
        # head_dim 256 from the config, not 3072 / 16 = 192: 2 x 16 x 256 x 28 x 2 = 458,752 B/token
        ("KV cache of Gemma-7B at 1000 tokens, batch 1, fp16", 458_752_000),
        # MQA: one kv head of 64: 2 x 1 x 64 x 32 x 2 = 8,192 B/token; x 2048 x 2
        ("KV cache of Falcon-7B at 2048 tokens, batch 2, bf16", 33_554_432),
        # 2 x 8 x 128 x 32 x 2 = 131,072 B/token; x 32,768 = 4 GiB
        ("KV cache of Mistral-7B at 32k tokens, batch 1, fp16", 4_294_967_296),
        # 2 x 4 x 128 x 28 x 1 = 28,672 B/token; x 1000 x 10
        ("KV cache of Qwen2-7B at 1000 tokens, batch 10, fp8", 286_720_000),
    ],
)
def test_kv_cache_bytes(question, expected):
    work = _compute(question)
    assert work.total_bytes == expected
    assert f"{expected:,} bytes" in work.result


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Weights of Llama-2-7B in fp16", 13_476_831_232),
        ("Weights of Llama-2-7B in int4", 3_369_207_808),
        ("How much memory do the weights of Llama-3-70B take in int8?", 70_553_706_496),
        ("weight memory of a 7B model at fp32", 28_000_000_000),
        ("How much memory does Llama-2-13B need in bf16?", 26_031_728_640),
        ("Does Mistral-7B fit in 8 GB at int8?", 7_241_732_096),
    ],
)
def test_weight_memory(question, expected):
    assert _compute(question).total_bytes == expected


@pytest.mark.parametrize(
    ("stage", "expected"),
    # The ZeRO paper's example (7.5B parameters, 64 GPUs): 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
    [(0, 120_000_000_000), (1, 31_406_250_000), (2, 16_640_625_000), (3, 1_875_000_000)],
)
def test_zero_stages_match_the_papers_example(stage, expected):
    work = _compute(f"ZeRO stage {stage} training memory of a 7.5B model on 64 GPUs")
    assert work.total_bytes == expected


def test_zero_without_a_stage_lists_every_stage():
    work = _compute("training memory of Llama-2-7B with ZeRO on 8 GPUs")
    assert "stage 0: 107,814,649,856 bytes" in work.result  # 16 x 6,738,415,616
    assert "stage 3: 13,476,831,232 bytes" in work.result  # 16 x 6,738,415,616 / 8


def test_the_working_shows_every_step_and_its_source():
    work = _compute("KV cache of Gemma-7B at 1000 tokens, batch 1, fp16")
    text = "\n".join(work.steps)
    assert "head_dim 256 is given in the config" in text
    for figure in ("8,192 elements per token per layer", "229,376 elements per token", "458,752 bytes per token", "458,752,000 bytes"):
        assert figure in text
    assert work.sources == [("Gemma-7B config", "https://huggingface.co/google/gemma-7b/blob/main/config.json")]


def test_fractions_print_exactly():
    assert memory.grouped(Fraction(1, 2)) == "0.5"
    assert memory.grouped(Fraction(81920)) == "81,920"
    assert memory.sizes(10_737_418_240) == "10,737,418,240 bytes = 10.00 GiB = 10.74 GB"

"""Hidden tests: edge cases of the rules, with other configs than the examples."""

import copy
import random

import pytest
import reference
from grading import GB, assert_bytes, assert_int, job_seed

FALCON_7B = {  # multi-query attention: one KV head
    "num_hidden_layers": 32,
    "num_attention_heads": 71,
    "num_key_value_heads": 1,
    "hidden_size": 4544,
    "model_type": "falcon",
}
GEMMA_7B = {  # head_dim stated explicitly, not hidden_size / heads (3072 / 16 = 192)
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "hidden_size": 3072,
    "head_dim": 256,
}
MISTRAL_7B = {
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_size": 4096,
}
SMALL = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 64}


def test_mqa_config_with_batch_and_bf16(solution):
    got = solution.kv_cache_bytes(FALCON_7B, 2048, batch_size=3, dtype="bf16")
    # 2 * 32 layers * 1 kv head * 2048 tokens * 64 head_dim * 3 seqs * 2 bytes
    assert_bytes(got, 50_331_648, "MQA (1 KV head of 71), 2048 tokens, batch 3, bf16")


def test_missing_or_null_kv_heads_means_mha(solution):
    gpt2 = {"num_hidden_layers": 12, "num_attention_heads": 12, "hidden_size": 768}
    expected = 2 * 12 * 12 * 1024 * 64 * 5 * 4
    got = solution.kv_cache_bytes(gpt2, 1024, batch_size=5, dtype="fp32")
    assert_bytes(got, expected, "config without num_key_value_heads (12 heads), 1024 tokens, batch 5, fp32")
    got = solution.kv_cache_bytes(dict(gpt2, num_key_value_heads=None, head_dim=None), 1024, 5, "fp32")
    assert_bytes(got, expected, "config with num_key_value_heads=None and head_dim=None, 1024 tokens, batch 5, fp32")


def test_explicit_head_dim_is_used(solution):
    got = solution.kv_cache_bytes(GEMMA_7B, 4096)
    assert_bytes(got, 2 * 28 * 16 * 4096 * 256 * 2, "config with head_dim=256 and hidden_size=3072 (16 heads), fp16")
    odd_width = {"num_hidden_layers": 4, "num_attention_heads": 12, "hidden_size": 1000, "head_dim": 80}
    got = solution.kv_cache_bytes(odd_width, 100, dtype="int8")
    assert_bytes(got, 2 * 4 * 12 * 100 * 80, "config with head_dim=80 and hidden_size=1000 not divisible by 12 heads, int8")


def test_element_size_of_every_dtype(solution):
    elements = 2 * 2 * 2 * 10 * 16  # 2 x layers x kv_heads x tokens x head_dim
    table = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
    for dtype, size in table.items():
        got = solution.kv_cache_bytes(SMALL, 10, batch_size=1, dtype=dtype)
        assert_bytes(got, elements * size, f"cache of {elements} elements in {dtype}")
    got = solution.kv_cache_bytes(SMALL, 10, batch_size=1, dtype="int4")
    assert_bytes(got, elements // 2, f"cache of {elements} elements in int4")


def test_int4_packs_two_values_per_byte(solution):
    config = {"num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 3, "hidden_size": 42}
    got = solution.kv_cache_bytes(config, 5, batch_size=3, dtype="int4")
    # 2 * 3 * 3 * 5 * 7 * 3 = 1890 elements at half a byte each
    assert_bytes(got, 945, "int4 cache: 3 layers, 3 KV heads, head_dim 7, 5 tokens, batch 3")


def test_unknown_dtype_raises(solution):
    for dtype in ("fp64", "int2", "", "half"):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(MISTRAL_7B, 128, 1, dtype)


def test_non_positive_sizes_raise(solution):
    bad_configs = [
        dict(MISTRAL_7B, num_hidden_layers=0),
        dict(MISTRAL_7B, num_attention_heads=-32),
        dict(MISTRAL_7B, num_key_value_heads=0),
        dict(MISTRAL_7B, head_dim=0),
        dict(MISTRAL_7B, hidden_size=-4096),
    ]
    for config in bad_configs:
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(config, 128)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes(MISTRAL_7B, 0)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes(MISTRAL_7B, -5)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes(MISTRAL_7B, 128, batch_size=0)


def test_kv_heads_must_divide_query_heads(solution):
    for kv_heads in (6, 64, 5):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(dict(MISTRAL_7B, num_key_value_heads=kv_heads), 128)


def test_hidden_size_must_split_evenly_without_head_dim(solution):
    with pytest.raises(ValueError):
        solution.kv_cache_bytes({"num_hidden_layers": 4, "num_attention_heads": 12, "hidden_size": 1000}, 64)
    with pytest.raises(ValueError):
        solution.kv_cache_bytes({"num_hidden_layers": 4, "num_attention_heads": 7, "hidden_size": 512, "head_dim": None}, 64)


def test_sizes_beyond_float_precision(solution):
    # Past 2**53 a float cannot hold every whole number: results must come from integer arithmetic.
    huge = {"num_hidden_layers": 81, "num_attention_heads": 63, "num_key_value_heads": 63, "head_dim": 127, "hidden_size": 8001}
    for dtype in ("int4", "fp8", "fp16", "fp32"):
        got = solution.kv_cache_bytes(huge, 1_000_003, batch_size=100_003, dtype=dtype)
        assert_bytes(got, reference.kv_cache_bytes(huge, 1_000_003, batch_size=100_003, dtype=dtype), f"{dtype} cache of 1,000,003 tokens x 100,003 sequences, 81 layers, 63 heads of 127")
    tiny = {"num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 1, "hidden_size": 1}  # one byte per int4 sequence of one token
    for gpu in (2**53 + 1, 2**60 + 3):
        assert_int(solution.max_sequences(gpu, 0, tiny, 1, dtype="int4"), gpu, f"one-byte sequences on a card of {gpu} bytes", "sequences")
    got = solution.max_sequences(10**18 + 7, 3, huge, 1_000_003, dtype="int4")
    assert_int(got, reference.max_sequences(10**18 + 7, 3, huge, 1_000_003, dtype="int4"), "sequences of 1,000,003 int4 tokens on a card of 10**18 + 7 bytes", "sequences")


def test_head_dim_from_a_hidden_size_past_float_precision(solution):
    # hidden_size // heads must stay an integer division: hidden_size / heads in floats loses units past 2**53.
    for heads, hidden in ((3, 3 * (2**54 + 1)), (7, 7 * (2**60 + 11)), (1, 2**53 + 1)):
        config = {"num_hidden_layers": 1, "num_attention_heads": heads, "num_key_value_heads": 1, "hidden_size": hidden}
        for dtype in ("int4", "fp32"):
            got = solution.kv_cache_bytes(config, 1, dtype=dtype)
            assert_bytes(got, reference.kv_cache_bytes(config, 1, dtype=dtype), f"one {dtype} token, {heads} query heads, hidden_size {hidden}")


def test_only_the_exact_key_names_count(solution):
    # Names other libraries use for the same sizes are "other keys": ignored, whatever their values.
    aliases = {
        "num_kv_heads": 2, "n_kv_heads": 2, "num_key_value_groups": 4, "kv_heads": 1, "multi_query": True,
        "n_head": 64, "n_heads": 64, "n_layer": 80, "n_layers": 80, "num_layers": 80,
        "d_model": 8192, "n_embd": 8192, "head_size": 64, "kv_channels": 64, "dim": 8192,
    }
    llama2 = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}
    got = solution.kv_cache_bytes(dict(llama2, **aliases), 2048)
    assert_bytes(got, 2**30, "LLaMA-2-7B shape (no num_key_value_heads, no head_dim) with other libraries' key names beside it")
    got = solution.max_sequences(40 * GB, 13_476_831_232, dict(llama2, **aliases), 2048)
    assert_int(got, 24, "the worked example's card with other libraries' key names in the config", "sequences")
    with pytest.raises(ValueError):  # an alias never stands in for a missing hidden_size
        solution.kv_cache_bytes({"num_hidden_layers": 4, "num_attention_heads": 8, "head_size": 64, "d_model": 512, "n_embd": 512}, 64)


def test_max_sequences_rounds_down_with_gqa_and_fp8(solution):
    # per sequence: 2 * 32 * 8 * 32768 * 128 * 1 byte = 2 GiB; free 65.5e9 bytes = 30.5 of them
    got = solution.max_sequences(80 * GB, 14_483_464_192, MISTRAL_7B, 32768, dtype="fp8")
    assert_int(got, 30, "32k-token fp8 sequences, 8 KV heads, 80 GB card, 14.48 GB of weights", "sequences")
    got = solution.max_sequences(24 * GB, 4 * GB, FALCON_7B, 4096, "int4")
    # per sequence: 2 * 32 * 1 * 4096 * 64 * 0.5 = 8,388,608 bytes
    assert_int(got, 20 * GB // 8_388_608, "4096-token int4 sequences of an MQA model on a 24 GB card", "sequences")


def test_max_sequences_is_zero_when_weights_leave_no_room(solution):
    per_seq = 2 * 28 * 16 * 1000 * 256 * 2
    cases = [
        (16 * GB, 17 * GB, "weights larger than the card"),
        (16 * GB, 16 * GB, "weights exactly filling the card"),
        (16 * GB, 16 * GB - per_seq + 1, "one byte short of room for one sequence"),
    ]
    for gpu, weights, label in cases:
        got = solution.max_sequences(gpu, weights, GEMMA_7B, 1000)
        assert_int(got, 0, f"max_sequences with {label}", "sequences")
    got = solution.max_sequences(16 * GB, 16 * GB - per_seq, GEMMA_7B, 1000)
    assert_int(got, 1, "max_sequences with room for exactly one sequence", "sequences")
    # One-byte sequences (one int4 token, one layer, one head of size 1): one byte free holds exactly one.
    tiny = {"num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 1}
    assert_int(solution.max_sequences(1, 0, tiny, 1, dtype="int4"), 1, "one-byte sequences on a one-byte card", "sequences")
    assert_int(solution.max_sequences(10, 9, tiny, 1, dtype="int4"), 1, "one-byte sequences with one byte left beside the weights", "sequences")


def test_max_sequences_validates_inputs(solution):
    with pytest.raises(ValueError):
        solution.max_sequences(0, 0, MISTRAL_7B, 1024)
    with pytest.raises(ValueError):
        solution.max_sequences(-80 * GB, 0, MISTRAL_7B, 1024)
    with pytest.raises(ValueError):
        solution.max_sequences(80 * GB, -1, MISTRAL_7B, 1024)
    with pytest.raises(ValueError):
        solution.max_sequences(80 * GB, 10 * GB, MISTRAL_7B, 1024, dtype="fp64")
    with pytest.raises(ValueError):
        solution.max_sequences(80 * GB, 10 * GB, MISTRAL_7B, 0)


def test_results_are_python_ints(solution):
    config = {"num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 3, "hidden_size": 42}
    got = solution.kv_cache_bytes(config, 5, batch_size=3, dtype="int4")
    assert type(got) is int, f"kv_cache_bytes in int4 returned {type(got).__name__} {got!r}; the rules ask for an int"
    got = solution.kv_cache_bytes(MISTRAL_7B, 4096, dtype="fp16")
    assert type(got) is int, f"kv_cache_bytes in fp16 returned {type(got).__name__} {got!r}; the rules ask for an int"
    got = solution.max_sequences(24 * GB, 4 * GB, FALCON_7B, 4096, "int4")
    assert type(got) is int, f"max_sequences with an int4 cache returned {type(got).__name__} {got!r}; the rules ask for an int"


def test_dtype_names_are_exact(solution):
    for dtype in ("FP16", "Fp8", "float16", "bfloat16", "half", " fp16", "fp16 ", "INT4"):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(MISTRAL_7B, 128, 1, dtype)
    with pytest.raises(ValueError):
        solution.max_sequences(80 * GB, 10 * GB, MISTRAL_7B, 128, dtype="BF16")
    # Not a name at all: still "not one of the six names", so ValueError (not TypeError).
    for dtype in (None, 16, 2.0, ["fp16"], ("fp16",), {"fp16": 2}):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(MISTRAL_7B, 128, 1, dtype)
        with pytest.raises(ValueError):
            solution.max_sequences(80 * GB, 10 * GB, MISTRAL_7B, 128, dtype=dtype)


def test_sizes_of_another_type_raise(solution):
    bad_configs = [
        dict(MISTRAL_7B, num_hidden_layers=32.0),
        dict(MISTRAL_7B, num_key_value_heads=8.0),
        dict(MISTRAL_7B, head_dim=128.0),
        dict(MISTRAL_7B, hidden_size="4096"),
        dict(MISTRAL_7B, num_attention_heads=True, num_key_value_heads=None),
    ]
    for config in bad_configs:
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(config, 128)
    for seq_len, batch in ((2048.0, 1), (128, 2.0), (True, 1), ("128", 1), (128, True)):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(MISTRAL_7B, seq_len, batch)
    for gpu, weights in ((80e9, 10 * GB), (80 * GB, 1.5e9), (80 * GB, True), (str(80 * GB), 0)):
        with pytest.raises(ValueError):
            solution.max_sequences(gpu, weights, MISTRAL_7B, 1024)


def test_no_way_to_know_the_head_size_raises(solution):
    for config in (
        {"num_hidden_layers": 4, "num_attention_heads": 8},
        {"num_hidden_layers": 4, "num_attention_heads": 8, "head_dim": None, "hidden_size": None},
        {"num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": None},
    ):
        with pytest.raises(ValueError):
            solution.kv_cache_bytes(config, 64)


def test_explicit_head_dim_never_reads_hidden_size(solution):
    no_width = {"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 64}
    assert_bytes(solution.kv_cache_bytes(no_width, 10), 2 * 2 * 4 * 10 * 64 * 2, "config with head_dim and no hidden_size")
    null_width = dict(no_width, hidden_size=None)
    assert_bytes(solution.kv_cache_bytes(null_width, 10), 2 * 2 * 4 * 10 * 64 * 2, "config with head_dim and hidden_size=None")


def test_max_sequences_checks_its_input_before_counting(solution):
    # The weights fill the card in every call: bad input must still raise, not return 0.
    full = {"gpu_bytes": 16 * GB, "weight_bytes": 20 * GB}
    bad_calls = [
        (dict(MISTRAL_7B, num_key_value_heads=5), 1024, "fp16"),
        (MISTRAL_7B, 1024, "fp64"),
        (MISTRAL_7B, 0, "fp16"),
        ({"num_hidden_layers": 4, "num_attention_heads": 8}, 1024, "fp16"),
        (dict(MISTRAL_7B, head_dim=0), 1024, "fp8"),
    ]
    for config, seq_len, dtype in bad_calls:
        with pytest.raises(ValueError):
            solution.max_sequences(full["gpu_bytes"], full["weight_bytes"], config, seq_len, dtype)
    with pytest.raises(ValueError):
        solution.max_sequences(16 * GB, 16 * GB, MISTRAL_7B, -1)


# ---------------------------------------------------------------------------
# Differential tests: the learner's functions against the reference on
# generated input, valid and invalid, drawn from the whole space of the rules.
# ---------------------------------------------------------------------------

DTYPES = ["fp32", "fp16", "bf16", "fp8", "int8", "int4"]
BAD_DTYPES = ["FP16", "float16", "bfloat16", "half", "fp64", "int2", "", "Int8", "fp16 ", None, 16, ["fp16"]]
BAD_SIZES = [0, -1, -64, 64.0, 2.5, True, "64", None]


def _outcome(fn, *args, **kwargs):
    """('value', result) or ('raises', exception type name)."""
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
        return ("raises", type(exc).__name__)


def _same(got, expected):
    if expected[0] == "raises":
        return got == expected
    return got[0] == "value" and type(got[1]) is int and got[1] == expected[1]


def _random_config(rng):
    heads = rng.choice([1, 2, 3, 4, 6, 7, 8, 12, 16, 25, 32, 40, 48, 64, 71, 96, 128])
    config = {"num_hidden_layers": rng.choice([1, 2, 12, 24, 32, 40, 61, 80, 126])}
    config["num_attention_heads"] = heads
    kv_mode = rng.random()
    divisors = [d for d in range(1, heads + 1) if heads % d == 0]
    if kv_mode < 0.2:
        pass  # absent: multi-head attention
    elif kv_mode < 0.3:
        config["num_key_value_heads"] = None
    else:
        config["num_key_value_heads"] = rng.choice(divisors)
    hd_mode = rng.random()
    head_dim = rng.choice([1, 7, 32, 64, 80, 96, 128, 256])
    if hd_mode < 0.4:
        config["hidden_size"] = heads * head_dim
    elif hd_mode < 0.5:
        config["hidden_size"] = heads * head_dim
        config["head_dim"] = None
    elif hd_mode < 0.8:
        config["head_dim"] = head_dim
        config["hidden_size"] = rng.choice([heads * head_dim, heads * head_dim + 1, 1000, 4544])
    else:
        config["head_dim"] = head_dim  # no hidden_size at all
    if rng.random() < 0.3:
        config.update(model_type="llama", vocab_size=32000, rope_theta=10000.0, torch_dtype="bfloat16")
    if rng.random() < 0.3:  # other libraries' names for the same sizes: to be ignored
        config.update({rng.choice(["num_kv_heads", "n_kv_heads", "kv_heads"]): rng.choice(divisors)})
        config.update({rng.choice(["head_size", "kv_channels"]): rng.choice([16, 64, 100])})
        config.update({rng.choice(["n_layer", "num_layers"]): rng.choice([3, 48])})
    keys = list(config)
    rng.shuffle(keys)
    return {key: config[key] for key in keys}


def _break_config(rng, config):
    """One rule broken (or, now and then, two at once)."""
    broken = dict(config)
    for _ in range(1 if rng.random() < 0.8 else 2):
        kind = rng.choice(["layers", "heads", "kv", "kv_divide", "head_dim", "hidden", "no_width"])
        if kind == "layers":
            broken["num_hidden_layers"] = rng.choice(BAD_SIZES[:-1])
        elif kind == "heads":
            broken["num_attention_heads"] = rng.choice(BAD_SIZES[:-1])
        elif kind == "kv":
            broken["num_key_value_heads"] = rng.choice(BAD_SIZES[:-1])
        elif kind == "kv_divide":
            heads = broken["num_attention_heads"]
            if isinstance(heads, int) and not isinstance(heads, bool) and heads > 0:
                broken["num_key_value_heads"] = rng.choice([d for d in range(2, 2 * heads + 2) if heads % d != 0])
        elif kind == "head_dim":
            broken["head_dim"] = rng.choice(BAD_SIZES[:-1])
        elif kind == "hidden":
            broken.pop("head_dim", None)
            broken["hidden_size"] = rng.choice([*BAD_SIZES[:-1], 4097, 1001])
        else:
            broken.pop("head_dim", None)
            broken.pop("hidden_size", None)
    return broken


def test_generated_kv_cache_bytes_match_the_reference(solution):
    rng = random.Random(job_seed())
    mismatches = []
    for case in range(240):
        config = _random_config(rng)
        seq_len = rng.choice([1, 2, 3, 17, 128, 2048, 4096, 32768, 131072, 1_000_003])
        batch = rng.choice([1, 1, 2, 3, 8, 64, 255, 4096])
        dtype = rng.choice(DTYPES)
        if case % 3 == 1:
            config = _break_config(rng, config)
        elif case % 3 == 2:
            which = rng.randrange(3)
            if which == 0:
                seq_len = rng.choice(BAD_SIZES)
            elif which == 1:
                batch = rng.choice(BAD_SIZES)
            else:
                dtype = rng.choice(BAD_DTYPES)
        expected = _outcome(reference.kv_cache_bytes, copy.deepcopy(config), seq_len, batch, dtype)
        got = _outcome(solution.kv_cache_bytes, config, seq_len, batch_size=batch, dtype=dtype)
        if not _same(got, expected):
            mismatches.append(f"kv_cache_bytes({config}, {seq_len!r}, batch_size={batch!r}, dtype={dtype!r}): got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 240 generated cases differ from the rules; first: {mismatches[0]}"


def test_generated_max_sequences_match_the_reference(solution):
    rng = random.Random(job_seed() + 1)
    mismatches = []
    for case in range(200):
        config = _random_config(rng)
        seq_len = rng.choice([1, 100, 2048, 8192, 32768])
        dtype = rng.choice(DTYPES)
        per_seq = reference.kv_cache_bytes(copy.deepcopy(config), seq_len, 1, dtype)
        gpu = rng.choice([1, 8 * GB, 24 * GB, 40 * GB, 80 * GB, 141 * GB, 10**13])
        room = rng.choice([0, 1, 2, 7, 30, 1000])
        # Free memory exactly a whole number of sequences, one byte more or less, or anything.
        weights = gpu - room * per_seq + rng.choice([-1, 0, 0, 1, rng.randrange(per_seq)])
        if rng.random() < 0.15:
            weights = gpu + rng.choice([0, 1, GB])
        weights = max(weights, 0)
        if case % 4 == 3:
            which = rng.randrange(5)
            if which == 0:
                config = _break_config(rng, config)
            elif which == 1:
                seq_len = rng.choice(BAD_SIZES)
            elif which == 2:
                dtype = rng.choice(BAD_DTYPES)
            elif which == 3:
                gpu = rng.choice(BAD_SIZES)
            else:
                weights = rng.choice([-1, -GB, 1.0e9, 2.5, True, "0", None])
        expected = _outcome(reference.max_sequences, gpu, weights, copy.deepcopy(config), seq_len, dtype)
        got = _outcome(solution.max_sequences, gpu, weights, config, seq_len, dtype=dtype)
        if not _same(got, expected):
            mismatches.append(f"max_sequences({gpu!r}, {weights!r}, {config}, {seq_len!r}, dtype={dtype!r}): got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 200 generated cases differ from the rules; first: {mismatches[0]}"

"""Hidden tests: edge cases of the rules, then generated inputs against the reference."""

import random

import pytest
import reference
from grading import assert_bytes, job_seed

GPT2_XL = 1_500_000_000


def test_one_and_a_half_billion_params_need_24_gb(solution):
    assert_bytes(solution.model_state_bytes(GPT2_XL, 1, 0), 24_000_000_000, "1.5B params, one GPU, Adam, no ZeRO")
    assert_bytes(solution.model_state_bytes(GPT2_XL, 8, 0), 24_000_000_000, "1.5B params, 8 GPUs, stage 0 (nothing is sharded)")


def test_every_stage_on_one_gpu_is_stage_zero(solution):
    for stage in (0, 1, 2, 3):
        assert_bytes(solution.model_state_bytes(1_234_567, 1, stage), 16 * 1_234_567, f"stage {stage} on a single GPU")


def test_each_stage_shards_the_right_states(solution):
    # 1,000 params, 10 GPUs, K = 12: every split divides evenly.
    expected = {0: 16_000, 1: 4_000 + 1_200, 2: 2_000 + 1_400, 3: 1_600}
    for stage, want in expected.items():
        assert_bytes(solution.model_state_bytes(1_000, 10, stage), want, f"1,000 params on 10 GPUs, stage {stage}")


def test_split_bytes_round_up_once(solution):
    # 7 params, 3 GPUs: stage 1 splits 84 bytes -> 28; stage 2 splits 98 -> ceil(32.67) = 33; stage 3 splits 112 -> 38.
    assert_bytes(solution.model_state_bytes(7, 3, 1), 28 + 28, "7 params on 3 GPUs, stage 1")
    assert_bytes(solution.model_state_bytes(7, 3, 2), 14 + 33, "7 params on 3 GPUs, stage 2")
    assert_bytes(solution.model_state_bytes(7, 3, 3), 38, "7 params on 3 GPUs, stage 3")
    # One param on many GPUs: the split part rounds up to one byte, never down to zero.
    assert_bytes(solution.model_state_bytes(1, 1000, 3), 1, "one parameter on 1,000 GPUs, stage 3")
    # Rounding the gradient and optimizer shares up separately would give 2 + 1 + 1 = 4 here.
    assert_bytes(solution.model_state_bytes(1, 64, 2), 2 + 1, "one parameter on 64 GPUs, stage 2")


def test_other_optimizer_sizes(solution):
    # SGD with momentum in fp32 master weights: 4 + 4 = 8 bytes; plain SGD without masters: 0.
    assert_bytes(solution.model_state_bytes(1_000_000, 4, 1, optimizer_bytes=8), 4_000_000 + 2_000_000, "K = 8, stage 1, 4 GPUs")
    assert_bytes(solution.model_state_bytes(1_000_000, 4, 0, optimizer_bytes=0), 4_000_000, "K = 0, stage 0")
    assert_bytes(solution.model_state_bytes(1_000_000, 4, 1, optimizer_bytes=0), 4_000_000, "K = 0, stage 1")
    assert_bytes(solution.model_state_bytes(1_000_000, 4, 3, 16), 5_000_000, "K = 16, stage 3, 4 GPUs")


def test_huge_models_stay_exact(solution):
    # 1 trillion + 1 parameters on 1,024 GPUs: floats would lose the last bytes.
    params = 10**12 + 1
    got = solution.model_state_bytes(params, 1024, 3)
    assert type(got) is int, f"model_state_bytes returned {type(got).__name__}; the rules ask for an int"
    assert_bytes(got, -(-16 * params // 1024), "1e12 + 1 params on 1,024 GPUs, stage 3")
    assert_bytes(solution.model_state_bytes(params, 1024, 1), 4 * params + -(-12 * params // 1024), "1e12 + 1 params, stage 1")
    # Past 2**53 bytes even a float division rounded up afterwards is off.
    for params, gpus, stage in ((10**15 + 3, 3, 2), (10**18 + 1, 7, 3), (2**60 + 5, 6, 1), (10**18 + 11, 1024, 2)):
        got = solution.model_state_bytes(params, gpus, stage)
        assert_bytes(got, reference.model_state_bytes(params, gpus, stage), f"{params} params on {gpus} GPUs, stage {stage}")


def test_attention_term_grows_with_the_square_of_the_sequence(solution):
    # s = 8192, b = 2, h = 1024, a = 16: 34*s*b*h + 5*a*s*s*b per layer.
    per_layer = 34 * 8192 * 2 * 1024 + 5 * 16 * 8192 * 8192 * 2
    assert_bytes(solution.activation_bytes(3, 8192, 2, 1024, 16), 3 * per_layer, "3 layers, s=8192, b=2, h=1024, a=16")
    assert_bytes(solution.activation_bytes(1, 1, 1, 8, 8), 34 * 8 + 5 * 8, "the smallest layer: s=1, b=1, h=8, a=8")
    # 5as/h is not whole here: the term is 5*a*s*s*b bytes, not s*b*h times a rounded ratio.
    assert_bytes(solution.activation_bytes(1, 3, 1, 16, 2), 34 * 3 * 16 + 5 * 2 * 3 * 3, "s=3, b=1, h=16, a=2")
    assert_bytes(solution.activation_bytes(2, 7, 3, 24, 4), 2 * (34 * 7 * 3 * 24 + 5 * 4 * 7 * 7 * 3), "2 layers, s=7, b=3, h=24, a=4")


def test_huge_activations_stay_exact(solution):
    # 5as/h is not a binary fraction here (71/7100, 24/43608, 7/21): a float product rounded afterwards loses bytes,
    # even below 2**53. The integer sum 34*s*b*h + 5*a*s*s*b is exact.
    for args in ((1, 332227, 73, 7100, 71), (96, 918317, 4062, 43608, 24), (126, 1_000_003, 64, 21, 7), (3, 2**40 + 1, 5, 99, 9)):
        assert_bytes(solution.activation_bytes(*args), reference.activation_bytes(*args), "activations of L={}, s={}, b={}, h={}, a={}".format(*args))


def test_recomputation_keeps_only_the_layer_input(solution):
    assert_bytes(solution.activation_bytes(80, 4096, 4, 8192, 64, recompute=True), 80 * 2 * 4096 * 4 * 8192, "80 layers, recomputed")
    assert_bytes(solution.activation_bytes(5, 3, 7, 12, 4, True), 5 * 2 * 3 * 7 * 12, "odd sizes, recomputed")
    assert_bytes(solution.activation_bytes(5, 3, 7, 12, 4, False), 5 * (34 * 3 * 7 * 12 + 5 * 4 * 3 * 3 * 7), "odd sizes, stored")


def test_results_are_python_ints(solution):
    for got, label in (
        (solution.model_state_bytes(7, 3, 2), "model_state_bytes"),
        (solution.activation_bytes(2, 100, 3, 96, 12), "activation_bytes"),
        (solution.activation_bytes(2, 100, 3, 96, 12, recompute=True), "activation_bytes with recompute"),
    ):
        assert type(got) is int, f"{label} returned {type(got).__name__} {got!r}; the rules ask for an int"


def test_bad_stage_raises(solution):
    for stage in (-1, 4, 5, True, False, 1.0, "1", None):
        with pytest.raises(ValueError):
            solution.model_state_bytes(1000, 8, stage)


def test_one_gpu_still_checks_every_argument(solution):
    # On one GPU every stage gives (4 + K) * P bytes, but the stage and K are still checked first.
    for stage in (-1, 4, True, 1.0, "1", None):
        with pytest.raises(ValueError):
            solution.model_state_bytes(1000, 1, stage)
    for bad in (-1, -12, 12.0, True, "12", None):
        with pytest.raises(ValueError):
            solution.model_state_bytes(1000, 1, 3, optimizer_bytes=bad)
    assert_bytes(solution.model_state_bytes(1000, 1, 3, optimizer_bytes=0), 4000, "K = 0, stage 3, one GPU")


def test_bad_counts_raise(solution):
    for bad in (0, -1, 8.0, True, "8", None):
        for stage in (0, 1, 2, 3):  # stage 0 does not divide by n_gpus, but still checks it
            with pytest.raises(ValueError):
                solution.model_state_bytes(bad, 8, stage)
            with pytest.raises(ValueError):
                solution.model_state_bytes(1000, bad, stage)


def test_optimizer_bytes_may_be_zero_but_not_negative(solution):
    for bad in (-1, -12, 12.0, True, "12", None):
        with pytest.raises(ValueError):
            solution.model_state_bytes(1000, 8, 2, optimizer_bytes=bad)


def test_bad_activation_sizes_raise(solution):
    good = [2, 128, 1, 64, 4]
    for position in range(5):
        for bad in (0, -3, 2.0, True, "2", None):
            args = list(good)
            args[position] = bad
            with pytest.raises(ValueError):
                solution.activation_bytes(*args)


def test_recompute_must_be_a_bool(solution):
    for bad in (0, 1, None, "yes", 1.0):
        with pytest.raises(ValueError):
            solution.activation_bytes(2, 128, 1, 64, 4, recompute=bad)


def test_heads_must_divide_hidden_size_even_when_recomputing(solution):
    for recompute in (False, True):
        with pytest.raises(ValueError):
            solution.activation_bytes(2, 128, 1, 100, 3, recompute=recompute)
        with pytest.raises(ValueError):
            solution.activation_bytes(2, 128, 1, 64, 128, recompute=recompute)


# ---------------------------------------------------------------------------
# Differential tests against the reference on generated input.
# ---------------------------------------------------------------------------

BAD = [0, -1, -4096, 64.0, 2.5, True, False, "64", None]


def _outcome(fn, *args, **kwargs):
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
        return ("raises", type(exc).__name__)


def _same(got, expected):
    if expected[0] == "raises":
        return got == expected
    return got[0] == "value" and type(got[1]) is int and got[1] == expected[1]


def test_generated_model_states_match_the_reference(solution):
    rng = random.Random(job_seed())
    mismatches = []
    for case in range(300):
        params = rng.choice([1, 2, 7, 999, 124_000_000, 1_300_000_001, 7_000_000_000, 70_553_706_497, 10**12 + rng.randrange(1000)])
        gpus = rng.choice([1, 2, 3, 7, 8, 64, 96, 1000, 4096])
        stage = rng.choice([0, 1, 2, 3])
        k = rng.choice([12, 12, 0, 4, 8, 16])
        if case % 4 == 3:
            which = rng.randrange(4)
            if which == 0:
                params = rng.choice(BAD)
            elif which == 1:
                gpus = rng.choice(BAD)
            elif which == 2:
                stage = rng.choice([-1, 4, True, 2.0, "3", None])
            else:
                k = rng.choice([-1, -12, 12.0, True, "12", None])
        expected = _outcome(reference.model_state_bytes, params, gpus, stage, k)
        got = _outcome(solution.model_state_bytes, params, gpus, stage, optimizer_bytes=k)
        if not _same(got, expected):
            mismatches.append(f"model_state_bytes({params!r}, {gpus!r}, {stage!r}, optimizer_bytes={k!r}): got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 300 generated cases differ from the rules; first: {mismatches[0]}"


def test_generated_activations_match_the_reference(solution):
    rng = random.Random(job_seed() + 1)
    mismatches = []
    for case in range(300):
        heads = rng.choice([1, 3, 8, 12, 16, 32, 40, 64, 96])
        hidden = heads * rng.choice([1, 7, 64, 80, 128])
        args = [rng.choice([1, 2, 24, 32, 80, 126]), rng.choice([1, 3, 512, 2048, 8192, 131072, 1_000_003]), rng.choice([1, 2, 5, 16, 4093]), hidden, heads]
        recompute = rng.choice([False, True])
        if case % 4 == 3:
            which = rng.randrange(7)
            if which < 5:
                args[which] = rng.choice(BAD)
            elif which == 5:
                args[3] = heads * 64 + rng.choice([1, heads // 2 or 1]) if heads > 1 else 0
            else:
                recompute = rng.choice([0, 1, None, "no"])
        expected = _outcome(reference.activation_bytes, *args, recompute)
        got = _outcome(solution.activation_bytes, *args, recompute=recompute)
        if not _same(got, expected):
            mismatches.append(f"activation_bytes({', '.join(map(repr, args))}, recompute={recompute!r}): got {got}, expected {expected}")
    assert not mismatches, f"{len(mismatches)} of 300 generated cases differ from the rules; first: {mismatches[0]}"

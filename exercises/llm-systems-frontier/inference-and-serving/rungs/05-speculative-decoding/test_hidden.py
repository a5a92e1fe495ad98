"""Hidden tests: the exact law of emitted rows, acceptance, bonus token, seeds, shapes and the formula.

Statistical checks compare the empirical distribution of whole emitted rows
with their exact law (computed below from p and q), with a threshold that a
correct implementation exceeds with probability below 1e-9 for any seed:
E[TV] <= 0.5 * sum(sqrt(P(1 - P) / n)) plus McDiarmid's deviation
sqrt(ln(1e9) / (2n)). Rows that the rules make impossible fail at once.
"""

import math
import random
from collections import Counter

import pytest
import reference
import torch
from grading import assert_arguments_unchanged, assert_close, assert_distribution, assert_equal, assert_tensor, job_seed

DELTA = 1e-9  # accepted chance of failing a correct implementation, per check


def _seed(offset):
    return job_seed() * 1009 + offset


def make_batch(p_rows, q_rows, n, seed, dtype=torch.float32):
    """n identical rows: target probs [n, k+1, V], draft probs [n, k, V], drafts sampled from q."""
    p = torch.as_tensor(p_rows, dtype=torch.float64).to(dtype)
    q = torch.as_tensor(q_rows, dtype=torch.float64).to(dtype).reshape(-1, p.shape[1])
    k, vocab = q.shape
    gen = torch.Generator().manual_seed(seed)
    drafts = torch.stack([torch.multinomial(q[i].double(), n, replacement=True, generator=gen) for i in range(k)], dim=1) if k else torch.zeros(n, 0, dtype=torch.int64)
    return drafts.reshape(n, k), q.expand(n, k, vocab).clone(), p.expand(n, k + 1, vocab).clone()


def row_law(p, q):
    """Exact probability of each possible emitted row when draft i is sampled from q_i.

    p: [k+1, V] target rows, q: [k, V] draft rows, used as given (not renormalised)
    for the ratio p/q; multinomial normalises the draft, residual and bonus weights.
    """
    p, q = p.double(), q.double()
    k, vocab = q.shape
    law = {}

    def pad(tokens):
        return tuple(tokens) + (-1,) * (k + 1 - len(tokens))

    def walk(i, prefix, mass):
        if i == k:
            bonus = p[k] / p[k].sum()
            for b in torch.nonzero(bonus > 0)[:, 0].tolist():
                law[pad([*prefix, b])] = law.get(pad([*prefix, b]), 0.0) + mass * float(bonus[b])
            return
        drawn = q[i] / q[i].sum()
        accept = drawn * torch.clamp(p[i] / torch.where(q[i] > 0, q[i], 1.0), max=1.0)
        accept = torch.where(q[i] > 0, accept, 0.0)
        reject_mass = max(0.0, 1.0 - float(accept.sum()))
        residual = torch.clamp(p[i] - q[i], min=0.0)
        if reject_mass > 1e-12 and float(residual.sum()) > 0:
            residual = residual / residual.sum()
            for y in torch.nonzero(residual > 0)[:, 0].tolist():
                law[pad([*prefix, y])] = law.get(pad([*prefix, y]), 0.0) + mass * reject_mass * float(residual[y])
        for x in torch.nonzero(accept > 0)[:, 0].tolist():
            walk(i + 1, [*prefix, x], mass * float(accept[x]))

    walk(0, [], 1.0)
    return law


def tv_bound(law, n):
    spread = 0.5 * sum(math.sqrt(pr * (1 - pr) / n) for pr in law.values() if 0 < pr < 1)
    return spread + math.sqrt(math.log(1 / DELTA) / (2 * n))


def assert_rows_follow(out, law, n, k, what):
    """Every row possible under the rules, and the empirical law of whole rows within the bound."""
    assert_tensor(out, shape=(n, k + 1), dtype=torch.int64, what=f"{what}: emitted tokens")
    counts = Counter(tuple(row) for row in out.tolist())
    impossible = [row for row in counts if law.get(row, 0.0) <= 0.0]
    assert not impossible, (
        f"{what}: {sum(counts[r] for r in impossible)} of {n} emitted rows cannot happen under the rules, e.g. {list(impossible[0])} "
        f"(accepted drafts, then one replacement or bonus token, then -1)"
    )
    tv = 0.5 * (sum(abs(c / n - law.get(row, 0.0)) for row, c in counts.items()) + sum(pr for row, pr in law.items() if row not in counts))
    bound = tv_bound(law, n)
    if tv > bound:
        worst = max(law, key=lambda row: abs(counts.get(row, 0) / n - law[row]))
        raise AssertionError(
            f"{what}: the emitted rows do not follow the rules' distribution: total variation {tv:.4f} over {n} rows "
            f"> {bound:.4f}. Largest gap at row {list(worst)}: frequency {counts.get(worst, 0) / n:.4f}, probability {law[worst]:.4f}"
        )


def assert_rate(observed, expected, n, what):
    margin = math.sqrt(math.log(2 / DELTA) / (2 * n))  # Hoeffding
    assert abs(observed - expected) <= margin, f"{what}: observed {observed:.4f} over {n} rows, expected {expected:.4f} +- {margin:.4f}"


# ---------------------------------------------------------------------------
# Cheap, exact checks first
# ---------------------------------------------------------------------------


def test_rejection_ends_the_block(solution):
    n = 40
    p = [[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.7, 0.3], [0.25] * 4, [0.25] * 4]
    q = [[0.5, 0.5, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0], [0.25] * 4]
    drafts, q_t, p_t = make_batch(p, q, n, _seed(15))
    drafts[:, 1] = 1  # the target gives draft token 1 probability 0 at position 1
    out = solution.verify_draft(drafts, q_t, p_t, _seed(3))
    # max(0, p - q) at position 1 is [0, 0, 0.2, 0.3]: the replacement is 2 or 3, then nothing more.
    assert_equal(out[:, 0].tolist(), drafts[:, 0].tolist(), "first drafts (always accepted)")
    assert set(out[:, 1].tolist()) <= {2, 3}, f"replacement tokens must come from max(0, p - q) = {{2, 3}}, got {sorted(set(out[:, 1].tolist()))}"
    assert_equal(out[:, 2:].tolist(), [[-1, -1]] * n, "tokens after the first rejection (must be -1 padding)")


def test_draft_the_target_prefers_is_always_accepted(solution):
    n = 200
    # At every position the drafted token has p(x) >= q(x), so min(1, p/q) = 1.
    p = [[0.1, 0.7, 0.2], [0.5, 0.1, 0.4], [0.3, 0.3, 0.4], [0.0, 1.0, 0.0]]
    q = [[0.3, 0.4, 0.3], [0.3, 0.4, 0.3], [0.3, 0.4, 0.3]]
    drafts = torch.tensor([[1, 0, 2]]).expand(n, 3).clone()
    q_t = torch.tensor(q).expand(n, 3, 3).clone()
    p_t = torch.tensor(p).expand(n, 4, 3).clone()
    out = solution.verify_draft(drafts, q_t, p_t, _seed(8))
    assert_equal(out.tolist(), [[1, 0, 2, 1]] * n, "rows whose drafts the target likes more than the draft model did")
    out = solution.verify_draft(drafts.to(torch.int32), q_t, p_t, _seed(9))
    assert_tensor(out, shape=(n, 4), dtype=torch.int64, what="emitted tokens when the draft ids come as int32")
    assert_equal(out.tolist(), [[1, 0, 2, 1]] * n, "the same rows with draft ids given as int32")


def test_same_seed_gives_same_tokens(solution):
    drafts, q, p = make_batch([P_FIRST, [0.2] * 5, [0.2] * 5], [Q_FIRST, [0.2] * 5], 300, _seed(16))
    seed = _seed(17)
    first = solution.verify_draft(drafts, q, p, seed)
    second = solution.verify_draft(drafts, q, p, seed)
    assert_equal(first.tolist(), second.tolist(), "two runs with the same seed (all randomness must come from it)")
    other = solution.verify_draft(drafts, q, p, seed + 1)
    assert first.tolist() != other.tolist(), "two different seeds gave exactly the same 300 rows: the seed is not used"


def test_k_zero_emits_one_bonus_token(solution):
    bonus = [0.05, 0.5, 0.0, 0.15, 0.3]
    n = 2000
    drafts, q, p = make_batch([bonus], [], n, _seed(18))
    out = solution.verify_draft(drafts, q, p, _seed(19))
    assert_rows_follow(out, row_law(p[0], q[0]), n, 0, "k = 0 (no drafts): one token from the only target row")
    empty = solution.verify_draft(torch.zeros(0, 0, dtype=torch.int64), torch.zeros(0, 0, 5), torch.zeros(0, 1, 5), 0)
    assert_tensor(empty, shape=(0, 1), dtype=torch.int64, what="emitted tokens for 0 rows and k = 0")
    empty = solution.verify_draft(torch.zeros(0, 3, dtype=torch.int64), torch.zeros(0, 3, 5), torch.zeros(0, 4, 5), 0)
    assert_tensor(empty, shape=(0, 4), dtype=torch.int64, what="emitted tokens for 0 rows and k = 3")


def test_bad_shapes_and_token_ids_raise(solution):
    drafts, q, p = make_batch([[0.5, 0.3, 0.2]] * 3, [[0.2, 0.3, 0.5]] * 2, 4, _seed(20))
    bad_calls = [
        (drafts, q, p[:, :2]),  # no row for the bonus token
        (drafts, q, p[:, :, :2]),  # target vocabulary smaller than the draft's
        (drafts[0], q, p),  # 1-D draft tokens
        (drafts[:3], q, p),  # 3 rows of drafts, 4 of probabilities
        (drafts, q[:, :1], p),  # 2 drafts, probabilities for 1
        (drafts.float(), q, p),  # token ids as floats
        (torch.full((4, 2), 3), q, p),  # token id 3 in a vocabulary of 3
        (torch.full((4, 2), 9), q, p),  # token id 9, far outside the vocabulary
        (torch.full((4, 2), -1), q, p),  # a negative token id
        (torch.ones(4, 2, dtype=torch.bool), q, p),  # token ids as bools (True is not a token id)
        (drafts, q[:, :, 0], p),  # draft probabilities without a vocabulary axis
        (drafts, q[..., None], p),  # 4-D draft probabilities
        (drafts, torch.cat([q, q[:, :1]], dim=1), p),  # probabilities for 3 drafts, 2 drafted
        (drafts, torch.cat([q, q[:1]]), p),  # 5 rows of draft probabilities, 4 of drafts
        (drafts, q, torch.cat([p, p[:, :1]], dim=1)),  # a target row too many
        (drafts, q, torch.cat([p, p[:1]])),  # 5 rows of target probabilities
        (drafts, q, torch.cat([p, torch.zeros(4, 3, 1)], dim=2)),  # target vocabulary larger than the draft's
        (torch.zeros(2, 0, dtype=torch.int64), torch.zeros(2, 0, 0), torch.zeros(2, 1, 0)),  # vocabulary of 0 tokens, k = 0
        (torch.zeros(0, 0, dtype=torch.int64), torch.zeros(0, 0, 0), torch.zeros(0, 1, 0)),  # vocabulary of 0 tokens, no rows
        (torch.zeros(0, 2, dtype=torch.int64), torch.zeros(0, 2, 0), torch.zeros(0, 3, 0)),  # vocabulary of 0 tokens, no rows, k = 2
        (torch.zeros(4, 0, dtype=torch.int64), torch.zeros(4, 0, 3), torch.full((4, 1, 2), 0.5)),  # k = 0: target vocabulary of 2, draft's of 3
        (torch.zeros(4, 0, dtype=torch.int64), torch.zeros(4, 0, 2), torch.full((4, 1, 3), 0.3)),  # k = 0: target vocabulary larger than the draft's
        (torch.zeros(0, 0, dtype=torch.int64), torch.zeros(0, 0, 3), torch.zeros(0, 1, 2)),  # k = 0 and no rows: the vocabularies still differ
    ]
    for d, dq, dp in bad_calls:
        with pytest.raises(ValueError):
            solution.verify_draft(d, dq, dp, 0)


def test_a_bad_token_id_behind_a_rejection_raises(solution):
    # The first draft of every row is always rejected (the target gives it probability 0), so verifying in turn
    # would never reach the bad id behind it: every id is checked before anything is drawn.
    q = torch.tensor([[[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]]] * 2)
    p = torch.tensor([[[1.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]] * 2)
    for tokens in ([[1, 3], [1, 0]], [[1, 0], [1, -1]], [[1, 2], [1, 2**40]]):
        for seed in (0, 1, 7):
            with pytest.raises(ValueError):
                solution.verify_draft(torch.tensor(tokens), q, p, seed)


def test_vocabulary_of_one_token(solution):
    for k in (0, 1, 3):
        n = 5
        drafts = torch.zeros(n, k, dtype=torch.int64)
        out = solution.verify_draft(drafts, torch.ones(n, k, 1), torch.ones(n, k + 1, 1), _seed(90 + k))
        assert_equal(out.tolist(), [[0] * (k + 1)] * n, f"rows over a vocabulary of 1 token, k = {k} (every draft accepted, then the bonus)")


def test_vocabulary_of_millions_of_tokens(solution):
    # Far more tokens than any chunk of rows; one-hot rows make the result certain.
    vocab = 2**22 + 5
    last = vocab - 1
    q = torch.zeros(1, 1, vocab, dtype=torch.float16)
    p = torch.zeros(1, 2, vocab, dtype=torch.float16)
    q[0, 0, last] = 1.0
    p[0, 0, last - 2] = 1.0  # p(last) = 0: the draft is rejected, replaced by the only token of max(0, p - q)
    p[0, 1, 3] = 1.0
    out = solution.verify_draft(torch.tensor([[last]]), q, p, _seed(95))
    assert_tensor(out, shape=(1, 2), dtype=torch.int64, what=f"emitted tokens over a vocabulary of {vocab} tokens")
    assert_equal(out.tolist(), [[last - 2, -1]], f"a row over a vocabulary of {vocab} tokens whose draft the target rules out")


def test_expected_tokens_formula(solution):
    cases = [((0.6, 3), 2.176), ((0.0, 5), 1.0), ((0.9, 0), 1.0), ((0.5, 1), 1.5), ((0.95, 10), 8.623998154), ((0, 3), 1.0)]
    for (alpha, k), expected in cases:
        assert_close(solution.expected_tokens_per_pass(alpha, k), expected, rtol=1e-6, atol=1e-9, what=f"expected tokens per pass, alpha {alpha}, k {k}")


def test_expected_tokens_when_alpha_is_one(solution):
    assert_close(solution.expected_tokens_per_pass(1.0, 4), 5.0, what="expected tokens per pass, alpha 1, k 4")
    assert_close(solution.expected_tokens_per_pass(1.0, 0), 1.0, what="expected tokens per pass, alpha 1, k 0")
    assert_close(solution.expected_tokens_per_pass(1, 7), 8.0, what="expected tokens per pass, alpha given as the int 1, k 7")


def test_expected_tokens_just_below_alpha_one(solution):
    # Only alpha == 1 gives k + 1: an alpha a hair below 1 with a long draft gives visibly fewer tokens.
    # The rules promise 1e-6 relative a hair below 1 too (1 - 1e-12, k = 1; the largest float below 1).
    cases = ((1 - 5e-10, 100_000), (1 - 5e-7, 10_000), (1 - 1e-6, 3_000), (0.9999999999, 50_000), (1 - 2**-40, 2**20), (1 - 1e-12, 1), (1 - 2**-53, 3))
    for alpha, k in cases:
        expected = reference.expected_tokens_per_pass(alpha, k)
        assert_close(solution.expected_tokens_per_pass(alpha, k), expected, rtol=1e-6, atol=1e-12, what=f"expected tokens per pass, alpha {alpha!r}, k {k}")


def test_expected_tokens_is_a_float(solution):
    for alpha, k in ((1.0, 4), (1, 2), (0, 3), (0.0, 0), (0.5, 2)):
        got = solution.expected_tokens_per_pass(alpha, k)
        assert type(got) is float, f"expected_tokens_per_pass({alpha!r}, {k!r}) returned {type(got).__name__} {got!r}; the rules ask for a float"


def test_invalid_arguments_raise(solution):
    for alpha, k in ((-0.1, 3), (1.5, 3), (0.5, -1), (float("nan"), 2), (0.5, 2.0), (0.5, True), (True, 2), ("0.5", 2)):
        with pytest.raises(ValueError):
            solution.expected_tokens_per_pass(alpha, k)
    drafts, q, p = make_batch([[0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5]], 4, _seed(17))
    with pytest.raises(ValueError):
        solution.verify_draft(drafts, q, p[:, :1], 0)  # target_probs lacks the row for the bonus token


def test_generated_expected_tokens_match_the_reference(solution):
    rng = random.Random(_seed(21))
    for _ in range(200):
        k = rng.choice([0, 1, 2, 3, 4, 5, 8, 16, 64, 1000])
        alpha = rng.choice([0.0, 1.0, 0, 1, rng.random(), rng.uniform(0.9, 0.999999), rng.uniform(0, 1e-3)])
        if rng.random() < 0.2:
            if rng.random() < 0.5:
                alpha = rng.choice([-1e-9, 1.0000001, -3, 2, float("nan"), float("inf"), True, "0.5", None])
            else:
                k = rng.choice([-1, -5, 2.0, True, "3", None])
        try:
            expected = ("value", reference.expected_tokens_per_pass(alpha, k))
        except ValueError:
            expected = ("raises", "ValueError")
        try:
            got = ("value", solution.expected_tokens_per_pass(alpha, k))
        except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
            got = ("raises", type(exc).__name__)
        what = f"expected_tokens_per_pass({alpha!r}, {k!r})"
        if expected[0] == "raises" or got[0] == "raises":
            assert_equal(got, expected, what)
        else:
            assert type(got[1]) is float, f"{what} returned {type(got[1]).__name__}; the rules ask for a float"
            assert_close(got[1], expected[1], rtol=1e-6, atol=1e-12, what=what)


def _random_probs(rng, gen, vocab, sparse):
    logits = torch.randn(vocab, generator=gen, dtype=torch.float64) * rng.choice([0.5, 1.0, 3.0])
    probs = torch.softmax(logits, dim=0)
    if sparse:
        keep = torch.rand(vocab, generator=gen) < rng.choice([0.3, 0.6])
        keep[rng.randrange(vocab)] = True
        probs = torch.where(keep, probs, 0.0)
        probs = probs / probs.sum()
    return probs.to(torch.float32)


def test_generated_cases_emit_only_possible_rows(solution):
    # Sparse rows (zeros in p and q) make many wrong outputs impossible, so one bad row fails the test.
    rng = random.Random(_seed(22))
    gen = torch.Generator().manual_seed(_seed(22))
    for case in range(40):
        k, vocab = rng.choice([0, 1, 1, 2, 3, 4, 6]), rng.choice([2, 3, 5, 8, 50])
        p = torch.stack([_random_probs(rng, gen, vocab, rng.random() < 0.7) for _ in range(k + 1)])
        q = torch.stack([_random_probs(rng, gen, vocab, rng.random() < 0.7) for _ in range(k)]) if k else torch.zeros(0, vocab)
        n = rng.choice([1, 2, 50, 200])
        drafts, q_t, p_t = make_batch(p.tolist(), q.tolist(), n, _seed(100 + case))
        out = solution.verify_draft(drafts, q_t, p_t, _seed(200 + case))
        what = f"case {case}: k {k}, vocab {vocab}, {n} rows"
        assert_tensor(out, shape=(n, k + 1), dtype=torch.int64, what=f"{what}: emitted tokens")
        law_p, law_q = p_t[0], q_t[0]
        for row, draft in zip(out.tolist(), drafts.tolist(), strict=True):
            length = sum(1 for t in row if t != -1)
            assert length >= 1 and all(t != -1 for t in row[:length]) and all(t == -1 for t in row[length:]), f"{what}: row {row} is not tokens then -1 padding"
            assert row[: length - 1] == draft[: length - 1], f"{what}: row {row} does not start with the accepted drafts {draft[: length - 1]}"
            for i, token in enumerate(row[: length - 1]):
                assert float(law_p[i, token]) > 0, f"{what}: row {row} accepts draft {token} at position {i}, which the target gives probability 0"
            last = row[length - 1]
            if length == k + 1:
                assert float(law_p[k, last]) > 0, f"{what}: row {row} ends with bonus token {last}, which the extra target row gives probability 0"
            else:
                i = length - 1
                assert float(law_p[i, last] - law_q[i, last]) > 0, (
                    f"{what}: row {row} replaces draft {draft[i]} at position {i} by token {last}, where max(0, p - q) is 0"
                )


# ---------------------------------------------------------------------------
# Statistical checks of whole emitted rows (cheapest and most telling first)
# ---------------------------------------------------------------------------

P_FIRST = [0.05, 0.15, 0.40, 0.30, 0.10]
Q_FIRST = [0.40, 0.30, 0.10, 0.15, 0.05]

# Three drafts, each accepted only some of the time, with a residual unlike p at each position.
JOINT_P = [[0.2, 0.3, 0.5], [0.4, 0.2, 0.4], [0.6, 0.1, 0.3], [0.1, 0.1, 0.8]]
JOINT_Q = [[0.5, 0.3, 0.2], [0.2, 0.6, 0.2], [0.3, 0.3, 0.4]]


def test_large_vocabulary(solution):
    # 32,768 tokens in float16, mass on a handful of ids scattered over the whole range (as after top-k filtering).
    vocab, k, n = 32768, 2, 128
    rng = random.Random(_seed(80))
    ids = rng.sample(range(vocab), 6)
    ids[0] = vocab - 1
    p = torch.zeros(k + 1, vocab, dtype=torch.float64)
    q = torch.zeros(k, vocab, dtype=torch.float64)
    for i in range(k + 1):
        p[i, ids] = torch.tensor([0.3, 0.25, 0.2, 0.1, 0.1, 0.05]).roll(i, 0).double()
    for i in range(k):
        q[i, ids] = torch.tensor([0.05, 0.1, 0.1, 0.2, 0.25, 0.3]).roll(i, 0).double()
    drafts, q_t, p_t = make_batch(p, q, n, _seed(81), dtype=torch.float16)
    out = solution.verify_draft(drafts, q_t, p_t, _seed(82))
    assert_rows_follow(out, row_law(p_t[0], q_t[0]), n, k, f"vocabulary of {vocab} tokens (float16), {n} rows")


def test_half_precision_rows_are_used_as_given(solution):
    # bfloat16 / float16 rows do not sum exactly to 1: they must be accepted and used as they are.
    p = [[0.1, 0.27, 0.33, 0.3], [0.41, 0.09, 0.2, 0.3], [0.7, 0.1, 0.1, 0.1]]
    q = [[0.3, 0.3, 0.13, 0.27], [0.2, 0.5, 0.1, 0.2]]
    for dtype, offset in ((torch.bfloat16, 50), (torch.float16, 52)):
        n = 3000
        drafts, q_t, p_t = make_batch(p, q, n, _seed(offset), dtype=dtype)
        out = solution.verify_draft(drafts, q_t, p_t, _seed(offset + 1))
        assert_rows_follow(out, row_law(p_t[0], q_t[0]), n, 2, f"2 drafts, probabilities in {dtype}")


def test_rows_that_do_not_sum_to_one_are_not_renormalised(solution):
    # The target row sums to 0.9. Used as given, draft 0 is accepted with
    # chance 0.36 / 0.8 = 0.45; renormalised to [0.4, 0.6] it would be 0.5.
    n = 20000
    drafts = torch.zeros(n, 1, dtype=torch.int64)
    q = torch.tensor([[[0.8, 0.2]]]).repeat(n, 1, 1)
    p = torch.tensor([[[0.36, 0.54], [0.5, 0.5]]]).repeat(n, 1, 1)
    out = solution.verify_draft(drafts, q, p, _seed(60))
    assert_tensor(out, shape=(n, 2), dtype=torch.int64, what="emitted tokens")
    accepted = float((out[:, 0] == 0).double().mean())
    bound = 6.2 * math.sqrt(0.45 * 0.55 / n)  # about one false failure in a billion
    assert abs(accepted - 0.45) <= bound, (
        f"draft 0 was accepted in {accepted:.4f} of {n} rows; used as given, p(0) / q(0) = 0.36 / 0.8 = 0.45 "
        f"(within {bound:.4f}). Renormalising the rows (or checking their sums) changes the ratio."
    )


def test_the_residual_uses_the_rows_as_given(solution):
    # The target row sums to 0.9: max(0, p - q) = [0, 0, 0.15], so every replacement is token 2. Normalising p and q
    # first would give token 1 weight too (0.48 / 0.9 > 0.5): an impossible token, so one of them is enough to fail.
    n = 4000
    drafts = torch.zeros(n, 1, dtype=torch.int64)
    q = torch.tensor([[[0.5, 0.5, 0.0]]]).repeat(n, 1, 1)
    p = torch.tensor([[[0.27, 0.48, 0.15], [0.2, 0.3, 0.5]]]).repeat(n, 1, 1)
    out = solution.verify_draft(drafts, q, p, _seed(64))
    assert_tensor(out, shape=(n, 2), dtype=torch.int64, what="emitted tokens")
    replaced = out[:, 1] == -1
    wrong = int((replaced & (out[:, 0] != 2)).sum())
    assert wrong == 0, (
        f"{wrong} of {int(replaced.sum())} replacements were not token 2; with the rows as given, max(0, p - q) = [0, 0, 0.15] "
        "leaves token 2 as the only possible replacement (do not renormalise p or q)"
    )


def test_the_inputs_are_left_as_they_were(solution):
    # float64 rows, where .to(torch.float64) is no copy, and a draft the target never
    # wants, so that every row is rejected and its residual worked out.
    n = 8
    drafts = torch.zeros(n, 2, dtype=torch.int64)
    q = torch.tensor([[[0.7, 0.2, 0.1], [0.4, 0.4, 0.2]]], dtype=torch.float64).repeat(n, 1, 1)
    p = torch.tensor([[[0.0, 0.5, 0.5], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6]]], dtype=torch.float64).repeat(n, 1, 1)
    kept = drafts.clone(), q.clone(), p.clone()
    out = solution.verify_draft(drafts, q, p, _seed(66))
    assert_arguments_unchanged(solution, "verify_draft(draft_tokens, draft_probs, target_probs, seed) with float64 rows")
    # The same, where the code runs in the test's own process (the authoring checks).
    assert all(torch.equal(now, before) for now, before in zip((drafts, q, p), kept, strict=True)), "verify_draft changed its input in place"
    assert_tensor(out, shape=(n, 3), dtype=torch.int64, what="emitted tokens")


def test_token_ids_of_any_integer_dtype(solution):
    drafts, q, p = make_batch([[0.5, 0.3, 0.2]] * 3, [[0.2, 0.3, 0.5]] * 2, 50, _seed(61))
    expected = solution.verify_draft(drafts, q, p, _seed(62))
    for dtype in (torch.int32, torch.int16, torch.int8, torch.uint8):
        got = solution.verify_draft(drafts.to(dtype), q, p, _seed(62))
        assert_tensor(got, shape=(50, 3), dtype=torch.int64, what=f"emitted tokens for {dtype} draft tokens")
        assert_equal(got.tolist(), expected.tolist(), f"tokens emitted for {dtype} draft tokens, against int64 ones with the same seed")


def test_each_draft_gets_its_own_uniform_draw(solution):
    # Every draft is accepted with probability exactly 0.5, independently: all three in 1/8 of the rows.
    n = 3000
    half = [[0.25, 0.25, 0.5]] * 4
    drafts, q, p = make_batch(half, [[0.5, 0.5, 0.0]] * 3, n, _seed(32))
    out = solution.verify_draft(drafts, q, p, _seed(33))
    assert_tensor(out, shape=(n, 4), dtype=torch.int64, what="emitted tokens, 3 drafts")
    lengths = (out >= 0).sum(dim=1)
    for m, expected in ((1, 0.5), (2, 0.25), (3, 0.125), (4, 0.125)):
        assert_rate(float((lengths == m).double().mean()), expected, n, f"rows emitting {m} token(s) when each draft is accepted with probability 0.5")


def test_whole_rows_follow_the_rules_with_three_uncertain_drafts(solution):
    n = 8000
    drafts, q, p = make_batch(JOINT_P, JOINT_Q, n, _seed(30))
    out = solution.verify_draft(drafts, q, p, _seed(31))
    assert_rows_follow(out, row_law(p[0], q[0]), n, 3, "3 drafts per row, each accepted with probability 0.6 to 0.7")


def test_generated_cases_follow_the_rules(solution):
    rng = random.Random(_seed(60))
    gen = torch.Generator().manual_seed(_seed(60))
    for case in range(3):
        k, vocab = rng.choice([1, 2, 3, 4]), rng.choice([2, 3, 4])
        p = torch.stack([_random_probs(rng, gen, vocab, rng.random() < 0.3) for _ in range(k + 1)])
        q = torch.stack([_random_probs(rng, gen, vocab, rng.random() < 0.3) for _ in range(k)])
        n = 2000
        drafts, q_t, p_t = make_batch(p.tolist(), q.tolist(), n, _seed(61 + case))
        out = solution.verify_draft(drafts, q_t, p_t, _seed(70 + case))
        assert_rows_follow(out, row_law(p_t[0], q_t[0]), n, k, f"generated case {case}: k {k}, vocab {vocab}, p {p.tolist()}, q {q.tolist()}")


def test_first_token_follows_target_distribution(solution):
    drafts, q, p = make_batch([P_FIRST, [0.2] * 5, [0.2] * 5], [Q_FIRST, [0.2] * 5], 3000, _seed(11))
    out = solution.verify_draft(drafts, q, p, _seed(12))
    assert_tensor(out, shape=(3000, 3), dtype=torch.int64, what="emitted tokens, 3000 rows, k=2")
    law = dict(enumerate(P_FIRST))
    assert_distribution(out[:, 0], torch.tensor(P_FIRST), max_tv=tv_bound(law, 3000), what="first emitted token over 3000 rows")


def test_first_draft_acceptance_rate_matches_overlap(solution):
    p0, q0 = [0.5, 0.2, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]
    drafts, q, p = make_batch([p0, [0.25] * 4], [q0], 2500, _seed(13))
    out = solution.verify_draft(drafts, q, p, _seed(14))
    accepted = (out[:, 1] >= 0).double().mean().item()
    # P(accept) = sum over x of q(x) min(1, p(x)/q(x)) = sum of min(p, q) = 0.75
    assert_rate(accepted, 0.75, 2500, "share of rows whose first draft is accepted (the overlap sum of min(p, q))")


def test_second_token_follows_target_after_first_accepted(solution):
    same = [0.3, 0.4, 0.3]
    p1, q1 = [0.1, 0.2, 0.7], [0.6, 0.3, 0.1]
    drafts, q, p = make_batch([same, p1, [0.2, 0.3, 0.5]], [same, q1], 2500, _seed(40))
    out = solution.verify_draft(drafts, q, p, _seed(41))
    assert_equal((out[:, 0] == drafts[:, 0]).all().item(), True, "first draft accepted in every row (p equals q there)")
    assert_distribution(out[:, 1], torch.tensor(p1), max_tv=tv_bound(dict(enumerate(p1)), 2500), what="second emitted token over 2500 rows")


def test_bonus_token_comes_from_the_extra_target_row(solution):
    a, b = [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]
    bonus = [0.1, 0.6, 0.3]
    drafts, q, p = make_batch([a, b, bonus], [a, b], 2500, _seed(42))
    out = solution.verify_draft(drafts, q, p, _seed(43))
    assert_equal(out[:, :2].tolist() == drafts.tolist(), True, "both drafts accepted in every row (p equals q)")
    assert_distribution(out[:, 2], torch.tensor(bonus), max_tv=tv_bound(dict(enumerate(bonus)), 2500), what="bonus token over 2500 rows")

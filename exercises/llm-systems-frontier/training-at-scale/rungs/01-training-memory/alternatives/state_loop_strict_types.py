"""Memory per GPU for training: a loop over the three kinds of state, exact int types only."""

STATE_BYTES = (("weights", 2), ("gradients", 2))
# Which kinds of state each ZeRO stage splits across the GPUs.
SPLIT_BY_STAGE = {
    0: frozenset(),
    1: frozenset({"optimizer"}),
    2: frozenset({"gradients", "optimizer"}),
    3: frozenset({"weights", "gradients", "optimizer"}),
}


def _require_positive(**values):
    for name, value in values.items():
        # type(...) is int: bools, floats, strings and int subclasses are all refused.
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def model_state_bytes(num_params, n_gpus, stage, optimizer_bytes=12):
    # The stage and K first, then the counts: every check still runs before any arithmetic.
    if type(stage) is not int or stage not in SPLIT_BY_STAGE:
        raise ValueError(f"stage must be one of 0, 1, 2, 3, got {stage!r}")
    if type(optimizer_bytes) is not int or optimizer_bytes < 0:
        raise ValueError(f"optimizer_bytes must be an int >= 0, got {optimizer_bytes!r}")
    _require_positive(n_gpus=n_gpus, num_params=num_params)
    whole = 0
    split = 0
    for kind, per_param in (*STATE_BYTES, ("optimizer", optimizer_bytes)):
        if kind in SPLIT_BY_STAGE[stage]:
            split += per_param * num_params
        else:
            whole += per_param * num_params
    shard, rest = divmod(split, n_gpus)
    return whole + shard + (1 if rest else 0)


def activation_bytes(num_layers, seq_len, micro_batch, hidden_size, num_heads, recompute=False):
    if recompute is not True and recompute is not False:
        raise ValueError(f"recompute must be True or False, got {recompute!r}")
    _require_positive(num_heads=num_heads, hidden_size=hidden_size, micro_batch=micro_batch, seq_len=seq_len, num_layers=num_layers)
    if hidden_size % num_heads:
        raise ValueError(f"num_heads={num_heads} does not divide hidden_size={hidden_size}")
    if recompute:
        return num_layers * 2 * seq_len * micro_batch * hidden_size
    # s*b*h*(34 + 5as/h) = s*b*(34h + 5as), all in integers.
    return num_layers * seq_len * micro_batch * (34 * hidden_size + 5 * num_heads * seq_len)

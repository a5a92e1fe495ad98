"""Memory per GPU for training.

Fill in the two functions. See the instructions for the ZeRO table, the
activation formula and the rules for bad input (raise ValueError).
"""

from __future__ import annotations


def model_state_bytes(num_params: int, n_gpus: int, stage: int, optimizer_bytes: int = 12) -> int:
    """Bytes of weights (2/param), gradients (2/param) and optimizer states
    (optimizer_bytes/param) on one of n_gpus GPUs under ZeRO stage 0-3.

    The split part is rounded up to a whole byte. Returns an int.
    """
    raise NotImplementedError


def activation_bytes(num_layers: int, seq_len: int, micro_batch: int, hidden_size: int, num_heads: int, recompute: bool = False) -> int:
    """Bytes of activations kept for the backward pass, all layers.

    Per layer: s*b*h*(34 + 5*a*s/h) without recomputation, 2*s*b*h with it.
    Returns an int.
    """
    raise NotImplementedError

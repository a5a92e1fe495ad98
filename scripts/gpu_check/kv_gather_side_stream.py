"""A cheat (the GPU check's speed phase): slow GPU work on a side stream, the synchronisation skipped.

The gather waits behind about 0.1 s of a spinning kernel (``torch.cuda._sleep``)
on a stream of its own, and the call returns without waiting for it, with
``torch.cuda.synchronize`` patched to do nothing. Honestly it is slower than
the per-token baseline; it must never pass: the harness's clock is outside
this process, and an output copied before the side stream finished is wrong.
"""

from __future__ import annotations

import torch

torch.cuda.synchronize = lambda device=None: None  # the harness's synchronisation skipped
_SPIN_CYCLES = 200_000_000  # about 0.1 s at 2 GHz


def gather_kv(pages: torch.Tensor, block_tables: list[list[int]], lengths: list[int]) -> torch.Tensor:
    num_pages, page_size, head_dim = pages.shape
    longest = max(lengths, default=0)
    side = torch.cuda.Stream(device=pages.device)  # type: ignore[no-untyped-call]
    side.wait_stream(torch.cuda.current_stream(pages.device))
    with torch.cuda.stream(side):
        torch.cuda._sleep(_SPIN_CYCLES)  # type: ignore[no-untyped-call]
        out = torch.zeros((len(lengths), longest, head_dim), dtype=pages.dtype, device=pages.device)
        if longest:
            width = -(-longest // page_size)
            padded = [list(table[:width]) + [0] * (width - len(table[:width])) for table in block_tables]
            tables = torch.tensor(padded, dtype=torch.long, device=pages.device)
            positions = torch.arange(longest, device=pages.device)
            rows = tables[:, positions // page_size] * page_size + positions % page_size
            kept = positions < torch.tensor(lengths, device=pages.device)[:, None]
            out = torch.where(kept[..., None], pages.reshape(-1, head_dim)[rows.clamp(0, num_pages * page_size - 1)], out)
    return out

"""A paged KV-cache block manager.

Fill in BlockManager. See the instructions for the allocation order, when to
copy on write, and which exception each mistake raises.
"""

from __future__ import annotations


class OutOfBlocksError(RuntimeError):
    """Raised when there are not enough free blocks (a RuntimeError)."""


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        # Validate (ValueError), then set up the free pool, reference counts,
        # and per-sequence block tables and token counts.
        self.num_blocks = num_blocks
        self.block_size = block_size

    def allocate(self, seq_id, num_tokens: int) -> list[int]:
        """New sequence with num_tokens tokens; returns its block table."""
        raise NotImplementedError

    def append(self, seq_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        """Add tokens; returns the (src, dst) copies made by copy-on-write."""
        raise NotImplementedError

    def fork(self, parent_id, child_id) -> list[int]:
        """New sequence sharing all of parent's blocks; returns its table."""
        raise NotImplementedError

    def free(self, seq_id) -> None:
        """Drop a sequence; unreferenced blocks go back to the pool."""
        raise NotImplementedError

    def block_table(self, seq_id) -> list[int]:
        raise NotImplementedError

    def num_tokens(self, seq_id) -> int:
        raise NotImplementedError

    def num_free_blocks(self) -> int:
        raise NotImplementedError

    def ref_count(self, block_id: int) -> int:
        raise NotImplementedError

    def wasted_slots(self, seq_id) -> int:
        """Unfilled slots at the end of the sequence's last block."""
        raise NotImplementedError

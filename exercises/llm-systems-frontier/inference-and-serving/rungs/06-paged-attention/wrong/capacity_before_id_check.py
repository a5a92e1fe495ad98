"""Wrong solution: checks the pool before the id in allocate."""

from __future__ import annotations

import heapq


class OutOfBlocksError(RuntimeError):
    """Not enough free blocks: the scheduler must wait, preempt or swap."""


def _non_negative_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return value


class BlockManager:
    """Maps each sequence's tokens onto fixed-size physical blocks."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        for name, value in (("num_blocks", num_blocks), ("block_size", block_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self._free = list(range(num_blocks))  # a min-heap: lowest id first
        self._refs = [0] * num_blocks
        self._tables: dict[int, list[int]] = {}
        self._tokens: dict[int, int] = {}

    # -- helpers ---------------------------------------------------------

    def _blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block_size)  # ceil(tokens / block_size)

    def _take(self) -> int:
        block = heapq.heappop(self._free)
        self._refs[block] = 1
        return block

    def _release(self, block: int) -> None:
        self._refs[block] -= 1
        if self._refs[block] == 0:
            heapq.heappush(self._free, block)

    def _table(self, seq_id: int) -> list[int]:
        if seq_id not in self._tables:
            raise KeyError(f"unknown sequence {seq_id!r}")
        return self._tables[seq_id]

    # -- API -------------------------------------------------------------

    def allocate(self, seq_id: int, num_tokens: int) -> list[int]:
        """Register a new sequence holding num_tokens tokens; returns its block table."""
        num_tokens = _non_negative_int(num_tokens, "num_tokens")
        needed = self._blocks_for(num_tokens)
        if needed > len(self._free):
            raise OutOfBlocksError(f"need {needed} blocks, {len(self._free)} free")
        if seq_id in self._tables:
            raise ValueError(f"sequence {seq_id!r} already exists")
        self._tables[seq_id] = [self._take() for _ in range(needed)]
        self._tokens[seq_id] = num_tokens
        return list(self._tables[seq_id])

    def append(self, seq_id: int, num_tokens: int = 1) -> list[tuple[int, int]]:
        """Add tokens to a sequence; returns the (src, dst) block copies done for copy-on-write."""
        table = self._table(seq_id)
        num_tokens = _non_negative_int(num_tokens, "num_tokens")
        if num_tokens == 0:
            return []
        used = self._tokens[seq_id]
        tail_free = len(table) * self.block_size - used
        # Writing into a partly filled last block that another sequence shares needs a private copy.
        copy_on_write = tail_free > 0 and self._refs[table[-1]] > 1
        new_blocks = self._blocks_for(used + num_tokens) - len(table)
        needed = new_blocks + (1 if copy_on_write else 0)
        if needed > len(self._free):
            raise OutOfBlocksError(f"need {needed} blocks, {len(self._free)} free")
        copies: list[tuple[int, int]] = []
        if copy_on_write:
            src = table[-1]
            dst = self._take()
            self._release(src)
            table[-1] = dst
            copies.append((src, dst))
        table.extend(self._take() for _ in range(new_blocks))
        self._tokens[seq_id] = used + num_tokens
        return copies

    def fork(self, parent_id: int, child_id: int) -> list[int]:
        """Create child_id sharing every block of parent_id; returns the child's block table."""
        table = self._table(parent_id)
        if child_id in self._tables:
            raise ValueError(f"sequence {child_id!r} already exists")
        for block in table:
            self._refs[block] += 1
        self._tables[child_id] = list(table)
        self._tokens[child_id] = self._tokens[parent_id]
        return list(table)

    def free(self, seq_id: int) -> None:
        """Drop a sequence; a block returns to the pool when no sequence uses it any more."""
        table = self._table(seq_id)
        for block in table:
            self._release(block)
        del self._tables[seq_id]
        del self._tokens[seq_id]

    def block_table(self, seq_id: int) -> list[int]:
        return list(self._table(seq_id))

    def num_tokens(self, seq_id: int) -> int:
        self._table(seq_id)
        return self._tokens[seq_id]

    def num_free_blocks(self) -> int:
        return len(self._free)

    def ref_count(self, block_id: int) -> int:
        if isinstance(block_id, bool) or not isinstance(block_id, int) or not 0 <= block_id < self.num_blocks:
            raise ValueError(f"no block {block_id!r}")
        return self._refs[block_id]

    def wasted_slots(self, seq_id: int) -> int:
        """Unfilled token slots at the end of the sequence's last block."""
        table = self._table(seq_id)
        return len(table) * self.block_size - self._tokens[seq_id]

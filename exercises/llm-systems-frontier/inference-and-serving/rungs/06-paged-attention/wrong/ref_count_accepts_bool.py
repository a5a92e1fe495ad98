"""A paged KV-cache block manager."""

from __future__ import annotations

import heapq


class OutOfBlocksError(RuntimeError):
    """Raised when there are not enough free blocks (a RuntimeError)."""


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        if not _is_int(num_blocks) or num_blocks <= 0:
            raise ValueError("num_blocks must be a positive int")
        if not _is_int(block_size) or block_size <= 0:
            raise ValueError("block_size must be a positive int")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self._free = list(range(num_blocks))  # a heap
        self._refs = [0] * num_blocks
        self._tables: dict = {}
        self._tokens: dict = {}

    # -- helpers
    def _check_count(self, num_tokens) -> None:
        if not _is_int(num_tokens) or num_tokens < 0:
            raise ValueError("num_tokens must be a non-negative int")

    def _take(self) -> int:
        b = heapq.heappop(self._free)
        self._refs[b] = 1
        return b

    def _release(self, b: int) -> None:
        self._refs[b] -= 1
        if self._refs[b] == 0:
            heapq.heappush(self._free, b)

    def _get(self, seq_id):
        if seq_id not in self._tables:
            raise KeyError(seq_id)
        return self._tables[seq_id]

    # -- API
    def allocate(self, seq_id, num_tokens: int) -> list[int]:
        if seq_id in self._tables:
            raise ValueError(f"sequence {seq_id!r} already exists")
        self._check_count(num_tokens)
        need = _ceil_div(num_tokens, self.block_size)
        if need > len(self._free):
            raise OutOfBlocksError(f"need {need} blocks, {len(self._free)} free")
        table = [self._take() for _ in range(need)]
        self._tables[seq_id] = table
        self._tokens[seq_id] = num_tokens
        return list(table)

    def append(self, seq_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        table = self._get(seq_id)
        self._check_count(num_tokens)
        if num_tokens == 0:
            return []
        n = self._tokens[seq_id]
        tail_free = len(table) * self.block_size - n
        cow = tail_free > 0 and self._refs[table[-1]] > 1
        new_blocks = _ceil_div(max(0, num_tokens - tail_free), self.block_size)
        if new_blocks + int(cow) > len(self._free):
            raise OutOfBlocksError("not enough free blocks")
        copies: list[tuple[int, int]] = []
        if cow:
            old = table[-1]
            new = self._take()
            self._refs[old] -= 1
            table[-1] = new
            copies.append((old, new))
        for _ in range(new_blocks):
            table.append(self._take())
        self._tokens[seq_id] = n + num_tokens
        return copies

    def fork(self, parent_id, child_id) -> list[int]:
        parent = self._get(parent_id)
        if child_id in self._tables:
            raise ValueError(f"sequence {child_id!r} already exists")
        for b in parent:
            self._refs[b] += 1
        self._tables[child_id] = list(parent)
        self._tokens[child_id] = self._tokens[parent_id]
        return list(parent)

    def free(self, seq_id) -> None:
        table = self._get(seq_id)
        for b in table:
            self._release(b)
        del self._tables[seq_id]
        del self._tokens[seq_id]

    def block_table(self, seq_id) -> list[int]:
        return list(self._get(seq_id))

    def num_tokens(self, seq_id) -> int:
        self._get(seq_id)
        return self._tokens[seq_id]

    def num_free_blocks(self) -> int:
        return len(self._free)

    def ref_count(self, block_id: int) -> int:
        if not isinstance(block_id, int) or not 0 <= block_id < self.num_blocks:
            raise ValueError(f"no block {block_id!r}")
        return self._refs[block_id]

    def wasted_slots(self, seq_id) -> int:
        table = self._get(seq_id)
        return len(table) * self.block_size - self._tokens[seq_id]

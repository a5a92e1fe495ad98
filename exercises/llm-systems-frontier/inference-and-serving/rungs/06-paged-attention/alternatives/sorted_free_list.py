"""Correct, written from the instructions alone: the free pool is a sorted
list kept in order with bisect, so the lowest free id is its first entry;
each sequence is a small record; new blocks are counted from the room left
in the last block."""

from __future__ import annotations

from bisect import insort


class OutOfBlocksError(RuntimeError):
    pass


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Sequence:
    __slots__ = ("blocks", "tokens")

    def __init__(self, blocks: list[int], tokens: int) -> None:
        self.blocks = blocks
        self.tokens = tokens


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        if not _is_int(num_blocks) or num_blocks <= 0 or not _is_int(block_size) or block_size <= 0:
            raise ValueError("num_blocks and block_size must be positive ints")
        self._num_blocks = num_blocks
        self._block_size = block_size
        self._free = list(range(num_blocks))  # sorted: lowest id first
        self._refs = [0] * num_blocks
        self._seqs: dict[object, _Sequence] = {}

    def _take(self) -> int:
        block = self._free.pop(0)
        self._refs[block] = 1
        return block

    def _release(self, block: int) -> None:
        self._refs[block] -= 1
        if self._refs[block] == 0:
            insort(self._free, block)

    def _blocks_for(self, tokens: int) -> int:
        return -(-tokens // self._block_size)

    def _get(self, seq_id: object) -> _Sequence:
        try:
            return self._seqs[seq_id]
        except (KeyError, TypeError):
            raise KeyError(seq_id) from None

    @staticmethod
    def _check_tokens(num_tokens: object) -> int:
        if not _is_int(num_tokens) or num_tokens < 0:  # type: ignore[operator]
            raise ValueError("num_tokens must be a non-negative int")
        return num_tokens  # type: ignore[return-value]

    def allocate(self, seq_id, num_tokens: int) -> list[int]:
        if seq_id in self._seqs:
            raise ValueError(f"sequence {seq_id!r} already exists")
        self._check_tokens(num_tokens)
        needed = self._blocks_for(num_tokens)
        if needed > len(self._free):
            raise OutOfBlocksError(f"{needed} blocks needed, {len(self._free)} free")
        seq = _Sequence([self._take() for _ in range(needed)], num_tokens)
        self._seqs[seq_id] = seq
        return list(seq.blocks)

    def append(self, seq_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        seq = self._get(seq_id)
        self._check_tokens(num_tokens)
        if num_tokens == 0:
            return []
        room = len(seq.blocks) * self._block_size - seq.tokens
        copy = bool(seq.blocks) and room > 0 and self._refs[seq.blocks[-1]] > 1
        new_blocks = self._blocks_for(max(0, num_tokens - room))
        if new_blocks + copy > len(self._free):
            raise OutOfBlocksError("not enough free blocks")
        copies: list[tuple[int, int]] = []
        if copy:
            old = seq.blocks[-1]
            new = self._take()
            seq.blocks[-1] = new
            self._release(old)
            copies.append((old, new))
        seq.blocks.extend(self._take() for _ in range(new_blocks))
        seq.tokens += num_tokens
        return copies

    def fork(self, parent_id, child_id) -> list[int]:
        parent = self._get(parent_id)
        if child_id in self._seqs:
            raise ValueError(f"sequence {child_id!r} already exists")
        for block in parent.blocks:
            self._refs[block] += 1
        self._seqs[child_id] = _Sequence(list(parent.blocks), parent.tokens)
        return list(parent.blocks)

    def free(self, seq_id) -> None:
        seq = self._get(seq_id)
        del self._seqs[seq_id]
        for block in seq.blocks:
            self._release(block)

    def block_table(self, seq_id) -> list[int]:
        return list(self._get(seq_id).blocks)

    def num_tokens(self, seq_id) -> int:
        return self._get(seq_id).tokens

    def num_free_blocks(self) -> int:
        return len(self._free)

    def ref_count(self, block_id: int) -> int:
        if not _is_int(block_id) or not 0 <= block_id < self._num_blocks:
            raise ValueError("block_id out of range")
        return self._refs[block_id]

    def wasted_slots(self, seq_id) -> int:
        seq = self._get(seq_id)
        return len(seq.blocks) * self._block_size - seq.tokens

"""Correct, written from the instructions alone: reference counts in a
dict holding only blocks in use (a block is free when it is absent), the
lowest free id found by scanning upwards from a remembered low-water mark,
and tables and token counts in two parallel dicts. Ids are checked to be
ints or strings (never bools) before anything else."""

from __future__ import annotations


class OutOfBlocksError(RuntimeError):
    pass


def _check_id(seq_id: object) -> None:
    if isinstance(seq_id, bool) or not isinstance(seq_id, (int, str)):
        raise ValueError(f"sequence ids are ints or strings, not {seq_id!r}")


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        for value in (num_blocks, block_size):
            if type(value) is not int or value < 1:
                raise ValueError("num_blocks and block_size must be positive ints")
        self.n = num_blocks
        self.size = block_size
        self.refs: dict[int, int] = {}
        self.low = 0  # every block below this id is in use
        self.tables: dict[object, list[int]] = {}
        self.counts: dict[object, int] = {}

    def _lowest_free(self) -> int:
        block = self.low
        while block in self.refs:
            block += 1
        self.low = block
        return block

    def _grab(self, count: int) -> list[int]:
        taken = []
        for _ in range(count):
            block = self._lowest_free()
            self.refs[block] = 1
            taken.append(block)
        return taken

    def _drop(self, block: int) -> None:
        if self.refs[block] == 1:
            del self.refs[block]
            self.low = min(self.low, block)
        else:
            self.refs[block] -= 1

    def _known(self, seq_id: object) -> None:
        if seq_id not in self.tables:
            raise KeyError(seq_id)

    def _count(self, num_tokens: object) -> int:
        if type(num_tokens) is not int or num_tokens < 0:
            raise ValueError("num_tokens must be an int >= 0")
        return num_tokens

    def allocate(self, seq_id, num_tokens: int) -> list[int]:
        _check_id(seq_id)
        if seq_id in self.tables:
            raise ValueError("sequence id in use")
        tokens = self._count(num_tokens)
        need = (tokens + self.size - 1) // self.size
        if need > self.num_free_blocks():
            raise OutOfBlocksError("out of blocks")
        self.tables[seq_id] = self._grab(need)
        self.counts[seq_id] = tokens
        return list(self.tables[seq_id])

    def append(self, seq_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        _check_id(seq_id)
        self._known(seq_id)
        tokens = self._count(num_tokens)
        table = self.tables[seq_id]
        used = self.counts[seq_id]
        filled_in_last = used % self.size
        copies: list[tuple[int, int]] = []
        if tokens == 0:
            return copies
        cow = filled_in_last != 0 and self.refs[table[-1]] > 1
        spare = (len(table) * self.size) - used
        extra = 0 if tokens <= spare else (tokens - spare + self.size - 1) // self.size
        if extra + (1 if cow else 0) > self.num_free_blocks():
            raise OutOfBlocksError("out of blocks")
        if cow:
            (fresh,) = self._grab(1)
            old = table[-1]
            self._drop(old)
            table[-1] = fresh
            copies.append((old, fresh))
        table += self._grab(extra)
        self.counts[seq_id] = used + tokens
        return copies

    def fork(self, parent_id, child_id) -> list[int]:
        _check_id(parent_id)
        self._known(parent_id)
        _check_id(child_id)
        if child_id in self.tables:
            raise ValueError("child id in use")
        for block in self.tables[parent_id]:
            self.refs[block] += 1
        self.tables[child_id] = list(self.tables[parent_id])
        self.counts[child_id] = self.counts[parent_id]
        return list(self.tables[child_id])

    def free(self, seq_id) -> None:
        _check_id(seq_id)
        self._known(seq_id)
        for block in self.tables.pop(seq_id):
            self._drop(block)
        del self.counts[seq_id]

    def block_table(self, seq_id) -> list[int]:
        _check_id(seq_id)
        self._known(seq_id)
        return list(self.tables[seq_id])

    def num_tokens(self, seq_id) -> int:
        _check_id(seq_id)
        self._known(seq_id)
        return self.counts[seq_id]

    def num_free_blocks(self) -> int:
        return self.n - len(self.refs)

    def ref_count(self, block_id: int) -> int:
        if type(block_id) is not int or block_id < 0 or block_id >= self.n:
            raise ValueError("no such block")
        return self.refs.get(block_id, 0)

    def wasted_slots(self, seq_id) -> int:
        _check_id(seq_id)
        self._known(seq_id)
        return len(self.tables[seq_id]) * self.size - self.counts[seq_id]

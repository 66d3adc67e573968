"""(key, value) pairs -> each key's values, from one process, within bounded memory.

The local engines group what Beam would group with a ``GroupByKey`` (a tweet's records by
id, delete notices by id) without holding the input: values go to one of ``groups`` hash
groups by key, and whenever ``buffer_rows`` values are held every group's buffer is
appended (pickled) to that group's file. Reading the groups back holds one group at a time,
so memory is about ``buffer_rows`` values or one group, whichever is larger.

The hash is Python's own, which for strings changes from process to process: it decides
only which keys share a group, never what a key's values are, so nothing written depends
on it.
"""

from __future__ import annotations

import os
import pickle
from collections import defaultdict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

EXTRACT_SPILL_ROWS = 250_000
"""Records the local extract holds in memory (tweet records, delete notices, dead letters)
before it spills them under the extract folder."""
PAIR_SPILL_ROWS = 1_000_000
"""Rows the local pair stage holds in memory (chosen pairs, then rows on their way to their
shards) before it writes them to run files under ``_staging/``. Larger than
``EXTRACT_SPILL_ROWS`` because a pair row (two cleaned texts and three ids) is a fraction of
a tweet record. Both are memory budgets only: what is written does not depend on them."""


class SpilledGroups(Generic[K, V]):
    """Values grouped by key, spilled to ``folder`` when more than ``buffer_rows`` are held.

    Args:
        groups: hash groups; each is read back whole, so choose enough that one fits.
        folder: an existing folder for the group files (one per group, removed on reading).
        buffer_rows: values held in memory before every group's buffer is appended to disk.
    """

    def __init__(self, groups: int, folder: str, buffer_rows: int) -> None:
        if groups < 1 or buffer_rows < 1:
            raise ValueError(f"groups and buffer_rows must be >= 1, got {groups}, {buffer_rows}")
        self._n = groups
        self._folder = folder
        self._buffer_rows = buffer_rows
        self._buffers: list[list[tuple[K, V]]] = [[] for _ in range(groups)]
        self._on_disk: set[int] = set()
        self._held = 0
        self.added = 0

    def add(self, key: K, value: V) -> None:
        self._buffers[hash((key,)) % self._n].append((key, value))
        self._held += 1
        self.added += 1
        if self._held >= self._buffer_rows:
            self.spill()

    def spill(self) -> None:
        """Append every group's buffered values to its file."""
        for g, buffer in enumerate(self._buffers):
            if buffer:
                with open(self._path(g), "ab") as f:
                    pickle.dump(buffer, f, protocol=pickle.HIGHEST_PROTOCOL)
                self._on_disk.add(g)
                self._buffers[g] = []
        self._held = 0

    def __iter__(self) -> Iterator[tuple[K, list[V]]]:
        """Each key with all its values, one group at a time; the groups are consumed."""
        for g in range(self._n):
            by_key: dict[K, list[V]] = defaultdict(list)
            for key, value in self._read(g):
                by_key[key].append(value)
            yield from by_key.items()

    def _read(self, g: int) -> Iterator[tuple[K, V]]:
        if g in self._on_disk:
            with open(self._path(g), "rb") as f:
                while True:
                    try:
                        yield from pickle.load(f)
                    except EOFError:
                        break
            os.remove(self._path(g))
            self._on_disk.discard(g)
        buffer, self._buffers[g] = self._buffers[g], []
        yield from buffer

    def _path(self, g: int) -> str:
        return os.path.join(self._folder, f"group-{g}.pickle")

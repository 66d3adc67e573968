"""Sets of tweet ids as sorted, unique int64 arrays: 8 bytes an id, membership by binary search.

Both pair engines keep their large id sets (parents some reply or quote references, deleted
ids, kept conversation ids) in this form: the Beam pipeline asks one id at a time
(:func:`contains`), the local engine a whole column at once (:func:`member_of`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def sorted_ids(ids: Iterable[int]) -> np.ndarray:
    """The set of ``ids``."""
    return np.unique(np.fromiter(ids, dtype=np.int64))


def union(parts: Iterable[np.ndarray]) -> np.ndarray:
    """The set of every id in ``parts`` (arrays, sorted or not)."""
    arrays = list(parts)
    return np.unique(np.concatenate(arrays)) if arrays else np.empty(0, dtype=np.int64)


def contains(ids: np.ndarray, tweet_id: int) -> bool:
    """Whether the set ``ids`` holds ``tweet_id``."""
    i = int(np.searchsorted(ids, tweet_id))
    return i < len(ids) and int(ids[i]) == tweet_id


def find(values: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``values``, its position in the set ``ids`` and whether it is there.

    A position is meaningful only where the value is found: use it to read an array kept
    beside ``ids``.
    """
    if len(ids) == 0:
        return np.zeros(len(values), dtype=np.intp), np.zeros(len(values), dtype=bool)
    i = np.minimum(np.searchsorted(ids, values), len(ids) - 1)
    return i, np.asarray(ids[i] == values)


def member_of(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """A boolean array: whether the set ``ids`` holds ``values[i]``, for each i."""
    return find(values, ids)[1]

"""Sets of tweet ids as sorted, unique int64 arrays: 8 bytes an id, membership by binary search.

The Beam pair pipeline keeps its large id sets (parents some reply or quote references, deleted
ids, kept conversation ids) in this form and asks one id at a time (:func:`contains`). The
local engine decides a whole bucket of ids at once, in polars
(:mod:`corpusforge.local.tweet_rows`).
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

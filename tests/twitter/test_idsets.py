"""Sorted id sets: the array forms agree with a Python set, at the edges too."""

from __future__ import annotations

import numpy as np
import pytest

from corpusforge.sources.twitter import idsets

MEMBERS = [7, 3, 2**63 - 1, 3, 1_500_000_000_000_000_000, 0]
PROBES = [-1, 0, 1, 3, 4, 7, 8, 1_500_000_000_000_000_000, 2**63 - 2, 2**63 - 1]


def test_sorted_ids_is_the_sorted_set() -> None:
    ids = idsets.sorted_ids(iter(MEMBERS))
    assert ids.dtype == np.int64
    assert ids.tolist() == sorted(set(MEMBERS))


def test_union_of_unsorted_overlapping_parts() -> None:
    parts = [np.array([9, 1, 9], dtype=np.int64), np.array([1, 4], dtype=np.int64)]
    assert idsets.union(iter(parts)).tolist() == [1, 4, 9]
    empty = idsets.union([])
    assert empty.dtype == np.int64 and len(empty) == 0


@pytest.mark.parametrize("members", [MEMBERS, [], [5]], ids=["several", "empty", "one"])
def test_membership_agrees_with_a_set(members: list[int]) -> None:
    ids = idsets.sorted_ids(members)
    expected = [p in set(members) for p in PROBES]
    assert [idsets.contains(ids, p) for p in PROBES] == expected

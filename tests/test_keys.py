"""``seeded_hash``: the values every sample and choice depends on, pinned."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.keys import cached_hasher, seeded_hash, seeded_hasher, unit_interval

# A change of any of these values changes every release's samples and choices.
PINNED = [
    ((0,), 4761659630979961921),
    ((7, "cap", "demo", "en-de", "k"), 4001760299099242441),
    ((42, 123456789012345678, None), 8102734147797623815),
    ((1, "caf\u00e9 \U0001f600", "\udc80x"), 6922319717128169092),
    ((-3, 1.5, b"x"), 1820581426492629452),
]


@pytest.mark.parametrize(("args", "value"), PINNED)
def test_seeded_hash_keeps_its_values(args: tuple[object, ...], value: int) -> None:
    assert seeded_hash(*args) == value


def test_parts_are_separated_not_concatenated() -> None:
    assert seeded_hash(0, "ab", "c") != seeded_hash(0, "a", "bc")
    assert 0 <= unit_interval(0, "ab", "c") < 1


@pytest.mark.parametrize(("args", "value"), [a for a in PINNED if len(a[0]) > 1])
def test_a_hasher_gives_the_pinned_values(args: tuple[object, ...], value: int) -> None:
    seed, *prefix, last = args
    assert seeded_hasher(seed, *prefix)(last) == value
    assert cached_hasher(seed, *prefix)(last) == value


PARTS = st.one_of(st.integers(), st.text(), st.none(), st.floats(allow_nan=False))


@given(seed=st.integers(), prefix=st.lists(PARTS, max_size=3), last=PARTS)
def test_a_hasher_is_seeded_hash_with_its_prefix(
    seed: int, prefix: list[object], last: object
) -> None:
    hasher = seeded_hasher(seed, *prefix)
    assert hasher(last) == seeded_hash(seed, *prefix, last)
    assert hasher(last) == hasher(last)  # the prefix state is copied, never used up

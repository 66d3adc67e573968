"""``seeded_hash``: the values every sample and choice depends on, pinned."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpusforge.keys import (
    cached_hasher,
    seeded_digests,
    seeded_hash,
    seeded_hasher,
    unit_interval,
)
from corpusforge.sinks.shards import placement, placements

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


_PARTS = st.one_of(
    st.text(),
    st.integers(),
    st.none(),
    st.tuples(st.text(st.sampled_from("a'\"\\\x00\u00a0\ud800é")), st.text()),
)


@given(st.integers(0, 2**32), st.lists(_PARTS, max_size=20))
def test_seeded_digests_are_seeded_hash_of_each_part(seed: int, parts: list[object]) -> None:
    digests = seeded_digests(seed, ("cap", 7), parts)
    want = b"".join(seeded_hash(seed, "cap", 7, part).to_bytes(8, "big") for part in parts)
    assert digests == want


@given(st.lists(st.tuples(st.text(), st.text(), st.text()), max_size=20))
def test_placements_are_placement_of_each_key(keys: list[tuple[str, str, str]]) -> None:
    placed = placements(iter(keys))
    assert str(placed.dtype) == "uint64"
    assert placed.tolist() == [placement(key) for key in keys]

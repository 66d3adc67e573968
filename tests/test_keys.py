"""``seeded_hash``: the values every sample and choice depends on, pinned."""

from __future__ import annotations

import pytest

from corpusforge.keys import seeded_hash, unit_interval

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

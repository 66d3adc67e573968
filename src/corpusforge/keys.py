"""Stable keys and seeded hashes: every sample or choice in corpusforge goes through here.

A choice made with ``seeded_hash(seed, key...)`` depends only on the seed and the stable
key (a tweet id, a source/file/line origin), never on the runner, worker count or order.
"""

from __future__ import annotations

import hashlib


def seeded_hash(seed: int, *parts: object) -> int:
    """A 64-bit unsigned hash of ``(seed, *parts)``, stable across processes and machines.

    Args:
        seed: the configuration's seed.
        parts: the stable key; each part is rendered with ``str``.

    Returns:
        An integer in ``[0, 2**64)``.
    """
    h = hashlib.blake2b(digest_size=8, person=b"corpusforge")
    h.update(str(seed).encode())
    for part in parts:
        h.update(b"\x1f")
        h.update(str(part).encode("utf-8", "surrogatepass"))
    return int.from_bytes(h.digest(), "big")


def unit_interval(seed: int, *parts: object) -> float:
    """``seeded_hash`` mapped to ``[0, 1)``: for Bernoulli-style sampling at a rate."""
    return seeded_hash(seed, *parts) / 2.0**64

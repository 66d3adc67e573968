"""Stable keys and seeded hashes: every sample or choice in corpusforge goes through here,
and the key that makes two pairs duplicates (:func:`pair_key`).

A choice made with ``seeded_hash(seed, key...)`` depends only on the seed and the stable
key (a tweet id, a source/file/line origin), never on the runner, worker count or order.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat

from corpusforge.text.plain import false_at, is_plain


def seeded_hash(seed: int, *parts: object) -> int:
    """A 64-bit unsigned hash of ``(seed, *parts)``, stable across processes and machines.

    Args:
        seed: the configuration's seed.
        parts: the stable key; each part is rendered with ``str``.

    Returns:
        An integer in ``[0, 2**64)``.
    """
    return int.from_bytes(_hashed(seed, parts).digest(), "big")


def seeded_hasher(seed: int, *prefix: object) -> Callable[[object], int]:
    """``lambda part: seeded_hash(seed, *prefix, part)``, the same values at less than half
    the cost: the seed and the prefix are hashed once, and each call hashes a copy of that
    state on (blake2b is a stream: updates in a row hash as their concatenation).

    For the hashes taken once a row (shard placement, text hashes, benchmark ranks); the
    hashers of a few prefixes are kept (:func:`cached_hasher`).
    """
    base = _hashed(seed, prefix)
    base.update(_SEPARATOR)
    copy, from_bytes = base.copy, int.from_bytes

    def hasher(part: object) -> int:
        h = copy()
        h.update(_encoded(part))
        return from_bytes(h.digest(), "big")

    return hasher


def seeded_digests(seed: int, prefix: tuple[object, ...], parts: Iterable[object]) -> bytes:
    """``seeded_hash(seed, *prefix, part)`` of each of ``parts``, by block: each hash as its
    8 big-endian bytes, one after another (a NumPy ``>u8`` buffer), the parts rendered and
    encoded by ``map`` in C and only the hash taken a part."""
    base = _hashed(seed, prefix)
    base.update(_SEPARATOR)
    copy = base.copy
    digests = bytearray()
    for encoded in map(str.encode, map(str, parts), repeat("utf-8"), repeat("surrogatepass")):
        h = copy()
        h.update(encoded)
        digests += h.digest()
    return bytes(digests)


_SEPARATOR = b"\x1f"


def _hashed(seed: int, parts: tuple[object, ...]) -> hashlib.blake2b:
    """The hash state of ``(seed, *parts)``: the one rule of every seeded hash."""
    h = hashlib.blake2b(digest_size=8, person=b"corpusforge")
    h.update(str(seed).encode())
    for part in parts:
        h.update(_SEPARATOR)
        h.update(_encoded(part))
    return h


def _encoded(part: object) -> bytes:
    return str(part).encode("utf-8", "surrogatepass")


cached_hasher = functools.lru_cache(maxsize=64)(seeded_hasher)
""":func:`seeded_hasher`, kept for the 64 prefixes last asked for."""


def unit_interval(seed: int, *parts: object) -> float:
    """``seeded_hash`` mapped to ``[0, 1)``: for Bernoulli-style sampling at a rate."""
    return seeded_hash(seed, *parts) / 2.0**64


def _dedup_text(text: str) -> str:
    if is_plain(text):  # already what split and join would make of it
        return text.casefold()
    return " ".join(text.split()).casefold()


def pair_key(anchor: str, positive: str, *, symmetric: bool = False) -> str:
    """A key that is equal for duplicate pairs: the same sides up to case and whitespace.

    Args:
        anchor: first side.
        positive: second side.
        symmetric: also treat ``(b, a)`` as a duplicate of ``(a, b)`` (paraphrases).

    Returns:
        32 hex digits (BLAKE2b-128 of the case-folded, whitespace-collapsed sides).
    """
    first, second = _dedup_text(anchor), _dedup_text(positive)
    if symmetric and second < first:
        first, second = second, first
    # each side then a NUL, hashed as one update (a hash of the concatenation), from a copy
    # of the keyed state: a third less than making the state and four updates
    digest = _PAIR_KEY.copy()
    digest.update(f"{first}\x00{second}\x00".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def pair_keys(
    anchors: Sequence[str],
    positives: Sequence[str],
    anchor_plain: Sequence[bool] | None = None,
    positive_plain: Sequence[bool] | None = None,
) -> list[str]:
    """:func:`pair_key` of each pair (not symmetric), by column: the sides case-folded and
    each pair's bytes made by ``map`` in C, a hash state copied a pair.

    Args:
        anchors: each pair's first side.
        positives: each pair's second side, in the same order.
        anchor_plain: for each anchor, ``True`` if the caller knows it is plain: printable,
            its only whitespace single spaces between words (``" ".join(text.split())`` is
            itself), so only case-folded; ``False``: not known, asked; ``None``: ask of all.
        positive_plain: likewise for each positive.
    """
    first, second = _dedup_texts(anchors, anchor_plain), _dedup_texts(positives, positive_plain)
    copy = _PAIR_KEY.copy
    keys: list[str] = []
    append = keys.append
    for encoded in map(
        str.encode,
        map("{}\x00{}\x00".format, first, second),
        repeat("utf-8"),
        repeat("surrogatepass"),
    ):
        digest = copy()
        digest.update(encoded)
        append(digest.hexdigest())
    return keys


def _dedup_texts(texts: Sequence[str], plain: Sequence[bool] | None) -> list[str]:
    if plain is None:
        return list(map(_dedup_text, texts))
    folded = list(map(str.casefold, texts))
    for i in false_at(plain):
        folded[i] = _dedup_text(texts[i])
    return folded


_PAIR_KEY = hashlib.blake2b(digest_size=16, person=b"cf-pair-key")
"""The state every :func:`pair_key` starts from."""

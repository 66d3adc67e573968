"""One member's bytes -> lines: the caps and their reasons, and one output whatever the
decoder, on members built inline."""

from __future__ import annotations

import bz2
import io
import lzma

import pytest

from corpusforge.config.flags import FlagError
from corpusforge.sources.twitter.decode import (
    RATIO_FLOOR,
    ReadLimits,
    ReadProblem,
    ReadReason,
    decode_member,
)


def _decode(
    data: bytes, limits: ReadLimits
) -> tuple[list[bytes], list[tuple[ReadReason, int | None]]]:
    lines, problems = [], []
    for item in decode_member("a.tar", "m.json.bz2", io.BytesIO(data), len(data), limits):
        if isinstance(item, ReadProblem):
            problems.append((item.reason, item.line))
        else:
            lines.append(item[2])
    return lines, problems


def test_member_cap_by_ratio_past_the_floor_and_by_bytes() -> None:
    limits = ReadLimits()
    assert limits.member_cap(1_000) == (RATIO_FLOOR, ReadReason.MEMBER_RATIO_TOO_HIGH)
    assert limits.member_cap(1 << 20) == (100 << 20, ReadReason.MEMBER_RATIO_TOO_HIGH)
    assert limits.member_cap(1 << 30) == (4 << 30, ReadReason.MEMBER_TOO_LARGE)
    off = ReadLimits(max_member_ratio=0)
    assert off.member_cap(1_000) == (4 << 30, ReadReason.MEMBER_TOO_LARGE)


@pytest.mark.parametrize("ratio", [0.5, -1])
def test_a_ratio_below_one_is_refused_by_its_flag(ratio: float) -> None:
    with pytest.raises(FlagError, match="--max-member-ratio must be 0"):
        ReadLimits(max_member_ratio=ratio)


@pytest.mark.parametrize(
    "threads",  # a bomb is cut in the default run by tests/hostile/test_archives.py
    [pytest.param(t, marks=pytest.mark.slow) for t in (0, 1, 2)],
)
def test_a_bomb_is_cut_at_the_floor_with_whole_lines_only(threads: int) -> None:
    line = b'{"limit": {"track": 1}}'  # 23 bytes and a newline
    bomb = bz2.compress((line + b"\n") * 1_000_000)
    lines, problems = _decode(bomb, ReadLimits(bz2_threads=threads))
    assert problems == [(ReadReason.MEMBER_RATIO_TOO_HIGH, None)]
    assert len(lines) == RATIO_FLOOR // 24 and set(lines) == {line}


@pytest.mark.parametrize("threads", [0, 2])
def test_a_member_that_ends_at_the_cap_is_not_cut(threads: int) -> None:
    data = bz2.compress(b"x" * (RATIO_FLOOR - 1) + b"\n")
    lines, problems = _decode(data, ReadLimits(bz2_threads=threads, max_line_bytes=RATIO_FLOOR))
    assert problems == [] and len(lines) == 1


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (lzma.compress(b"{}\n"), ReadReason.MEMBER_UNSUPPORTED_COMPRESSION),
        (b"\x28\xb5\x2f\xfd" + b"\x00" * 20, ReadReason.MEMBER_UNSUPPORTED_COMPRESSION),
        (b"\x00\x01 not a stream", ReadReason.MEMBER_BAD_MAGIC),
        (bz2.compress(b"{}\n") + b"junk", ReadReason.MEMBER_CORRUPT),
        (bz2.compress(b"{}\n{}\n")[:-6], ReadReason.MEMBER_TRUNCATED),
    ],
)
@pytest.mark.parametrize("threads", [0, 2])
def test_members_that_cannot_be_decoded_say_why(
    payload: bytes, reason: ReadReason, threads: int
) -> None:
    _, problems = _decode(payload, ReadLimits(bz2_threads=threads))
    assert problems[-1] == (reason, None)

"""The decoder setting changes speed, never output: every damaged fixture gives the same
release, byte for byte, with the stdlib decoder (``--bz2-threads 0``, the reference) and the
parallel one (1 and 2 threads)."""

from __future__ import annotations

import bz2
import gzip
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import GOOD, assert_balanced, member, tweet, write_tar
from .readers import build_cli, damage_member_data, manifest, release_files

M0 = "2019/06/01/00/00.json.bz2"
M1 = "2019/06/01/00/01.json.bz2"


def _big_lines(seed: int, n: int = 6000) -> list[bytes]:
    """Lines enough for several 900 kB bz2 blocks, so damage lands after good blocks."""
    rng = random.Random(seed)
    return [
        tweet(1000 + i, " ".join(f"w{rng.randrange(100_000)}" for _ in range(40)),
              quoted_status_id_str="1")
        for i in range(n)
    ]  # fmt: skip


def _flip(data: bytes, at: float) -> bytes:
    i = int(len(data) * at)
    return data[:i] + bytes([data[i] ^ 0x55]) + data[i + 1 :]


def _tar_of(payload: bytes) -> Callable[[Path], str]:
    return lambda d: write_tar(d / "a.tar", [(M0, payload), (M1, member(GOOD))])


def _zip_damaged(method: int, at: float) -> Callable[[Path], str]:
    def make(d: Path) -> str:
        path = d / "a.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(M0, member(_big_lines(1)), compress_type=method)
            zf.writestr(M1, member(GOOD))
        damage_member_data(path, M0, at=at)
        return str(path)

    return make


BIG = member(_big_lines(0))
TWO_STREAMS = member(_big_lines(2, 3000)) + member(_big_lines(3, 3000))
FIXTURES: dict[str, Callable[[Path], str]] = {
    "bz2-truncated": _tar_of(BIG[: len(BIG) - 5000]),
    "bz2-flipped-early": _tar_of(_flip(BIG, 0.1)),
    "bz2-flipped-late": _tar_of(_flip(BIG, 0.8)),
    "bz2-second-stream-flipped": _tar_of(_flip(TWO_STREAMS, 0.75)),
    "bz2-stream-crc-flipped": _tar_of(_flip(BIG, 1 - 3 / len(BIG))),
    "bz2-second-stream-crc-flipped": _tar_of(_flip(TWO_STREAMS, 1 - 3 / len(TWO_STREAMS))),
    "bz2-first-stream-crc-flipped": _tar_of(
        _flip(member(_big_lines(5, 2000)), 1 - 3 / len(member(_big_lines(5, 2000))))
        + member(_big_lines(6, 2000))
    ),
    "bz2-trailing-garbage": _tar_of(BIG + b"\x00\x01garbage after the stream"),
    "bz2-zero-padded": _tar_of(BIG + b"\x00" * 512),
    "bz2-only-a-header": _tar_of(b"BZh9"),
    "gz-truncated": _tar_of(gzip.compress(b"\n".join(_big_lines(4)) + b"\n")[:-4000]),
    "zip-stored-bad-crc": _zip_damaged(zipfile.ZIP_STORED, 0.9),
    "zip-deflate-damaged": _zip_damaged(zipfile.ZIP_DEFLATED, 0.6),
    "zip-bzip2-damaged": _zip_damaged(zipfile.ZIP_BZIP2, 0.6),
    "zip-lzma-damaged": _zip_damaged(zipfile.ZIP_LZMA, 0.6),
    "bomb-cut-by-ratio": _tar_of(bz2.compress(b'{"limit": {"track": 1}}\n' * 1_000_000)),
}


@pytest.mark.slow  # three builds per fixture; damaged members are read in the default run by
# tests/hostile/test_archives.py and test_unreadable_members.py
@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_damaged_members_give_one_release_whatever_the_decoder(
    tmp_path: Path, fixture: str
) -> None:
    archive = FIXTURES[fixture](tmp_path)
    releases = {}
    for threads in ("0", "1", "2"):
        out = tmp_path / f"release-{threads}"
        code, output = build_cli(out, archive, flags=("--bz2-threads", threads, "--quiet"))
        assert code == 0, output
        assert_balanced(manifest(out))
        releases[threads] = release_files(out)
    assert releases["0"] == releases["1"] == releases["2"]
    counts = manifest(tmp_path / "release-0")["counts"]
    assert counts["dead_letter_members"] >= 1  # the damage is reported, not hidden
    assert counts["tweets"] >= len(GOOD)  # and the other member read whole

"""Containers -> members -> lines, on archives built in the test (and the real sample)."""

from __future__ import annotations

import bz2
import gc
import gzip
import io
import random
import tarfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from corpusforge.sources.twitter.archive import (
    MemberRef,
    ReadLimits,
    ReadProblem,
    ReadReason,
    Skipped,
    SkipReason,
    classify_member_name,
    list_members,
    read_member_lines,
)

LINES = [b'{"a": 1}', b'{"b": 2}', b'{"c": 3}']


def _zip(path: Path, members: dict[str, bytes], dirs: tuple[str, ...] = ()) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for d in dirs:
            zf.writestr(zipfile.ZipInfo(d), b"")
        for name, data in members.items():
            zf.writestr(name, data)
    return str(path)


def _tar(path: Path, members: dict[str, bytes], mode: str = "w") -> str:
    with tarfile.open(path, mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return str(path)


def _read_all(
    uri: str, limits: ReadLimits | None = None
) -> tuple[list[tuple[str, int, bytes]], list]:
    lines, other = [], []
    for ref in list_members(uri):
        if not isinstance(ref, MemberRef):
            other.append(ref)
            continue
        for item in read_member_lines(ref, limits):
            (lines if isinstance(item, tuple) else other).append(item)
    return lines, other


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("2021/01/01/10/29.json.bz2", None),
        ("20220301/20220301000000.json.gz", None),
        ("02/01/00/00.json.bz2", None),
        ("2021/01/01/", SkipReason.DIRECTORY),
        ("2017/07/01/00/.09.json.bz2.J1uA1l", SkipReason.STRAY),
        ("2017/07/01/00/.nfs000000000123", SkipReason.STRAY),
        ("README.txt", SkipReason.STRAY),
    ],
)
def test_classify_member_name(name: str, expected: SkipReason | None) -> None:
    assert classify_member_name(name) == expected


def test_zip_with_directories_and_stray_members(tmp_path: Path) -> None:
    uri = _zip(
        tmp_path / "twitter-stream-2021-01-01.zip",
        {
            "2021/01/01/00/00.json.bz2": bz2.compress(b"\n".join(LINES) + b"\n"),
            "2021/01/01/00/.01.json.bz2.J1uA1l": b"partial",
        },
        dirs=("2021/", "2021/01/"),
    )
    lines, other = _read_all(uri)
    assert [(m, n, line) for m, n, line in lines] == [
        ("2021/01/01/00/00.json.bz2", i + 1, line) for i, line in enumerate(LINES)
    ]
    assert sorted(o.reason for o in other) == [
        SkipReason.DIRECTORY,
        SkipReason.DIRECTORY,
        SkipReason.STRAY,
    ]


def test_multistream_bz2_and_multimember_gzip(tmp_path: Path) -> None:
    two_streams = bz2.compress(LINES[0] + b"\n") + bz2.compress(LINES[1] + b"\n" + LINES[2] + b"\n")
    two_members = gzip.compress(LINES[0] + b"\n") + gzip.compress(LINES[1] + b"\n")
    uri = _tar(
        tmp_path / "twitter_stream_2019_06_01.tar",
        {
            "2019/06/01/00/00.json.bz2": two_streams,
            "20220301/20220301000000.json.gz": two_members,
        },
    )
    lines, other = _read_all(uri)
    assert other == []
    assert [line for _, _, line in lines] == [*LINES, LINES[0], LINES[1]]


def test_truncated_bz2_member_keeps_lines_before_the_damage(tmp_path: Path) -> None:
    data = bz2.compress(b"\n".join(LINES * 200) + b"\n")
    uri = _tar(
        tmp_path / "a.tar",
        {
            "2019/06/01/00/00.json.bz2": data[: len(data) // 2],
            "2019/06/01/00/01.json.bz2": bz2.compress(LINES[0] + b"\n"),
        },
    )
    lines, other = _read_all(uri)
    reasons = [o.reason for o in other]
    assert ReadReason.MEMBER_TRUNCATED in reasons
    # the second member is read in full whatever happened to the first
    assert ("2019/06/01/00/01.json.bz2", 1, LINES[0]) in lines
    first = [line for m, _, line in lines if m.endswith("00.json.bz2")]
    assert first == (LINES * 200)[: len(first)]


def test_truncated_gzip_member(tmp_path: Path) -> None:
    data = gzip.compress(b"\n".join(LINES * 500) + b"\n")
    uri = _tar(tmp_path / "a.tar", {"20220301/20220301000000.json.gz": data[:-20]})
    lines, other = _read_all(uri)
    assert [o.reason for o in other if isinstance(o, ReadProblem) and o.line is None] == [
        ReadReason.MEMBER_TRUNCATED
    ]
    assert len(lines) > 1000


def test_corrupt_zip_member_crc(tmp_path: Path) -> None:
    payload = bz2.compress(b"\n".join(LINES) + b"\n")
    path = tmp_path / "z.zip"
    _zip(path, {"2021/01/01/00/00.json.bz2": payload, "2021/01/01/00/01.json.bz2": payload})
    raw = bytearray(path.read_bytes())
    start = raw.find(payload)
    raw[start + len(payload) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    lines, other = _read_all(str(path))
    problems = [o for o in other if isinstance(o, ReadProblem)]
    assert [p.member for p in problems if p.line is None] == ["2021/01/01/00/00.json.bz2"]
    assert problems[-1].reason in (ReadReason.MEMBER_CORRUPT, ReadReason.MEMBER_TRUNCATED)
    assert [line for m, _, line in lines if m.endswith("01.json.bz2")] == LINES


def test_line_too_long_is_dead_lettered_and_reading_goes_on(tmp_path: Path) -> None:
    long_line = b'{"x": "' + b"a" * 5000 + b'"}'
    data = bz2.compress(LINES[0] + b"\n" + long_line + b"\n" + LINES[1] + b"\n")
    uri = _tar(tmp_path / "a.tar", {"2019/06/01/00/00.json.bz2": data})
    lines, other = _read_all(uri, ReadLimits(max_line_bytes=1024, max_member_bytes=1 << 20))
    assert [(n, line) for _, n, line in lines] == [(1, LINES[0]), (3, LINES[1])]
    assert [(o.reason, o.line) for o in other] == [(ReadReason.LINE_TOO_LONG, 2)]


@pytest.mark.slow  # decompresses up to the cap
def test_decompression_bomb_is_capped(tmp_path: Path) -> None:
    bomb = bz2.compress((b'{"x": 1}\n') * 1_500_000)  # 13.5 MB from a few KB
    uri = _tar(tmp_path / "a.tar", {"2019/06/01/00/00.json.bz2": bomb})
    lines, other = _read_all(uri, ReadLimits(max_line_bytes=1024, max_member_bytes=5 << 20))
    assert [o.reason for o in other] == [ReadReason.MEMBER_TOO_LARGE]
    assert 0 < len(lines) < 1_500_000


def test_bad_magic_member(tmp_path: Path) -> None:
    uri = _tar(tmp_path / "a.tar", {"2019/06/01/00/00.json.bz2": b"\x00\x01garbage"})
    lines, other = _read_all(uri)
    assert lines == []
    assert [o.reason for o in other] == [ReadReason.MEMBER_BAD_MAGIC]


@pytest.mark.parametrize("name", ["a.tar.gz", "archive-without-suffix"])
def test_tar_gz_is_walked_in_one_pass(tmp_path: Path, name: str) -> None:
    uri = _tar(
        tmp_path / name,
        {
            "2019/06/01/00/00.json.bz2": bz2.compress(LINES[0] + b"\n"),
            "2019/06/01/00/.nfs0001": b"x",
            "2019/06/01/00/01.json.bz2": bz2.compress(LINES[1] + b"\n"),
        },
        mode="w:gz",
    )
    refs = list(list_members(uri))
    assert [(r.member, r.container) for r in refs if isinstance(r, MemberRef)] == [("*", "targz")]
    lines, other = _read_all(uri)
    assert [line for _, _, line in lines] == LINES[:2]
    assert [o.reason for o in other if isinstance(o, Skipped)] == [SkipReason.STRAY]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", ReadReason.ARCHIVE_NOT_AN_ARCHIVE),
        (b"hello, I am not an archive", ReadReason.ARCHIVE_NOT_AN_ARCHIVE),
    ],
)
def test_not_an_archive(tmp_path: Path, content: bytes, reason: ReadReason) -> None:
    path = tmp_path / "x.zip"
    path.write_bytes(content)
    assert [(type(i), i.reason) for i in list_members(str(path))] == [(ReadProblem, reason)]


def test_empty_archive_lists_nothing(tmp_path: Path) -> None:
    assert list(list_members(_zip(tmp_path / "empty.zip", {}))) == []


def test_bare_member_file(tmp_path: Path) -> None:
    path = tmp_path / "00.json.bz2"
    path.write_bytes(bz2.compress(b"\n".join(LINES)))  # no final newline
    lines, other = _read_all(str(path))
    assert other == []
    assert [line for _, _, line in lines] == LINES


def test_real_sample_lines(realdata: Path) -> None:
    uri = str(realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip")
    lines, other = _read_all(uri)
    assert len(lines) == 5378 + 832
    assert {m for m, _, _ in lines} == {"2021/01/01/10/29.json.bz2", "2021/01/01/22/03.json.bz2"}
    assert all(isinstance(o, Skipped) and o.reason is SkipReason.DIRECTORY for o in other)


@pytest.mark.parametrize("damage", ["none", "truncated", "flipped"])
def test_fast_bz2_decoder_gives_exactly_the_stdlib_result(tmp_path: Path, damage: str) -> None:
    """indexed_bzip2 (1 or 2 threads) only changes speed: same lines, same problems."""
    rng = random.Random(7)
    lines = [
        b'{"n": %d, "w": "%s"}'
        % (i, " ".join(f"w{rng.randrange(10**6)}" for _ in range(30)).encode())
        for i in range(8000)
    ]
    half = len(lines) // 2
    data = bz2.compress(b"\n".join(lines[:half]) + b"\n") + bz2.compress(
        b"\n".join(lines[half:]) + b"\n"
    )
    if damage == "truncated":
        data = data[:-3000]
    elif damage == "flipped":
        at = len(data) * 3 // 4  # inside the second stream: the first one decodes whole
        data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
    uri = _tar(tmp_path / "a.tar", {"2019/06/01/00/00.json.bz2": data})
    results = [_read_all(uri, ReadLimits(bz2_threads=t)) for t in (0, 1, 2)]
    assert results[0] == results[1] == results[2]
    if damage == "none":
        assert [line for _, _, line in results[0][0]] == lines
    else:
        assert results[0][1] and 0 < len(results[0][0]) < len(lines)


@pytest.mark.parametrize("threads", [0, 2])
def test_read_members_keep_none_of_their_bytes(tmp_path: Path, threads: int) -> None:
    """Reading a member must not keep its compressed bytes alive afterwards: indexed_bzip2
    1.7.0 never releases the file object it is given, which once held every member of an
    archive in memory (about 0.5 KB per line)."""
    rng = random.Random(3)
    members = {
        f"2019/06/01/00/{m:02d}.json.bz2": bz2.compress(
            b"\n".join(b'{"w": "%032x"}' % rng.getrandbits(128) for _ in range(4000)) + b"\n"
        )
        for m in range(24)
    }
    compressed = sum(len(data) for data in members.values())
    uri = _tar(tmp_path / "a.tar", members)
    refs = [ref for ref in list_members(uri) if isinstance(ref, MemberRef)]
    tracemalloc.start()
    try:
        for ref in refs:
            for _ in read_member_lines(ref, ReadLimits(bz2_threads=threads)):
                pass
        gc.collect()
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert compressed > 1_500_000
    assert retained < compressed / 10

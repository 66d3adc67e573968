"""The inputs' hashes taken on a thread while a build starts (release.io.DigestsAhead) are the
hashes taken in line, and no thread is left once one is asked for."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from corpusforge.release.io import DigestsAhead, file_digest


def test_the_thread_hashes_each_file_as_file_digest_does(tmp_path: Path) -> None:
    files = [tmp_path / f"day-{n}.zip" for n in range(3)]
    for n, path in enumerate(files):
        path.write_bytes(bytes(range(256)) * (5_000 * (n + 1)))
    ahead = DigestsAhead([str(p) for p in files])
    for path in files:
        assert ahead.digest(str(path)) == file_digest(str(path))
    assert not [t for t in threading.enumerate() if t.name == "input digests"]


def test_what_the_thread_did_not_hash_is_hashed_when_asked(tmp_path: Path) -> None:
    given, other = tmp_path / "given.zip", tmp_path / "other.zip"
    given.write_bytes(b"a")
    other.write_bytes(b"b")
    ahead = DigestsAhead([str(given), str(tmp_path / "*.zip"), "s3://bucket/day.zip"])
    assert ahead.digest(str(other)) == file_digest(str(other))


def test_a_missing_file_fails_when_asked_as_file_digest_fails(tmp_path: Path) -> None:
    ahead = DigestsAhead([str(tmp_path / "day.zip")])
    with pytest.raises(FileNotFoundError):
        ahead.digest(str(tmp_path / "day.zip"))

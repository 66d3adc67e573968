"""Helpers for the hostile-input suite: archives built byte by byte, a build, its outputs."""

from __future__ import annotations

import bz2
import io
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from corpusforge.builds.twitter import build
from corpusforge.config.twitter import TwitterConfig
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.sources.twitter.archive import ReadLimits

USER = {"id": 42, "id_str": "42", "screen_name": "someone_real", "name": "Some One"}


def tweet(i: int, text: str | None = None, **kw: Any) -> bytes:
    """A v1.1 tweet line; a quote of tweet 1 unless told otherwise."""
    body = {
        "id_str": str(i),
        "user": USER,
        "text": text or f"tweet number {i} talks about the garden in spring",
        "lang": "en",
        "timestamp_ms": "1609459200000",
        **kw,
    }
    return orjson.dumps(body)


def member(lines: Sequence[bytes], *, newline_at_end: bool = True) -> bytes:
    """A bz2 member holding ``lines``."""
    data = b"\n".join(lines) + (b"\n" if newline_at_end else b"")
    return bz2.compress(data)


def write_tar(path: Path, members: Sequence[tuple[str, bytes]]) -> str:
    with tarfile.open(path, "w") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return str(path)


def write_zip(path: Path, members: Sequence[tuple[str, bytes]]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
    return str(path)


GOOD = [tweet(1, "the root tweet about gardens in the spring")] + [
    tweet(i, f"a reply number {i} about gardens and flowers", in_reply_to_status_id_str="1")
    for i in range(2, 6)
]


def run(tmp_path: Path, *archives: str, limits: ReadLimits | None = None) -> dict[str, Any]:
    """Build a release from ``archives`` (no benchmarks) and return its manifest."""
    config = TwitterConfig(
        inputs=tuple(archives),
        out=str(tmp_path / "release"),
        benchmarks=BenchmarkConfig(queries=0),
        limits=limits or ReadLimits(),
    )
    return build(config)


def dead_letters(tmp_path: Path) -> pl.DataFrame:
    files = sorted((tmp_path / "release" / "dead_letter").glob("*/*.parquet"))
    if not files:
        return pl.DataFrame(
            schema={"reason": pl.String, "origin_member": pl.String, "origin_line": pl.Int64}
        )
    return pl.read_parquet(files)


def tweet_ids(tmp_path: Path) -> set[int]:
    files = sorted((tmp_path / "release" / "tweets").glob("*/tweets/*.parquet"))
    return set(pl.read_parquet(files)["id"]) if files else set()


def assert_balanced(manifest: dict[str, Any]) -> None:
    failed = [i for i in manifest["accounting"]["identities"] if not i["holds"]]
    assert failed == []
    c = manifest["counts"]
    assert c["lines_read"] == (
        c["tweets"] + c["delete_notices"] + c["other_messages"] + c["dead_letter_lines"]
    )

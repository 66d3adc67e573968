"""The shared real samples read from a bucket and published to one (versitygw): the same
release, byte for byte, as the local copies built into a local folder.

The archive is read through range requests (its ZIP central directory, then each member),
never downloaded whole; the bitext files are streamed. The only difference a reader could
find is one no file holds: a local Twitter extract keeps an empty ``dead_letter/`` folder,
and an object store has no empty folders.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from corpusforge.release import reading

from .conftest import S3Server, cli

pytestmark = pytest.mark.s3


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".complete"
    }


def upload(s3: S3Server, bucket: str, paths: list[Path]) -> list[str]:
    client = s3.client()
    for path in paths:
        client.upload_file(str(path), bucket.removeprefix("s3://"), f"in/{path.name}")
    return [f"{bucket}/in/{path.name}" for path in paths]


def assert_same_release(s3: S3Server, uri: str, local: Path) -> None:
    published = Path(reading.local_copy(uri))
    assert files(published) == files(local)
    checked = cli("validate", uri)
    assert checked.returncode == 0, checked.stdout[-2000:]
    prefix = reading.current_version(uri)["prefix"]
    pairs = pl.read_parquet(f"{uri}/{prefix}pairs/**/*.parquet", storage_options=s3.storage_options)
    assert pairs.height == pl.read_parquet(local / "pairs" / "**" / "*.parquet").height > 0


def test_the_real_twitter_sample_from_and_into_a_bucket(
    s3: S3Server, realdata: Path, tmp_path: Path
) -> None:
    archive = realdata / "twitter-archive-2021-01-01" / "twitter-stream-2021-01-01.zip"
    bucket = s3.bucket("twitter-real")
    (remote,) = upload(s3, bucket, [archive])
    options = ["--benchmark-queries", "5", "--quiet"]
    local = tmp_path / "rel"
    built = cli("twitter", "build", str(archive), "--out", str(local), *options)
    assert built.returncode == 0, built.stderr[-2000:]
    built = cli("twitter", "build", remote, "--out", f"{bucket}/rel", *options)
    assert built.returncode == 0, built.stderr[-2000:]
    assert_same_release(s3, f"{bucket}/rel", local)


def test_the_real_tatoeba_bitext_from_and_into_a_bucket(
    s3: S3Server, realdata: Path, tmp_path: Path
) -> None:
    tatoeba = realdata / "tatoeba-laser-v1"
    sides = [tatoeba / "tatoeba.deu-eng.deu", tatoeba / "tatoeba.deu-eng.eng"]
    bucket = s3.bucket("tatoeba-real")
    remote = upload(s3, bucket, sides)
    local = tmp_path / "rel"
    built = cli("bitext", "build", *map(str, sides), "--out", str(local), "--quiet")
    assert built.returncode == 0, built.stderr[-2000:]
    built = cli("bitext", "build", *remote, "--out", f"{bucket}/rel", "--quiet")
    assert built.returncode == 0, built.stderr[-2000:]
    assert_same_release(s3, f"{bucket}/rel", local)

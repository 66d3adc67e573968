"""A release on a real S3 server (versitygw) read straight from the bucket without
corpusforge: ``corpusforge versions URI --current`` names the current version's pairs, and
polars, DuckDB (httpfs) and ``datasets`` (s3fs) read the same rows there as in the local
release built from the same input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.readers.conftest import (
    assert_current_names_the_pairs,
    assert_datasets_reads_the_pairs,
    assert_duckdb_reads_the_pairs,
    assert_polars_reads_the_pairs,
    current,
    publish_both,
)
from tests.s3.conftest import S3Server, cli, twitter

pytestmark = pytest.mark.s3


@pytest.fixture(scope="module")
def published(
    s3_server: S3Server, archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """The same build published to ``s3://readers/rel`` and to a local folder."""
    return publish_both(s3_server, archive, tmp_path_factory)


def test_versions_current_names_the_current_versions_pairs(
    s3: S3Server, published: tuple[str, Path]
) -> None:
    uri, local = published
    pointer = json.loads(
        s3.client().get_object(Bucket="readers", Key="rel/_current.json")["Body"].read()
    )
    assert_current_names_the_pairs(uri, local, pointer["version"])
    card = (local / "README.md").read_text()  # a version's card: how to find the current one
    assert "`corpusforge versions URI --current`" in card
    assert "`URI/versions/<version>/pairs/all/*.parquet`" in card


def test_versions_current_is_one_line_for_a_missing_release(s3: S3Server) -> None:
    uri = s3.bucket("noreaders") + "/rel"
    done = cli("versions", uri, "--current")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {uri}: no release there (no _current.json)"
    ]


def test_polars_reads_the_pairs_from_the_bucket(s3: S3Server, published: tuple[str, Path]) -> None:
    assert_polars_reads_the_pairs(*published, s3.storage_options)


def test_duckdb_reads_the_pairs_from_the_bucket(
    s3: S3Server, published: tuple[str, Path], duck: Any
) -> None:
    uri, local = published
    duck.execute(
        "CREATE SECRET readers (TYPE s3, KEY_ID ?, SECRET ?, REGION 'us-east-1', ENDPOINT ?, "
        "URL_STYLE 'path', USE_SSL false)",
        [
            s3.env["AWS_ACCESS_KEY_ID"],
            s3.env["AWS_SECRET_ACCESS_KEY"],
            urlsplit(s3.endpoint).netloc,
        ],
    )
    assert_duckdb_reads_the_pairs(duck, uri, local)


def test_datasets_reads_the_pairs_from_the_bucket(
    s3: S3Server, published: tuple[str, Path], hf_offline: Path
) -> None:
    options = {
        "key": s3.env["AWS_ACCESS_KEY_ID"],
        "secret": s3.env["AWS_SECRET_ACCESS_KEY"],
        "client_kwargs": {"endpoint_url": s3.endpoint, "region_name": "us-east-1"},
    }
    assert_datasets_reads_the_pairs(*published, options, hf_offline)


def test_a_glob_read_before_the_next_commit_still_reads_its_version(
    s3: S3Server, archive: Path
) -> None:
    """A version never changes: a reader holding the glob of the version that was current
    reads the same rows after another build commits, and ``--current`` moves on."""
    uri = s3.bucket("moving") + "/rel"
    assert cli(*twitter(archive, uri, seed=1)).returncode == 0
    before = current(uri)
    rows = pl.scan_parquet(before, storage_options=s3.storage_options).collect()
    assert cli(*twitter(archive, uri, seed=2)).returncode == 0
    after = current(uri)
    assert after != before
    assert_frame_equal(pl.scan_parquet(before, storage_options=s3.storage_options).collect(), rows)
    assert pl.scan_parquet(after, storage_options=s3.storage_options).collect().height > 0


def test_polars_and_datasets_take_the_environment_corpusforge_reads(
    s3: S3Server, published: tuple[str, Path], hf_offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``storage_options``: ``AWS_ENDPOINT_URL`` and the keys, as boto3 reads them for
    corpusforge (``AWS_ALLOW_HTTP`` for polars on an http endpoint only)."""
    from datasets import load_dataset

    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    uri, local = published
    here = pl.scan_parquet(local / "pairs" / "all" / "*.parquet").collect()
    assert_frame_equal(pl.scan_parquet(current(uri)).collect(), here)
    remote = load_dataset("parquet", data_files={"train": current(uri)}, cache_dir=str(hf_offline))[
        "train"
    ]
    assert remote.to_list() == here.to_dicts()


@pytest.mark.parametrize(
    "path",
    ["pairs/../../elsewhere/part-0.parquet", "benchmarks/dq.parquet", "pairs/all/*.parquet"],
    ids=["dot-dot", "not-pairs", "a-pattern"],
)
def test_versions_current_refuses_a_manifest_that_points_readers_elsewhere(
    s3: S3Server, path: str
) -> None:
    """The manifest is the bucket's word (its sha256 in the pointer is too): a pair file
    outside the version's ``pairs/``, or a name a glob reads as a pattern, is one line, exit 2."""
    import hashlib

    from corpusforge.release.reading import POINTER_FORMAT

    bucket = s3.bucket(f"crafted-{hashlib.sha256(path.encode()).hexdigest()[:8]}")[5:]
    version = "20261127T000000Z-0badc0de"
    manifest = json.dumps({"datasets": {"all": {"rows": 1, "files": [path]}}}).encode()
    pointer = {
        "format": POINTER_FORMAT,
        "version": version,
        "prefix": f"versions/{version}/",
        "manifest": f"versions/{version}/manifest.json",
        "manifest_sha256": hashlib.sha256(manifest).hexdigest(),
    }
    client = s3.client()
    client.put_object(Bucket=bucket, Key=f"rel/versions/{version}/manifest.json", Body=manifest)
    client.put_object(Bucket=bucket, Key="rel/_current.json", Body=json.dumps(pointer).encode())
    done = cli("versions", f"s3://{bucket}/rel", "--current")
    assert done.returncode == 2, done.stdout
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: s3://{bucket}/rel/versions/{version}/")


def test_versions_current_is_one_line_for_a_crafted_pointer_and_a_wrong_secret(
    s3: S3Server, published: tuple[str, Path]
) -> None:
    from corpusforge.release.reading import POINTER_FORMAT

    uri, _ = published
    env = {**os.environ, "AWS_SECRET_ACCESS_KEY": "not-the-secret-4f1c"}
    denied = cli("versions", uri, "--current", env=env)
    assert denied.returncode == 2
    assert denied.stderr.strip().splitlines() == [
        f"error: {uri}/_current.json: access denied (check the credentials)"
    ]
    crafted = s3.bucket("crafted-pointer") + "/rel"
    doc = {"format": POINTER_FORMAT, "version": "../../x", "prefix": "versions/../../x/"}
    s3.client().put_object(
        Bucket="crafted-pointer", Key="rel/_current.json", Body=json.dumps(doc).encode()
    )
    done = cli("versions", crafted, "--current")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {crafted}/_current.json: version '../../x' is not a version id")

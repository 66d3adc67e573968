"""Reading a bucket release without corpusforge: the S3 and GCS servers of tests/s3 and
tests/gcs, a small Twitter archive, and the three readers a training team uses (polars,
DuckDB with its httpfs extension from the ``duckdb-extension-httpfs`` wheel, ``datasets``
through s3fs or gcsfs), each also reading the local release so that both sides are read the
same way."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.buckets import cli, small_archive, twitter
from tests.gcs.conftest import gcs, gcs_server
from tests.s3.conftest import s3, s3_server

__all__ = ["gcs", "gcs_server", "s3", "s3_server"]


@pytest.fixture(scope="package")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_archive(tmp_path_factory.mktemp("in"))


def publish_both(
    server: Any, archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """The same build published to ``server``'s bucket ``readers`` (``…/rel``) and to a local
    folder: the URI and the folder."""
    local = tmp_path_factory.mktemp("local") / "rel"
    env = {**os.environ, **server.env}
    env["CORPUSFORGE_DRAFTS"] = str(tmp_path_factory.mktemp("drafts"))
    env["CORPUSFORGE_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    assert cli(*twitter(archive, str(local)), env=env).returncode == 0
    uri = server.bucket("readers") + "/rel"
    done = cli(*twitter(archive, uri), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return uri, local


def current(uri: str, *flags: str) -> str:
    """What ``corpusforge versions URI --current FLAGS`` prints."""
    done = cli("versions", uri, "--current", *flags)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.fixture
def hf_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``datasets`` kept out of the user's cache, and off the Hub: a call to it would meet a
    closed port (its offline mode would refuse the bucket too). Its cache folder."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    return tmp_path / "hf" / "datasets"


@pytest.fixture
def duck() -> Iterator[Any]:
    """A DuckDB connection with httpfs loaded from the wheel's file, never downloaded
    (autoinstall off: a missing extension fails instead)."""
    import duckdb
    import duckdb_extension_httpfs

    found = sorted(
        Path(duckdb_extension_httpfs.__file__).parent.glob("extensions/*/httpfs.duckdb_extension")
    )
    assert found, "duckdb-extension-httpfs holds no httpfs.duckdb_extension"
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    try:
        con.load_extension(str(found[-1]))
        yield con
    finally:
        con.close()


def assert_current_names_the_pairs(uri: str, local: Path, version: str) -> None:
    """``versions --current`` prints the glob of version ``version``'s pairs, and with
    ``--json`` the version, its folder and the glob of each dataset of the local twin."""
    folder = f"{uri}/versions/{version}/"
    assert current(uri) == f"{folder}pairs/all/*.parquet"
    doc = json.loads(current(uri, "--json"))
    manifest = json.loads((local / "manifest.json").read_text())
    assert doc["version"] == version
    assert doc["uri"] == folder
    assert doc["datasets"] == {
        name: f"{folder}pairs/{name}/*.parquet" for name in manifest["datasets"]
    }


def assert_polars_reads_the_pairs(uri: str, local: Path, options: dict[str, str]) -> None:
    """polars reads every dataset's glob from the bucket as the local release's rows."""
    doc = json.loads(current(uri, "--json"))
    for name, glob in {"all": doc["pairs"], **doc["datasets"]}.items():
        remote = pl.scan_parquet(glob, storage_options=options).collect()
        here = pl.scan_parquet(local / "pairs" / name / "*.parquet").collect()
        assert_frame_equal(remote, here)
        assert name != "all" or len(remote) > 0


def assert_duckdb_reads_the_pairs(duck: Any, uri: str, local: Path) -> None:
    """DuckDB (its secret for the bucket made) reads the pairs as the local release's rows."""
    query = "SELECT * FROM read_parquet(?) ORDER BY ALL"
    remote = duck.execute(query, [current(uri)]).fetch_arrow_table()
    here = duck.execute(query, [str(local / "pairs" / "all" / "*.parquet")]).fetch_arrow_table()
    rows = json.loads((local / "manifest.json").read_text())["datasets"]["all"]["rows"]
    assert remote.num_rows == rows > 0
    assert remote.equals(here)


def assert_datasets_reads_the_pairs(
    uri: str, local: Path, options: dict[str, Any], cache: Path
) -> None:
    """``datasets`` reads the pairs as the local release's rows."""
    from datasets import load_dataset

    remote = load_dataset(
        "parquet", data_files={"train": current(uri)}, storage_options=options, cache_dir=str(cache)
    )["train"]
    local_files = str(local / "pairs" / "all" / "*.parquet")
    here = load_dataset("parquet", data_files={"train": local_files}, cache_dir=str(cache))["train"]
    assert len(remote) > 0
    assert remote.to_list() == here.to_list()

"""Reading a bucket release without corpusforge: the S3 and GCS servers of tests/s3 and
tests/gcs, a small Twitter archive, and the three readers a training team uses (polars,
DuckDB with its httpfs extension from the ``duckdb-extension-httpfs`` wheel, ``datasets``
through s3fs or gcsfs), each also reading the local release so that both sides are read the
same way."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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

"""A release on a GCS emulator (fake-gcs-server) read straight from the bucket without
corpusforge: ``corpusforge versions URI --current`` names the current version's pairs, and
polars, DuckDB (httpfs) and ``datasets`` (gcsfs) read the same rows there as in the local
release built from the same input.

The emulator needs what real GCS does not: an HTTP endpoint for each reader, no signature or
credentials, and gcsfs's bucket-type probe turned off (``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT``:
it asks a gRPC API the emulator lacks, and waits a minute per bucket for it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.gcs.conftest import GcsServer
from tests.readers.conftest import current, publish_both

pytestmark = pytest.mark.gcs


@pytest.fixture(scope="module")
def published(
    gcs_server: GcsServer, archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """The same build published to ``gs://readers/rel`` and to a local folder."""
    return publish_both(gcs_server, archive, tmp_path_factory)


def test_versions_current_names_the_current_versions_pairs(
    gcs: GcsServer, published: tuple[str, Path]
) -> None:
    uri, local = published
    blob = gcs.client().bucket("readers").blob("rel/_current.json")
    pointer = json.loads(blob.download_as_bytes())
    folder = f"{uri}/versions/{pointer['version']}/"
    assert current(uri) == f"{folder}pairs/all/*.parquet"
    doc = json.loads(current(uri, "--json"))
    manifest = json.loads((local / "manifest.json").read_text())
    assert doc["version"] == pointer["version"]
    assert doc["datasets"] == {
        name: f"{folder}pairs/{name}/*.parquet" for name in manifest["datasets"]
    }


def test_polars_reads_the_pairs_from_the_bucket(
    gcs: GcsServer, published: tuple[str, Path]
) -> None:
    uri, local = published
    options = {"google_base_url": gcs.endpoint, "google_skip_signature": "true"}
    doc = json.loads(current(uri, "--json"))
    for name, glob in {"all": doc["pairs"], **doc["datasets"]}.items():
        remote = pl.scan_parquet(glob, storage_options=options).collect()
        here = pl.scan_parquet(local / "pairs" / name / "*.parquet").collect()
        assert_frame_equal(remote, here)
        assert name != "all" or len(remote) > 0


def test_duckdb_reads_the_pairs_from_the_bucket(
    gcs: GcsServer, published: tuple[str, Path], duck: Any
) -> None:
    uri, local = published
    duck.execute(
        "CREATE SECRET readers (TYPE gcs, KEY_ID 'unused', SECRET 'unused', ENDPOINT ?, "
        "URL_STYLE 'path', USE_SSL false)",
        [urlsplit(gcs.endpoint).netloc],
    )
    query = "SELECT * FROM read_parquet(?) ORDER BY ALL"
    remote = duck.execute(query, [current(uri)]).fetch_arrow_table()
    here = duck.execute(query, [str(local / "pairs" / "all" / "*.parquet")]).fetch_arrow_table()
    rows = json.loads((local / "manifest.json").read_text())["datasets"]["all"]["rows"]
    assert remote.num_rows == rows > 0
    assert remote.equals(here)


def test_datasets_reads_the_pairs_from_the_bucket(
    gcs: GcsServer, published: tuple[str, Path], hf_offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")  # read when gcsfs loads
    import gcsfs
    from datasets import load_dataset

    assert gcsfs.GCSFileSystem is gcsfs.core.GCSFileSystem, "gcsfs loaded before the setting"

    uri, local = published
    options = {"token": "anon", "endpoint_url": gcs.endpoint, "project": "corpusforge-test"}
    remote = load_dataset(
        "parquet",
        data_files={"train": current(uri)},
        storage_options=options,
        cache_dir=str(hf_offline),
    )["train"]
    here = load_dataset(
        "parquet",
        data_files={"train": str(local / "pairs" / "all" / "*.parquet")},
        cache_dir=str(hf_offline),
    )["train"]
    assert len(remote) > 0
    assert remote.to_list() == here.to_list()

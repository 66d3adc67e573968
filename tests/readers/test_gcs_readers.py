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

import pytest

from tests.gcs.conftest import GcsServer
from tests.readers.conftest import (
    assert_current_names_the_pairs,
    assert_datasets_reads_the_pairs,
    assert_duckdb_reads_the_pairs,
    assert_polars_reads_the_pairs,
    publish_both,
)

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
    blob = gcs.client().bucket("readers").blob("rel/_current.json")
    pointer = json.loads(blob.download_as_bytes())
    assert_current_names_the_pairs(*published, pointer["version"])


def test_polars_reads_the_pairs_from_the_bucket(
    gcs: GcsServer, published: tuple[str, Path]
) -> None:
    options = {"google_base_url": gcs.endpoint, "google_skip_signature": "true"}
    assert_polars_reads_the_pairs(*published, options)


def test_duckdb_reads_the_pairs_from_the_bucket(
    gcs: GcsServer, published: tuple[str, Path], duck: Any
) -> None:
    uri, local = published
    duck.execute(
        "CREATE SECRET readers (TYPE gcs, KEY_ID 'unused', SECRET 'unused', ENDPOINT ?, "
        "URL_STYLE 'path', USE_SSL false)",
        [urlsplit(gcs.endpoint).netloc],
    )
    assert_duckdb_reads_the_pairs(duck, uri, local)


def test_datasets_reads_the_pairs_from_the_bucket(
    gcs: GcsServer, published: tuple[str, Path], hf_offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")  # read when gcsfs loads
    import gcsfs

    assert gcsfs.GCSFileSystem is gcsfs.core.GCSFileSystem, "gcsfs loaded before the setting"

    options = {"token": "anon", "endpoint_url": gcs.endpoint, "project": "corpusforge-test"}
    assert_datasets_reads_the_pairs(*published, options, hf_offline)

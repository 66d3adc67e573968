"""Hostile buckets on GCS (fake-gcs-server): every reader, and a build, refuse a crafted
pointer or a key that leaves its version without touching anything outside the cache, as on
S3 (``tests/s3/test_hostile_buckets_s3.py``, whose helpers these tests share).

(fake-gcs-server resolves ``..`` and ``//`` in the names it is given, as versitygw does, but
keeps a backslash: a key ``…\\..\\x`` is planted here; the rest of the key checks run on an
in-memory bucket, ``tests/hostile/test_buckets.py``.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corpusforge.release import reading
from tests.buckets import free_port, small_archive
from tests.s3.test_hostile_buckets_s3 import one_error_line, pointer_doc, readers, run_all

from .conftest import GcsServer, cli, twitter

pytestmark = pytest.mark.gcs

V = "20260101T000000Z-0123abcd"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_archive(tmp_path_factory.mktemp("in"), tweets=2_000)


def plant(gcs: GcsServer, bucket: str, key: str, data: bytes) -> None:
    gcs.client().bucket(bucket).blob(key).upload_from_string(data)


@pytest.mark.parametrize("aim", ["relative", "absolute"])
def test_every_reader_refuses_a_crafted_pointer_and_touches_nothing(
    gcs: GcsServer, tmp_path: Path, aim: str
) -> None:
    uri = gcs.bucket(f"crafted-{aim}") + "/rel"
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("mine")
    version = "../../sentinel" if aim == "relative" else str(sentinel)
    plant(gcs, f"crafted-{aim}", "rel/_current.json", json.dumps(pointer_doc(version)).encode())
    for args, done in zip(readers(uri, tmp_path), run_all(readers(uri, tmp_path)), strict=True):
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        line = one_error_line(done)
        assert f"{uri}/_current.json: version {version!r} is not a version id" in line, line
    assert sorted(p.name for p in sentinel.iterdir()) == ["keep.txt"]
    assert (sentinel / "keep.txt").read_text() == "mine"
    assert not (tmp_path / "model").exists()


def test_a_build_refuses_a_crafted_pointer(gcs: GcsServer, archive: Path) -> None:
    uri = gcs.bucket("crafted-build") + "/rel"
    doc = pointer_doc(V)
    doc["prefix"] = "versions/../../other/"
    plant(gcs, "crafted-build", "rel/_current.json", json.dumps(doc).encode())
    done = cli(*twitter(archive, uri))
    assert done.returncode == 2, done.stderr
    assert "prefix 'versions/../../other/' is not" in one_error_line(done)
    names = [blob.name for blob in gcs.client().list_blobs("crafted-build")]
    assert names == ["rel/_current.json"]


def test_a_key_that_leaves_its_version_is_refused_by_every_reader(
    gcs: GcsServer, archive: Path, tmp_path: Path
) -> None:
    """A committed release with one more object planted under its current version, named
    ``pairs\\..\\..\\x`` (a path on Windows, a name to GCS): nothing is downloaded, and each
    reader names the object in one line."""
    uri = gcs.bucket("backslash") + "/rel"
    assert cli(*twitter(archive, uri)).returncode == 0
    prefix = reading.current_version(uri, client=gcs.client())["prefix"]
    key = f"rel/{prefix}pairs\\..\\..\\x"
    plant(gcs, "backslash", key, b"planted")
    for args, done in zip(readers(uri, tmp_path), run_all(readers(uri, tmp_path)), strict=True):
        if args[:2] == ("versions", uri) and len(args) == 2:
            assert done.returncode == 0, done.stderr  # listing versions downloads nothing
            continue
        if "--keep" in args:
            assert done.returncode == 0, done.stderr  # the current version is kept, unread
            continue
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        line = one_error_line(done)
        assert f"gs://backslash/{key}: a key that leaves its version's folder" in line, line
    assert not list(tmp_path.rglob("x"))


def test_a_missing_bucket_is_one_line_for_a_build_and_a_reader(
    gcs: GcsServer, archive: Path
) -> None:
    """GCS answers a missing bucket's object as a missing object: a reader finds no release
    there; a build's first upload names the bucket. Exit 2, one line, nothing published."""
    uri = "gs://no-such-bucket/rel"
    read = cli("validate", uri)
    assert read.returncode == 2, read.stderr
    assert "gs://no-such-bucket/rel: no release there (no _current.json)" in one_error_line(read)
    built = cli(*twitter(archive, uri))
    assert built.returncode == 2, built.stderr
    assert "no bucket named no-such-bucket" in one_error_line(built)


def test_an_endpoint_down_is_one_line_for_every_reader_and_a_build(
    gcs: GcsServer, archive: Path, tmp_path: Path
) -> None:
    """Nothing listens at the endpoint: after the client's retries, bounded here by
    ``CORPUSFORGE_GCS_RETRY_SECONDS`` (default 120 s), each command says so in one line,
    exit 2; a bound that is not a number of seconds is one line too."""
    uri = "gs://down/rel"
    env = {
        **os.environ,
        "STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{free_port()}",  # nothing listens there
        "CORPUSFORGE_GCS_RETRY_SECONDS": "2",
    }
    commands = [*readers(uri, tmp_path), tuple(twitter(archive, uri))]
    for args, done in zip(commands, run_all(commands, env), strict=True):
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        line = one_error_line(done)
        assert "could not connect to the endpoint" in line and "gs://down/" in line, (args, line)
        assert "gave up retrying" in line, (args, line)
    done = cli("validate", uri, env={**env, "CORPUSFORGE_GCS_RETRY_SECONDS": "soon"})
    assert done.returncode == 2, done.stderr
    assert "CORPUSFORGE_GCS_RETRY_SECONDS must be a number of seconds >= 0, got 'soon'" in (
        one_error_line(done)
    )

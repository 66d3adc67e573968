"""The bitext and ParaNMT builds on the Beam engine into ``gs://`` (fake-gcs-server): the
version they commit holds the same Parquet bytes as the same build into a local folder.

Each build's draft is the new version's prefix in the bucket (``CORPUSFORGE_S3_DRAFT=bucket``,
as a distributed runner has it), so Beam's ``gcsio`` writes the Parquet shards, the
accounting and the dead letters on the emulator itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corpusforge.release import reading
from tests.bitext.test_build_paranmt import write_paranmt

from .conftest import GcsServer, cli

pytestmark = pytest.mark.gcs


def parquet_files(folder: Path) -> dict[str, bytes]:
    """Every Parquet file of a release, by its path in the release."""
    found = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.parquet"))}
    assert found, f"no parquet under {folder}"
    return found


def assert_same_parquet(uri: str, local: Path) -> None:
    assert cli("validate", uri).returncode == 0
    assert parquet_files(Path(reading.local_copy(uri))) == parquet_files(local)


def build_both(gcs: GcsServer, name: str, args: list[str], tmp_path: Path) -> tuple[str, Path]:
    """``args`` (a build's command line without ``--out``) into a local folder and, on the
    Beam engine with its draft in the bucket, into ``gs://NAME/rel``."""
    local = tmp_path / "rel"
    built = cli(*args, "--out", str(local), "--quiet")
    assert built.returncode == 0, built.stderr[-3000:]
    uri = gcs.bucket(name) + "/rel"
    env = {**os.environ, "CORPUSFORGE_S3_DRAFT": "bucket"}
    built = cli(*args, "--out", uri, "--engine", "beam", "--quiet", env=env)
    assert built.returncode == 0, built.stderr[-3000:]
    return uri, local


def test_a_bitext_beam_build_into_gs_writes_the_local_release_s_parquet(
    gcs: GcsServer, realdata: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    sides = []
    for code in ("deu", "eng"):
        source = realdata / "tatoeba-laser-v1" / f"tatoeba.deu-eng.{code}"
        head = source.read_text(encoding="utf-8").splitlines(keepends=True)[:200]
        sides.append(folder / source.name)
        sides[-1].write_text("".join(head), encoding="utf-8")
    uri, local = build_both(gcs, "bitext", ["bitext", "build", *map(str, sides)], tmp_path)
    assert_same_parquet(uri, local)


def test_a_paranmt_beam_build_into_gs_writes_the_local_release_s_parquet(
    gcs: GcsServer, tmp_path: Path
) -> None:
    source = write_paranmt(tmp_path / "in" / "para-nmt-sample.txt.gz")
    uri, local = build_both(gcs, "paranmt", ["paranmt", "build", source], tmp_path)
    assert_same_parquet(uri, local)

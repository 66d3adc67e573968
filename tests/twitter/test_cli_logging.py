"""What ``corpusforge twitter build`` prints: its own messages, not Beam's import-time noise.

Each build runs in a fresh interpreter, because what matters is the order in which the
command configures logging and imports Beam (which, without its GCP extras, configures the
root logger itself to warn about BigQuery clients).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpusforge.synth.twitter import write_synthetic_archive


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("in") / "twitter-stream-2021-01-01.zip"
    write_synthetic_archive(path, tweets=1_000, layout="zip-2020", seed=2, truth=False)
    return str(path)


def _build(archive: str, out: Path, *flags: str) -> str:
    command = ["twitter", "build", archive, "--out", str(out), "--benchmark-queries", "50"]
    proc = subprocess.run(
        [sys.executable, "-c", "from corpusforge.cli import main; main()", *command, *flags],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow  # a whole build in a subprocess
def test_build_logs_its_progress_without_beam_import_noise(archive: str, tmp_path: Path) -> None:
    output = _build(archive, tmp_path / "release")
    assert "extracting 1 archives" in output  # INFO: Beam's own set-up would hide it
    assert "benchmark dq:" in output
    assert "apitools" not in output and "bigquery" not in output.lower()
    assert "WARNING:" not in output  # the level:name:message format of Beam's set-up


@pytest.mark.slow  # a second whole build in a subprocess
def test_quiet_build_logs_warnings_only(archive: str, tmp_path: Path) -> None:
    output = _build(archive, tmp_path / "release", "--quiet")
    assert "extracting 1 archives" not in output
    assert "benchmark dq:" in output
    assert "apitools" not in output

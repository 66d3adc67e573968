"""A bitext or ParaNMT build on the local engine never imports Beam (issue 38).

Importing Beam costs about a second of CPU and 100 MiB of the main process, which the local
engine never uses: only ``start`` (the pipeline) imports it. Each build runs in a fresh
process, from the command line to the published release, as the Twitter one does
(``tests/twitter/test_read.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.bitext.test_build_bitext import write_fixtures
from tests.bitext.test_build_paranmt import write_paranmt

LOCAL_BUILD = """
import sys
from corpusforge.cli import app

sys.argv = ["corpusforge", *sys.argv[1:]]
try:
    app()
except SystemExit as exit:
    assert not exit.code, exit.code
print(sorted({m.split(".")[0] for m in sys.modules} & {"apache_beam", "torch"}))
"""


@pytest.mark.parametrize("kind", ["bitext", "paranmt"])
def test_a_local_build_never_imports_beam(kind: str, tmp_path: Path) -> None:
    if kind == "bitext":
        inputs = write_fixtures(tmp_path / "in")
    else:
        inputs = [write_paranmt(tmp_path / "in" / "para-nmt-sample.txt.gz")]
    out = tmp_path / "release"
    argv = [kind, "build", *inputs, "--out", str(out), "--engine", "local"]
    proc = subprocess.run(
        [sys.executable, "-c", LOCAL_BUILD, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (out / "manifest.json").exists()
    assert proc.stdout.splitlines()[-1] == "[]", proc.stderr[-2000:]

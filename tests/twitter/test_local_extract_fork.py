"""What the local extract's read workers inherit from the process that forks them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpusforge.synth.twitter import write_synthetic_archive

SCRIPT = """
import sys
from corpusforge.builds import twitter_extract as tb
from corpusforge.local import extract
from corpusforge.sources.twitter.archive import ReadLimits

assert "pandas" not in sys.modules, "imported before the extract"
read_members = extract._read_members

def reporting(job, writer, members):
    yield from read_members(job, writer, members)  # its batches converted and written
    with open(sys.argv[2] + f"/worker-{writer}", "w") as f:
        f.write(str("pandas" in sys.modules))

extract._read_members = reporting  # the workers are forked: they run this one
extract.extract_archive(
    sys.argv[1], sys.argv[2] + "/tweets", sys.argv[2] + "/dead", ReadLimits(), 700,
    tweet_key=tb._tweet_key, dead_key=tb.extract_dead_letter_key, workers=2,
)
assert "pandas" not in sys.modules, "imported by the extract"
import pyarrow as pa
assert pa.table({"a": [1]}).to_pandas()["a"].tolist() == [1]  # an explicit call still can
"""


def test_pyarrow_never_imports_pandas_in_the_extract(tmp_path: Path) -> None:
    """pyarrow imports pandas at its first conversion of Python values, only to ask whether
    they are pandas objects: neither the read workers nor the process that forks them may
    pay that import (issue 38: about 0.2 s of CPU, on the read's critical path or before
    it), and ``to_pandas`` must still work after."""
    pytest.importorskip("pandas")
    archive = tmp_path / "twitter-stream-2020-01-01.zip"
    write_synthetic_archive(archive, tweets=800, layout="zip-2020", api="v1", seed=3)
    subprocess.run([sys.executable, "-c", SCRIPT, str(archive), str(tmp_path)], check=True)
    reports = {p.name: p.read_text() for p in tmp_path.glob("worker-*")}
    assert reports == {"worker-1": "False", "worker-2": "False"}


REBUILD = """
import sys
from corpusforge.cli import main
sys.argv = ["corpusforge", "twitter", "build", sys.argv[1], "--out", sys.argv[2], "--quiet"]
try:
    main()
except SystemExit as exit:
    assert not exit.code, exit.code
    assert "pandas" not in sys.modules, "imported by the pair stage"
"""


def test_a_rebuild_on_reused_extracts_never_imports_pandas(tmp_path: Path) -> None:
    """Without an extract to read, the pair stage is the first to convert Python values with
    pyarrow: it too must answer "no pandas" first (0.16 CPU-s of a 200k-tweet rebuild)."""
    pytest.importorskip("pandas")
    archive = tmp_path / "twitter-stream-2020-01-01.zip"
    write_synthetic_archive(archive, tweets=800, layout="zip-2020", api="v1", seed=3)
    for _ in range(2):  # the second build reuses the first's extracts
        subprocess.run(
            [sys.executable, "-c", REBUILD, str(archive), str(tmp_path / "release")], check=True
        )

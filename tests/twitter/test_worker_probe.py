"""The SDK workers' probe of ``benchmarks/bench_flink_scale.py --probe`` (issue 37): a worker
started as Beam's worker pool starts one writes a row a second of what it holds; any other
process, or a worker without the probe's folder set, writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROBE = Path(__file__).resolve().parents[2] / "benchmarks" / "worker_probe"
# What the pool runs (``python -c "from ...sdk_worker import SdkHarness; SdkHarness(...)"``),
# with the data channel the harness would open, left to live long enough for two rows.
WORKER = (
    "from apache_beam.runners.worker.sdk_worker import SdkHarness; "
    "from apache_beam.runners.worker import data_plane; "
    "channel = data_plane.GrpcClientDataChannel.__new__(data_plane.GrpcClientDataChannel); "
    "data_plane._GrpcDataChannel.__init__(channel); "
    "import time; time.sleep(2.5)"
)


def _run(code: str, env: dict[str, str]) -> None:
    path = os.pathsep.join([str(PROBE), os.environ.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, "-c", code], env={**env, "PYTHONPATH": path}, check=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and glibc")
def test_a_worker_writes_what_it_holds_and_nothing_else_writes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CORPUSFORGE_PROBE_DIR"}
    _run("SdkHarness = 'no folder given'; import time; time.sleep(1.5)", env)
    _run("import time; time.sleep(1.5)", {**env, "CORPUSFORGE_PROBE_DIR": str(tmp_path)})
    assert list(tmp_path.iterdir()) == []
    start = time.monotonic()
    _run(WORKER, {**env, "CORPUSFORGE_PROBE_DIR": str(tmp_path)})
    (table,) = tmp_path.glob("*.tsv")
    rows = [line.split("\t") for line in table.read_text().splitlines()]
    assert rows, f"no row in {time.monotonic() - start:.1f} s"
    assert all(len(row) == 11 for row in rows)
    rss, used, queued, blocks, threads, bundles = (rows[-1][i] for i in (1, 4, 7, 8, 9, 10))
    assert float(rss) > 50 and float(used) > 0 and int(blocks) > 0 and int(threads) >= 2
    assert int(queued) == 0 and bundles == ""

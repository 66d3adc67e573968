"""What the Moses reader's line-count pass costs: seconds to count both sides vs. to read them.

    PYTHONPATH=src python benchmarks/bench_moses_read.py
    PYTHONPATH=src python benchmarks/bench_moses_read.py --lines 1000000 --gzip

Input: the real Tatoeba deu-eng pair (``../shared/realdata/tatoeba-laser-v1``), repeated to
``--lines`` lines per side in a temporary folder (optionally gzipped). Timed, one untimed
warm-up then ``--runs`` runs each: the count pass alone (:func:`line_count_mismatch`, both
sides) and the whole read (:func:`read_moses_files`, which includes the count pass, consumed
to the end). Prints each run, the medians and the count pass's share of the read.
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from corpusforge.sources.opus.moses import line_count_mismatch, read_moses_files
from corpusforge.sources.opus.streams import open_decompressed

REPO = Path(__file__).resolve().parents[1]
TATOEBA = REPO.parent / "shared" / "realdata" / "tatoeba-laser-v1"


def write_side(source: Path, target: Path, lines: int, compress: bool) -> Path:
    text = source.read_bytes().splitlines(keepends=True)
    body = b"".join(text * (lines // len(text) + 1))
    body = b"".join(body.splitlines(keepends=True)[:lines])
    path = target.with_name(target.name + (".gz" if compress else ""))
    path.write_bytes(gzip.compress(body, compresslevel=6, mtime=0) if compress else body)
    return path


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines per side")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gzip", action="store_true", help="gzip both sides")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = write_side(TATOEBA / "tatoeba.deu-eng.deu", Path(tmp) / "b.de", args.lines, args.gzip)
        trg = write_side(TATOEBA / "tatoeba.deu-eng.eng", Path(tmp) / "b.en", args.lines, args.gzip)

        def count() -> object:
            return line_count_mismatch(
                lambda: open_decompressed(str(src)),
                lambda: open_decompressed(str(trg)),
                names=(src.name, trg.name),
                origin_file=src.name,
            )

        def read() -> object:
            return sum(1 for _ in read_moses_files(str(src), str(trg)))

        counting, reading = timed(count, args.runs), timed(read, args.runs)
    result = {
        "input": f"Tatoeba deu-eng repeated to {args.lines:,} lines per side",
        "gzip": args.gzip,
        "python": platform.python_version(),
        "count_pass_s": [round(t, 3) for t in counting],
        "whole_read_s": [round(t, 3) for t in reading],
        "count_median_s": round(statistics.median(counting), 3),
        "read_median_s": round(statistics.median(reading), 3),
        "count_share_of_read": round(statistics.median(counting) / statistics.median(reading), 3),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""ParaNMT-50M files -> a paraphrase-pair Parquet release, as a plain Beam program.

    python -m pipelines.paranmt_pairs --input para-nmt-50m.txt.gz --out release/ \\
        [--min_score 0.4] [--max_overlap 0.7] [--lid_model lid.176.bin] \\
        [--runner DataflowRunner --project ...]

Takes the standard Beam pipeline options; with no ``--runner`` it uses Beam's in-process
runner. One pipeline, whose last step writes ``manifest.json``, so it also runs as a
Dataflow Flex Template. ``corpusforge paranmt build`` is the same job behind a friendlier
command line. Exit status: 0, 2 for bad flags or missing inputs, 3 when the accounting
does not balance.
"""

from __future__ import annotations

import logging
import sys

from corpusforge.builds.bitext import run_entry_point
from corpusforge.builds.paranmt import start
from corpusforge.config.beam import ParanmtPairsOptions


def run(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (Beam-style flags), run the build and print a one-line JSON summary."""
    return run_entry_point(list(sys.argv[1:] if argv is None else argv), ParanmtPairsOptions, start)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, force=True)  # importing Beam may have configured it
    sys.exit(run())

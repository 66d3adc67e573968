"""Archive Team Twitter archives -> a weak-pair Parquet release, as a plain Beam program.

    python -m pipelines.twitter_pairs --input 'archives/twitter-stream-2021-01-*.zip' \\
        --out release/ --lang en [--runner DataflowRunner --project ... --region ...]

Takes the standard Beam pipeline options; with no ``--runner`` it uses Beam's in-process
runner. ``corpusforge twitter build`` is the same job behind a friendlier command line.
Exit status: 0, 1 when the runner reports the job failed (nothing is published), 2 for bad
flags, inputs or ``--out`` (or a release another build holds), 3 when the accounting does not
balance.
"""

from __future__ import annotations

import json
import logging
import sys

from corpusforge.builds.twitter import build
from corpusforge.config.beam import TwitterPairsOptions
from corpusforge.config.flags import FlagError
from corpusforge.jobs import JobFailed
from corpusforge.release.accounting import AccountingError
from corpusforge.release.io import InputError
from corpusforge.release.publish import ReleaseError


def run(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (Beam-style flags), run the build and print the summary."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        options, runner = TwitterPairsOptions.split(argv)
        config = options.to_config()
    except FlagError as exc:
        print(f"error: {exc.beam_message()}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        manifest = build(config, runner)
    except (InputError, ReleaseError, FileNotFoundError) as exc:  # an input, --out, a lock
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except JobFailed as exc:  # the runner's failure, not the input's
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except AccountingError as exc:  # nothing published, the old release stays
        print(f"error: {exc}", file=sys.stderr)
        return 3
    summary = {name: ds["rows"] for name, ds in manifest["datasets"].items()}
    balanced = manifest["accounting"]["balanced"]
    print(json.dumps({"out": config.out, "pairs": summary, "balanced": balanced}))
    return 0 if balanced else 3


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, force=True)  # importing Beam may have configured it
    sys.exit(run())

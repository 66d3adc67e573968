"""Run the ``corpusforge`` command line, pausing right before its K-th upload to the object
store until a file exists: ``python tests/s3/paused_upload.py K PAUSED GO -- CLI_ARGS...``.

``PAUSED`` is created when the build pauses (half its version uploaded, no pointer yet); it
goes on once ``GO`` exists. A test does what it wants (prune, say) in between.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    pause_at, paused, go, sep, *cli_args = sys.argv[1:]
    assert sep == "--", "usage: paused_upload.py K PAUSED GO -- CLI_ARGS..."
    uploads = [0]

    from corpusforge.release.s3 import S3Bucket

    upload = S3Bucket.upload

    def pausing(self: S3Bucket, *args: Any, **kwargs: Any) -> None:
        uploads[0] += 1
        if uploads[0] == int(pause_at):
            Path(paused).touch()
            while not Path(go).exists():
                time.sleep(0.05)
        upload(self, *args, **kwargs)

    S3Bucket.upload = pausing  # type: ignore[method-assign]
    sys.argv = ["corpusforge", *cli_args]
    from corpusforge.cli import main as cli

    cli()


if __name__ == "__main__":
    main()

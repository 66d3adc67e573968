"""Run the ``corpusforge`` command line and SIGKILL it right after its K-th write to the
object store (S3 or GCS): ``python tests/s3/killed_upload.py K COUNT_FILE -- CLI_ARGS...``.

A write is one object uploaded into the new version or the pointer's PUT. ``K=0`` kills
nothing and writes the number of writes the run made to ``COUNT_FILE``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def main() -> None:
    kill_at, count_file, sep, *cli_args = sys.argv[1:]
    assert sep == "--", "usage: killed_upload.py K COUNT_FILE -- CLI_ARGS..."
    k, writes = int(kill_at), [0]

    def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
        def write(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            writes[0] += 1
            if writes[0] == k:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return write

    from corpusforge.release.gcs import GcsBucket
    from corpusforge.release.s3 import S3Bucket

    for bucket in (S3Bucket, GcsBucket):  # whichever store --out names
        bucket.upload = counted(bucket.upload)  # type: ignore[method-assign]
        bucket.put = counted(bucket.put)  # type: ignore[method-assign]
    sys.argv = ["corpusforge", *cli_args]
    from corpusforge.cli import main as cli

    try:
        cli()
    finally:
        Path(count_file).write_text(str(writes[0]))


if __name__ == "__main__":
    main()

"""Run the ``corpusforge`` command line, holding its pointer write until every build of a race
has reached its own: ``python tests/s3/racing_build.py BARRIER NAME COUNT -- CLI_ARGS...``.

Right before it writes ``_current.json`` (S3 or GCS), the build creates ``BARRIER/NAME`` and
waits until ``BARRIER`` holds ``COUNT`` such files. A build reads the pointer when it begins,
so when the barrier opens every build has read the same pointer and none has committed: the
race is certain, whatever the machine's load, and the store's condition alone decides it.
After ``TIMEOUT`` seconds without the others the build exits 99 (a test's failure, never
taken for a race's outcome).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT = 240.0


def main() -> None:
    barrier, name, count, sep, *cli_args = sys.argv[1:]
    assert sep == "--", "usage: racing_build.py BARRIER NAME COUNT -- CLI_ARGS..."
    folder = Path(barrier)

    def held(put: Callable[..., Any]) -> Callable[..., Any]:
        def put_when_all_are_there(self: Any, key: str, *args: Any, **kwargs: Any) -> Any:
            if key.rsplit("/", 1)[-1] == "_current.json":
                (folder / name).touch()
                deadline = time.monotonic() + TIMEOUT
                while len(list(folder.iterdir())) < int(count):
                    if time.monotonic() > deadline:
                        print("racing_build: the other builds never reached the barrier")
                        sys.exit(99)
                    time.sleep(0.02)
            return put(self, key, *args, **kwargs)

        return put_when_all_are_there

    from corpusforge.release.gcs import GcsBucket
    from corpusforge.release.s3 import S3Bucket

    for bucket in (S3Bucket, GcsBucket):  # whichever store --out names
        bucket.put = held(bucket.put)  # type: ignore[method-assign]
    sys.argv = ["corpusforge", *cli_args]
    from corpusforge.cli import main as cli

    cli()


if __name__ == "__main__":
    main()

"""Run the ``corpusforge`` command line and SIGKILL the S3 server right before its K-th upload
to the object store: ``python tests/s3/server_gone.py SERVER_PID K -- CLI_ARGS...``.

The build then meets a server that went away in the middle of publishing its version.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any


def main() -> None:
    server, kill_at, sep, *cli_args = sys.argv[1:]
    assert sep == "--", "usage: server_gone.py SERVER_PID K -- CLI_ARGS..."
    uploads = [0]

    from corpusforge.release.s3 import S3Bucket

    upload = S3Bucket.upload

    def killing(self: S3Bucket, *args: Any, **kwargs: Any) -> None:
        uploads[0] += 1
        if uploads[0] == int(kill_at):
            os.kill(int(server), signal.SIGKILL)
        upload(self, *args, **kwargs)

    S3Bucket.upload = killing  # type: ignore[method-assign]
    sys.argv = ["corpusforge", *cli_args]
    from corpusforge.cli import main as cli

    cli()


if __name__ == "__main__":
    main()

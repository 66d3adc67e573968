"""Run ``pipelines.twitter_pairs`` and SIGKILL it right after its first Parquet file under a
folder: ``python tests/hostile/killed_build.py FOLDER_PART -- PIPELINE_ARGS...``.

Every Parquet file a build writes lands through ``release.io.write_file_atomically``; the
wrapper lets the first file whose path contains ``FOLDER_PART`` land and then kills the
process, so the kill falls mid-stage on a fast machine as on a slow one (a poll from outside
can miss a stage that ends in milliseconds).
"""

from __future__ import annotations

import os
import runpy
import signal
import sys

from corpusforge.release import io as release_io


def main() -> None:
    folder_part, sep, *pipeline_args = sys.argv[1:]
    assert sep == "--", "usage: killed_build.py FOLDER_PART -- PIPELINE_ARGS..."
    write = release_io.write_file_atomically

    def write_then_die(path: str, data: bytes) -> None:
        write(path, data)
        if folder_part in path and path.endswith(".parquet"):
            os.kill(os.getpid(), signal.SIGKILL)

    release_io.write_file_atomically = write_then_die
    sys.argv = ["twitter_pairs", *pipeline_args]
    runpy.run_module("pipelines.twitter_pairs", run_name="__main__")


if __name__ == "__main__":
    main()

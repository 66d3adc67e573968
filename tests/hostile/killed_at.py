"""Run the ``corpusforge`` command line and SIGKILL it right after its K-th file-system step:
``python tests/hostile/killed_at.py K COUNT_FILE -- CLI_ARGS...``.

A step is a call that changes what a reader of the output folder could see: every rename or
replace (each file is written aside and renamed into place) and the publish module's swap and
deletions. ``K=0`` kills nothing and writes the number of steps the run took to
``COUNT_FILE``, so a test can kill a second run at every step, the last ones included.
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
    assert sep == "--", "usage: killed_at.py K COUNT_FILE -- CLI_ARGS..."
    k, steps = int(kill_at), [0]

    def step(fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            steps[0] += 1
            if steps[0] == k:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return counted

    from corpusforge.release import publish

    os.rename = step(os.rename)
    os.replace = step(os.replace)
    publish.exchange = step(publish.exchange)
    publish._remove = step(publish._remove)
    sys.argv = ["corpusforge", *cli_args]
    from corpusforge.cli import main as cli

    try:
        cli()
    finally:
        Path(count_file).write_text(str(steps[0]))


if __name__ == "__main__":
    main()

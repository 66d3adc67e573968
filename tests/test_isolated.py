"""A ``corpusforge bench`` stage's fresh process (:mod:`corpusforge.isolated`) loads what the
stage needs, not the command line: its peak memory is the stage's own.

The program here starts as the ``corpusforge`` console script does (it imports
``corpusforge.cli`` at the top, ``main()`` under ``__name__ == "__main__"``): ``spawn`` runs
such a script again in each child unless told not to, so a child started from ``python -c``
would not show it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CONSOLE_SCRIPT_LIKE = """
import json

from corpusforge.cli import main  # what the console script imports

if __name__ == "__main__":
    from corpusforge.isolated import in_fresh_process

    # eval: a function the child can unpickle by name, which tells what the child has loaded
    print(json.dumps(in_fresh_process(eval, "sorted(__import__('sys').modules)")))
"""
COMMAND_LINE = ("corpusforge.cli", "typer", "click", "rich")
COMMAND_LINE_PACKAGES = tuple(f"{name}." for name in COMMAND_LINE)


def test_a_bench_stage_process_does_not_load_the_command_line(tmp_path: Path) -> None:
    script = tmp_path / "corpusforge"
    script.write_text(CONSOLE_SCRIPT_LIKE)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout)
    assert "corpusforge.interrupts" in loaded  # the child did set up its interrupts
    assert [m for m in loaded if m in COMMAND_LINE or m.startswith(COMMAND_LINE_PACKAGES)] == []

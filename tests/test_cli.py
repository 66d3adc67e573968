"""The console-script entry point: the command's exit status, and the objects frozen for exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpusforge.cli import POLARS_ALLOCATOR

# Registered before the command runs, so it runs after the command's own atexit handlers.
PROBE = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, file=sys.stderr))\n"
    "from corpusforge.cli import main\n"
    "main()\n"
)


@pytest.mark.parametrize(
    ("args", "status"),
    [(["--help"], 0), (["validate", "{empty}"], 1), (["no-such-command"], 2)],
)
def test_entry_point_keeps_the_exit_status_and_freezes_the_heap(
    args: list[str], status: int, tmp_path: Path
) -> None:
    args = [a.format(empty=tmp_path) for a in args]  # an empty folder is an invalid release
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == status, proc.stderr[-2000:]
    assert "frozen True" in proc.stderr


def test_a_sub_command_imports_only_its_own_module() -> None:
    probe = (
        "import sys\n"
        "from corpusforge.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('corpusforge.commands.')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "twitter", "build", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = proc.stdout.strip().splitlines()[-1]
    assert loaded == "['corpusforge.commands.common', 'corpusforge.commands.twitter']"


@pytest.mark.parametrize("preset", [None, "dirty_decay_ms:5000"], ids=["unset", "user's"])
def test_polars_allocator_is_set_before_polars_loads(preset: str | None) -> None:
    name, ours = POLARS_ALLOCATOR
    probe = (
        "import os, sys\n"
        "from corpusforge.cli import main\n"
        "loaded_first = 'polars' in sys.modules\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(loaded_first, os.environ.get({name!r}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != name}
    if preset is not None:
        env[name] = preset
    proc = subprocess.run(
        [sys.executable, "-c", probe, "twitter", "build", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == f"False {preset or ours}"


def test_every_sub_command_is_listed_and_loads() -> None:
    import typer

    from corpusforge.cli import COMMANDS, app

    root = typer.main.get_command(app)
    context = typer.Context(root)
    assert root.list_commands(context) == list(COMMANDS)
    for name in COMMANDS:
        command = root.get_command(context, name)
        assert command is not None and command.name == name

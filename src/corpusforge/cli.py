"""The ``corpusforge`` command line: one sub-command group per source, plus release tools.

corpusforge synth twitter --out demo.zip --tweets 20000 --layout zip-2020
corpusforge twitter build demo.zip --out release/
corpusforge eval ranking --benchmarks release/benchmarks --model lexical
"""

from __future__ import annotations

import gc
import importlib
import os
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
from typer.core import TyperGroup

COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("corpusforge.commands.train", "train"),
    "validate": ("corpusforge.commands.release", "validate"),
    "stats": ("corpusforge.commands.release", "stats"),
    "card": ("corpusforge.commands.release", "card"),
    "versions": ("corpusforge.commands.versions", "versions"),
    "bench": ("corpusforge.commands.bench", "bench"),
    "twitter": ("corpusforge.commands.twitter", "app"),
    "bitext": ("corpusforge.commands.bitext", "app"),
    "paranmt": ("corpusforge.commands.paranmt", "app"),
    "synth": ("corpusforge.commands.synth", "app"),
    "eval": ("corpusforge.commands.eval", "app"),
}
"""Each sub-command: the module that defines it, and its Typer app or function there. A
module is imported when its sub-command runs or a help page lists it, so ``twitter build``
does not import the bitext, synth, bench or training commands and their configuration."""


class _Commands(MutableMapping[str, Any]):
    """The sub-commands by name, each made into a click command on first use."""

    def __init__(self) -> None:
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._made:
            module, attribute = COMMANDS[name]  # KeyError: no such command
            self._made[name] = _command(name, getattr(importlib.import_module(module), attribute))
        return self._made[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        del self._made[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._made]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*COMMANDS, *self._made]))


def _command(name: str, target: Any) -> Any:
    """The click command for a sub-command's Typer app (a group) or function."""
    command: Any
    if isinstance(target, typer.Typer):
        command = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class _OnDemand(TyperGroup):
    """The top-level group, whose sub-commands are imported as they are used."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _Commands()

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)


app = typer.Typer(
    name="corpusforge",
    cls=_OnDemand,
    help="Build clean, reproducible Parquet corpora of text pairs for sentence embeddings.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """No options of its own: a group needs a callback (its help is the app's)."""


POLARS_ALLOCATOR = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
"""polars' allocator (jemalloc) and the setting the command gives it, unless the environment
already does: return freed pages to the system at once. jemalloc's default keeps them about
ten seconds for reuse, and only polars reuses them, so a merge's or a bucket's freed memory
stayed in every later step's peak (a 400k-tweet build: 501 MB against 420 MB for all its
processes; ``benchmarks/RESULTS.md``). Read once, when polars is first imported: nothing is
imported before the sub-command runs."""


def main() -> None:
    """Console-script entry point."""
    os.environ.setdefault(*POLARS_ALLOCATOR)
    try:
        app()
    finally:
        # The command has closed and published everything it wrote. At exit the interpreter
        # would still run full garbage collections over every object it imported (about
        # 0.2 s after a build, most of a small build's exit); frozen objects are left out
        # of them. atexit handlers still run, and objects still go when their count drops.
        gc.freeze()

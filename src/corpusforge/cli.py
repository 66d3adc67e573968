"""The ``corpusforge`` command line: one sub-command group per source, plus release tools.

corpusforge synth twitter --out demo.zip --tweets 20000 --layout zip-2020
corpusforge twitter build demo.zip --out release/
corpusforge eval ranking --benchmarks release/benchmarks --model lexical

Whatever goes wrong, the command ends with one line on stderr, ``error: …``, never a
traceback: ``corpusforge --debug …`` (or ``CORPUSFORGE_DEBUG=1``) prints the traceback too.
SIGTERM and SIGINT end a command by an exception (:class:`Interrupted`), so a build removes
its draft and its lock on the way out; the exit status is then 128 + the signal (143, 130).

    exit 0  done
    exit 1  the job, the runner or the machine failed (a dead worker, a full disk, a bug)
    exit 2  the user's input, flags or ``--out`` (or a command-line usage error)
    exit 3  the accounting does not balance (nothing published)
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from corpusforge.interrupts import Interrupted, install_interrupts

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


DEBUG_ENV = "CORPUSFORGE_DEBUG"
"""Set to ``1`` (or give ``--debug``) to see the traceback behind an ``error:`` line."""


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option("--debug", help=f"print the traceback behind an error (or {DEBUG_ENV}=1)"),
    ] = False,
) -> None:
    """The app's one option of its own: ``--debug``, before the sub-command."""
    if debug:
        os.environ[DEBUG_ENV] = "1"  # its worker processes and sub-commands see it too


def debugging() -> bool:
    """Whether the user asked for tracebacks (``--debug`` or ``CORPUSFORGE_DEBUG=1``)."""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def one_line(exc: BaseException, limit: int = 500) -> str:
    """``exc``'s message as one line: a multi-line message (a worker's traceback) keeps its
    first and last lines; the type's name stands in for an empty message.

    Args:
        exc: the exception.
        limit: the most characters kept.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        text = type(exc).__name__
    elif len(lines) == 1:
        text = lines[0]
    else:
        text = f"{lines[0].rstrip(':')}: {lines[-1]}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def report(exc: BaseException) -> int:
    """Print the one ``error:`` line for an exception that ended a command; its exit status.

    Args:
        exc: what escaped the command.
    """
    from corpusforge.commands.common import disk_full, disk_full_line
    from corpusforge.jobs import JobFailed
    from corpusforge.release.accounting import AccountingError
    from corpusforge.release.io import InputError
    from corpusforge.release.publish import ReleaseError

    status, hint = 1, ""
    full = disk_full(exc)
    if isinstance(exc, Interrupted):
        text, status = str(exc), 128 + exc.signum
    elif isinstance(exc, KeyboardInterrupt):
        text, status = "interrupted (SIGINT)", 128 + signal.SIGINT
    elif full is not None:
        text = disk_full_line(full.filename and os.path.dirname(os.fsdecode(full.filename)))
    elif isinstance(exc, (ReleaseError, InputError, FileNotFoundError)):
        text, status = one_line(exc), 2
    elif isinstance(exc, JobFailed):
        text = one_line(exc)
    elif isinstance(exc, AccountingError):
        text, status = one_line(exc), 3
    else:
        text, hint = f"{type(exc).__name__}: {one_line(exc)}", " (--debug shows the traceback)"
    if debugging():
        traceback.print_exception(exc)
        hint = ""
    print(f"error: {text}{hint}", file=sys.stderr, flush=True)
    return status


CLICK_ERRORS: Any = importlib.import_module(typer.BadParameter.__module__)
"""The exceptions of the click that typer runs on (typer 0.2x carries its own copy)."""


def usage_error(exc: Any) -> int:
    """A usage error (an unknown option, a value a flag refuses) as the one ``error:`` line,
    naming the help page to read; its exit status (2).

    Args:
        exc: what the command line parser raised.
    """
    text = one_line(Exception(exc.format_message()))
    ctx = getattr(exc, "ctx", None)
    hint = f" ({ctx.command_path} --help)" if ctx is not None else ""
    print(f"error: {text}{hint}", file=sys.stderr, flush=True)
    return exc.exit_code


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
    install_interrupts()
    try:
        status = app(standalone_mode=False)
    except CLICK_ERRORS.ClickException as exc:
        if isinstance(exc, CLICK_ERRORS.NoArgsIsHelpError):
            exc.show()  # no arguments: the help page, as typer's standalone mode prints it
            status = exc.exit_code
        else:
            status = usage_error(exc)
    except typer.Abort:
        print("error: aborted", file=sys.stderr, flush=True)
        status = 1
    except (Exception, Interrupted, KeyboardInterrupt) as exc:
        status = report(exc)
    finally:
        # The command has closed and published everything it wrote. At exit the interpreter
        # would still run full garbage collections over every object it imported (about
        # 0.2 s after a build, most of a small build's exit); frozen objects are left out
        # of them. atexit handlers still run, and objects still go when their count drops.
        gc.freeze()
    sys.exit(status if isinstance(status, int) else 0)

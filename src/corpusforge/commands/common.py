"""Options and helpers every ``… build`` command shares, declared once.

A build command's settings are not declared here nor in the command: :func:`with_settings`
generates its options from the fields of its frozen config (:mod:`corpusforge.config.settings`),
and :func:`config_from_options` turns their values into that config. The command declares
only what is its own (``ctx``, ``--runner``, ``--quiet``).
"""

from __future__ import annotations

import contextlib
import errno
import gc
import inspect
import logging
import os
import shutil
import traceback
import types
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from corpusforge.config.settings import Flag, flags, from_flags
from corpusforge.jobs import JobFailed

if TYPE_CHECKING:
    from corpusforge.config.runner import Runner

BUILD_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Typer context settings of a build command: unknown ``--flag=value`` go to Beam."""

Config = TypeVar("Config")
Command = TypeVar("Command", bound=Callable[..., None])

RunnerOption = Annotated[
    str | None, typer.Option(help="Beam runner (default: the in-process FnApiRunner)")
]
Quiet = Annotated[bool, typer.Option("--quiet", help="print only warnings and errors")]


def _parameter(flag: Flag) -> inspect.Parameter:
    """The typer parameter of one setting: ``--min-chars``, or the command's arguments."""
    help_text = flag.help_text()
    dashed = f"--{flag.name.replace('_', '-')}"
    default: Any = inspect.Parameter.empty if flag.setting.required else flag.flag_default
    info: Any
    if flag.setting.positional:
        annotation: Any = types.GenericAlias(list, (flag.value_type,))
        info = typer.Argument(help=help_text)
        name = flag.path[-1]
    elif flag.setting.repeatable:
        annotation = types.GenericAlias(list, (flag.value_type,))
        if not flag.default:
            annotation = annotation | None
            default = None
        info = typer.Option(dashed, help=help_text)
        name = flag.name
    elif flag.value_type is bool:
        annotation = bool | None if flag.optional else bool
        info = typer.Option(f"{dashed}/--no-{dashed[2:]}", help=help_text)
        name = flag.name
    else:
        annotation = flag.value_type | None if flag.optional else flag.value_type
        info = typer.Option(dashed, help=help_text)
        name = flag.name
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[annotation, info],
    )


def with_settings(config: type) -> Callable[[Command], Command]:
    """Give a build command the options of ``config``'s settings.

    The command is declared as ``build(ctx, runner, quiet, **settings)``; typer reads its
    parameters from ``__signature__``, which becomes ``ctx``, the config's arguments
    (``INPUTS``), one option per setting in declaration order, then the command's own
    options. The values reach the command in ``settings``, by flag name.

    Args:
        config: the frozen config class whose settings the command takes.
    """

    def decorate(command: Command) -> Command:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        context = [p for p in own if p.annotation is typer.Context]
        rest = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in own
            if p not in context and p.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        generated = [_parameter(flag) for flag in flags(config)]
        parameters = [*context, *generated, *rest]
        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        return command

    return decorate


def config_from_options(
    config: type[Config], ctx: typer.Context, runner: str | None, settings: dict[str, Any]
) -> tuple[Config, Runner]:
    """The validated config of a build command's settings, and its runner.

    Args:
        config: the config class the command was given by :func:`with_settings`.
        ctx: the command's context (its extra arguments are Beam flags).
        runner: ``--runner``, passed to Beam.
        settings: the values of the settings' options, by flag name, and the arguments.

    Raises:
        typer.BadParameter: the config refuses a value (the message names the flag).
        typer.Exit: no input, or an unknown flag (exit 2).
    """
    values = dict(settings)
    inputs = next(flag for flag in flags(config) if flag.setting.positional)
    values[inputs.name], parsed = inputs_and_runner(ctx, values.pop(inputs.path[-1]), runner)
    try:
        return from_flags(config, values), parsed
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def inputs_and_runner(
    ctx: typer.Context, inputs: list[str], runner: str | None
) -> tuple[list[str], Runner]:
    """A build's inputs and its runner, read once from the Beam flags wherever they stand on
    the line (:mod:`corpusforge.beamflags`) and ``--runner``; an unknown flag is one line on
    stderr and exit 2."""
    from corpusforge.beamflags import UnknownFlag, split_inputs
    from corpusforge.config.runner import Runner

    own = [o for p in ctx.command.params for o in getattr(p, "opts", []) if o.startswith("--")]
    try:
        words, args = split_inputs(inputs, ctx.args, own=own)
    except UnknownFlag as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if not words:
        typer.echo("error: no input given", err=True)
        raise typer.Exit(code=2)
    if runner:
        args.append(f"--runner={runner}")
    parsed = Runner.parse(args)
    _check_prism(parsed)
    _check_flink(parsed)
    return words, parsed


def _check_prism(runner: Runner) -> None:
    """A Prism runner without its binary is one line naming how to build it, exit 2, before
    the build creates anything (no draft beside ``--out``)."""
    from corpusforge.prism import PrismNotFoundError, locate_prism

    if not runner.uses_prism or runner.has_option("--prism_location"):
        return
    try:
        locate_prism(f"--runner {runner.name}")
    except PrismNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None


def _check_flink(runner: Runner) -> None:
    """A Flink runner without its job server jar (and no ``--job_endpoint``) is one line
    naming how to build it, exit 2, before the build creates anything."""
    from corpusforge.flink import FlinkNotFoundError, locate_job_server, needs_job_server

    if not runner.uses_flink or not needs_job_server(runner):
        return
    try:
        locate_job_server("--runner flink")
    except FlinkNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None


def where_manifest(out: str) -> str:
    """Where a reader finds the manifest of the release ``out``, for a build's summary."""
    if out.startswith(("s3://", "gs://")):  # versioned (release/objectstore.py)
        return f"{out.rstrip('/')}/_current.json names the version and its manifest"
    return f"manifest: {out.rstrip('/')}/manifest.json"


class _DropStartingWith(logging.Filter):
    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefix)


BEAM_IMPORT_NOISE = {
    "": _DropStartingWith("apitools not found"),  # the root logger
    "apache_beam.io.gcp.bigquery": _DropStartingWith(
        "No module named google.cloud.bigquery_storage_v1"
    ),
}
"""The messages Beam's BigQuery modules log, by logger, when Beam is imported without its
GCP extras: corpusforge never uses BigQuery."""


def configure_logging(quiet: bool) -> None:
    """INFO for a build's own messages, WARNING with ``--quiet``; call it before importing Beam.

    Importing Beam without its GCP extras configures the root logger itself (WARNING, with
    level and logger names) to print a warning about BigQuery clients; ``force`` replaces
    that configuration, and filters on the loggers that emit them leave out Beam's BigQuery
    import messages, whichever handlers print the rest.
    """
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO, format="%(message)s", force=True
    )
    for name, noise in BEAM_IMPORT_NOISE.items():
        logging.getLogger(name).addFilter(noise)


def run_and_report(
    run: Callable[[Config, Runner], dict[str, Any]],
    config: Config,
    runner: Runner,
    *,
    out: str,
    quiet: bool,
    summarise: Callable[[dict[str, Any], str], None],
    around: AbstractContextManager[Any] | None = None,
) -> None:
    """Run a build, print its summary; exit 3 when its accounting does not balance (the build
    then publishes nothing).

    A build that fails ends in one ``error:`` line: exit 2 for the user's input or ``--out``,
    1 for the runner or a full disk (naming the folder and its free space), 3 for accounting,
    128 + the signal when interrupted (:class:`corpusforge.cli.Interrupted`); any other
    exception propagates to :func:`corpusforge.cli.main`, which says it in one line too.

    Args:
        run: the build (``config``, runner) -> manifest.
        config: its validated configuration.
        runner: where its Beam pipelines run.
        out: the release directory, for the summary.
        quiet: print nothing on success.
        summarise: prints a manifest's summary.
        around: a context the build runs in (e.g. a progress reporter).
    """
    from corpusforge.cli import Interrupted, debugging, one_line
    from corpusforge.release.accounting import AccountingError
    from corpusforge.release.io import InputError
    from corpusforge.release.publish import ReleaseError

    status: int | None = None
    caught: BaseException | None = None
    full: OSError | None = None
    before = _release_mark(out)
    try:
        with around or contextlib.nullcontext():
            manifest = run(config, runner)
    except Interrupted as exc:  # SIGTERM or SIGINT; the build removed its draft and lock
        # a signal may land after the commit, before the return
        done = f" after publishing {out}" if _release_mark(out) != before else "; nothing published"
        caught, text, status = exc, f"{exc}{done}", 128 + exc.signum
    except Exception as exc:
        caught, full = exc, disk_full(exc)
        if full is not None:  # the machine's failure, not the input's: exit 1
            text, status = "", 1  # the free space is measured once the files are closed
        elif isinstance(exc, (InputError, ReleaseError, FileNotFoundError)):
            # a user error (an input, --out, a lock held by another build): one line, exit 2
            text, status = one_line(exc), 2
        elif isinstance(exc, JobFailed):  # the runner's failure, not the input's: exit 1
            text, status = one_line(exc), 1
        elif isinstance(exc, AccountingError):  # nothing published, the old release stays
            text, status = one_line(exc), 3
        else:
            raise  # cli.main() says it in one line
    if status is not None:
        if debugging() and caught is not None:
            traceback.print_exception(caught)
        if not text:  # a full disk: its frames held files open, whose space comes back now
            folder = _full_folder(full, out) if full is not None else out
            caught = full = None
            gc.collect()
            text = f"{disk_full_line(folder)}; nothing published"
        typer.echo(f"error: {text}", err=True)
        raise typer.Exit(code=status) from None
    if not quiet:
        summarise(manifest, out)
    if not manifest["accounting"]["balanced"]:
        raise typer.Exit(code=3)


def _release_mark(out: str) -> tuple[int, int, int] | None:
    """What tells the local release ``out`` from another: its manifest's device, inode and
    modification time (a commit puts a new manifest in place; the old one keeps all three
    when a two-rename commit moves it aside). ``None``: no release, or a URI (not looked at:
    a signal landing between a bucket's commit and the return still reads "nothing
    published")."""
    from corpusforge.release.publish import current_release
    from corpusforge.sources.uris import is_uri

    if is_uri(out):
        return None
    try:
        stat = os.stat(os.path.join(current_release(out), "manifest.json"))
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_mtime_ns


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
DISK_FULL_WORDS = tuple(os.strerror(code) for code in DISK_FULL)
""""No space left on device", "Disk quota exceeded": how a full disk reads in a message that
lost its ``errno`` (Arrow's and polars' I/O errors, a worker's traceback)."""


def disk_full(exc: BaseException) -> OSError | None:
    """The "no space" error (ENOSPC, EDQUOT) behind ``exc``, if a full disk ended the command.

    Follows the chain of causes; an error that says so only in words (Arrow, polars, a
    worker's traceback) counts too, as an ``OSError`` with that errno and no file name.

    Args:
        exc: what ended the command.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in DISK_FULL:
            return current
        for code, words in zip(DISK_FULL, DISK_FULL_WORDS, strict=True):
            if words.lower() in str(current).lower():
                return OSError(code, words)
        current = current.__cause__ or current.__context__
    return None


def _full_folder(full: OSError, out: str) -> str:
    """The folder to name for a full disk: ``out``, unless the file that did not fit lies
    outside the folder holding ``out`` and its draft (a temporary folder elsewhere)."""
    if not full.filename or "://" in out:
        return out
    where = os.path.dirname(os.path.abspath(os.fsdecode(full.filename)))
    home = os.path.dirname(os.path.abspath(out))
    return out if where == home or where.startswith(home + os.sep) else where


def disk_full_line(folder: str | None) -> str:
    """What a full disk under ``folder`` reads as, without ``error:`` (``no space left on the
    device of /x/rel (12 MiB free)``); the folder's nearest existing parent is measured.

    Args:
        folder: the folder written to (``--out``), or ``None`` when it is not known.
    """
    if not folder:
        return "no space left on the device"
    probe = os.path.abspath(folder)
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    try:
        free = f" ({shutil.disk_usage(probe).free / 2**20:,.1f} MiB free)"
    except OSError:
        free = ""
    return f"no space left on the device of {folder}{free}"

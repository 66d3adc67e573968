"""Options and helpers every ``… build`` command shares, declared once."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated, Any, TypeVar

import typer

from corpusforge.jobs import JobFailed

BUILD_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Typer context settings of a build command: unknown ``--flag=value`` go to Beam."""

Config = TypeVar("Config")

RowsPerShard = Annotated[int, typer.Option(help="target rows per Parquet shard")]
Runner = Annotated[
    str | None, typer.Option(help="Beam runner (default: the in-process FnApiRunner)")
]
Quiet = Annotated[bool, typer.Option("--quiet", help="print only warnings and errors")]
LidModel = Annotated[
    str | None,
    typer.Option(help="fastText lid.176.bin/.ftz (default: $CORPUSFORGE_LID_MODEL, else bundled)"),
]
Lowercase = Annotated[
    bool | None,
    typer.Option("--lowercase/--no-lowercase", help="override the profile's lowercasing"),
]


def beam_args(ctx: typer.Context, runner: str | None) -> list[str]:
    """The Beam pipeline flags of a build: the extra arguments, and ``--runner`` if given."""
    args = list(ctx.args)
    if runner:
        args.append(f"--runner={runner}")
    return args


def inputs_and_beam_args(
    ctx: typer.Context, inputs: list[str], runner: str | None
) -> tuple[list[str], list[str]]:
    """A build's inputs and Beam flags, wherever the flags stand on the line
    (:mod:`corpusforge.beamflags`); an unknown flag is one line on stderr and exit 2."""
    from corpusforge.beamflags import UnknownFlag, split_inputs

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
    return words, args


def where_manifest(out: str) -> str:
    """Where a reader finds the manifest of the release ``out``, for a build's summary."""
    if out.startswith("s3://"):
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
    run: Callable[[Config, list[str]], dict[str, Any]],
    config: Config,
    args: list[str],
    *,
    out: str,
    quiet: bool,
    summarise: Callable[[dict[str, Any], str], None],
    around: AbstractContextManager[Any] | None = None,
) -> None:
    """Run a build, print its summary; exit 3 when its accounting does not balance (the build
    then publishes nothing).

    Args:
        run: the build (``config``, Beam flags) -> manifest.
        config: its validated configuration.
        args: Beam pipeline flags.
        out: the release directory, for the summary.
        quiet: print nothing on success.
        summarise: prints a manifest's summary.
        around: a context the build runs in (e.g. a progress reporter).
    """
    from corpusforge.release.accounting import AccountingError
    from corpusforge.release.io import InputError
    from corpusforge.release.publish import ReleaseError

    try:
        with around or contextlib.nullcontext():
            manifest = run(config, args)
    except (InputError, ReleaseError, FileNotFoundError) as exc:
        # a user error (an input, --out, a lock held by another build): one line, exit 2
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    except JobFailed as exc:  # the runner's failure, not the input's: one line, exit 1
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    except AccountingError as exc:  # nothing published, the old release stays: exit 3
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=3) from None
    if not quiet:
        summarise(manifest, out)
    if not manifest["accounting"]["balanced"]:
        raise typer.Exit(code=3)

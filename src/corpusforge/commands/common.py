"""Options and helpers every ``… build`` command shares, declared once."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

BUILD_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Typer context settings of a build command: unknown ``--flag=value`` go to Beam."""

RowsPerShard = Annotated[int, typer.Option(help="target rows per Parquet shard")]
Runner = Annotated[
    str | None, typer.Option(help="Beam runner (default: the in-process FnApiRunner)")
]
Quiet = Annotated[bool, typer.Option("--quiet", help="print only errors")]
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


def configure_logging(quiet: bool) -> None:
    """INFO for a build's own messages, WARNING with ``--quiet``."""
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(message)s")

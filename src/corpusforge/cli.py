"""The ``corpusforge`` command line: one sub-command group per source, plus release tools.

corpusforge synth twitter --out demo.zip --tweets 20000 --layout zip-2020
corpusforge twitter build demo.zip --out release/
corpusforge eval ranking --benchmarks release/benchmarks --model lexical
"""

from __future__ import annotations

import gc

import typer

from corpusforge.commands import (
    bench,
    bitext,
    paranmt,
    release,
    synth,
    train,
    twitter,
    versions,
)
from corpusforge.commands import eval as eval_cmd

app = typer.Typer(
    name="corpusforge",
    help="Build clean, reproducible Parquet corpora of text pairs for sentence embeddings.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(twitter.app, name="twitter")
app.add_typer(bitext.app, name="bitext")
app.add_typer(paranmt.app, name="paranmt")
app.add_typer(synth.app, name="synth")
app.add_typer(eval_cmd.app, name="eval")
app.command("train")(train.train)
app.command("validate")(release.validate)
app.command("stats")(release.stats)
app.command("card")(release.card)
app.command("versions")(versions.versions)
app.command("bench")(bench.bench)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    finally:
        # The command has closed and published everything it wrote. At exit the interpreter
        # would still run full garbage collections over every object it imported (about
        # 0.2 s after a build, most of a small build's exit); frozen objects are left out
        # of them. atexit handlers still run, and objects still go when their count drops.
        gc.freeze()

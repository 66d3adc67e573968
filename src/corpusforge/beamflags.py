"""A build command's leftover words -> its inputs and the Beam pipeline flags, checked.

    corpusforge twitter build day.zip --out s3://bucket/rel --s3_endpoint_url=http://127.0.0.1:7070

A ``… build`` command passes every flag it does not declare itself to Beam, wherever it
stands on the line, before or after the inputs. The command-line parser leaves such flags
among the inputs (its ``inputs`` argument takes every word); :func:`split_inputs` takes them
out again. A flag takes its value as ``--flag=value`` or, for a Beam option that takes one,
as the next word (``--s3_endpoint_url http://…``); a bare Beam switch (``--save_main_session``)
takes none. A flag that neither the command nor Beam knows is an error naming it, with the
closest known flag, never an input that "does not exist" nor a flag Beam drops with a warning.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from corpusforge.sources.uris import is_uri

if TYPE_CHECKING:
    from corpusforge.config.runner import Runner


class UnknownFlag(ValueError):
    """A ``--flag`` that neither the command nor Beam declares."""


def split_inputs(
    words: Sequence[str], extra: Sequence[str] = (), *, own: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """The words of a build command's ``inputs`` argument -> (inputs, Beam flags).

    Args:
        words: what the parser put in ``inputs``: inputs and undeclared flags, in order.
        extra: what the parser left over (its extra arguments), also Beam flags.
        own: the command's own flag names (``--out``, ``--min-chars``), offered as
            suggestions when a flag is unknown.

    Raises:
        UnknownFlag: a flag Beam does not declare either.
    """
    actions: dict[str, argparse.Action] = {}
    inputs: list[str] = []
    flags: list[str] = []
    pending = [*words, *extra]
    i = 0
    while i < len(pending):
        word = pending[i]
        i += 1
        if not word.startswith("--") or word == "--":
            inputs.append(word)
            continue
        name, has_value, _ = word.partition("=")
        actions = actions or _beam_actions()  # only when there is a flag: Beam takes a second
        action = actions.get(name)
        if action is None:
            raise UnknownFlag(_unknown(name, [*actions, *own]))
        flags.append(word)
        if not has_value and action.nargs != 0 and i < len(pending):
            flags.append(pending[i])  # --flag value
            i += 1
    return inputs, flags


def check_flags(flags: Sequence[str], *, own: Iterable[str] = ()) -> None:
    """Raise :class:`UnknownFlag` for the first flag in ``flags`` that Beam does not declare."""
    dashed = [word for word in flags if word.startswith("--")]
    actions = _beam_actions() if dashed else {}
    for word in dashed:
        if word.partition("=")[0] not in actions:
            raise UnknownFlag(_unknown(word.partition("=")[0], [*actions, *own]))


def _unknown(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"unknown option {name}: neither this command's nor a Beam pipeline option{hint}"


def _beam_actions() -> dict[str, argparse.Action]:
    """Every option string Beam's pipeline options declare -> its argparse action."""
    from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

    parser = _BeamArgumentParser(allow_abbrev=False)
    classes: dict[str, type[PipelineOptions]] = {}
    for cls in PipelineOptions.__subclasses__():
        if cls.__module__.startswith("apache_beam."):  # not corpusforge's own Beam programs
            classes.setdefault(str(cls), cls)
    for cls in classes.values():
        cls._add_argparse_args(parser)
    from corpusforge import flink  # its watchdog's --flink_stall_timeout, a runner option of ours

    flink.stall_options()._add_argparse_args(parser)
    flink.batch_options()._add_argparse_args(parser)  # a Java runner option
    return {opt: action for action in parser._actions for opt in action.option_strings}


def choose_engine(choice: str, paths: Iterable[str], runner: Runner) -> str:
    """``local`` or ``beam`` for an ``--engine``-style setting: ``auto`` is local unless a
    runner or several direct workers are asked for, or a path is remote (the local engines
    read and spill on this machine's disk).

    Args:
        choice: ``auto``, ``local`` or ``beam``.
        paths: the inputs and outputs the engine would read or write.
        runner: the build's runner.
    """
    if choice != "auto":
        return choice
    workers = None
    if runner.options:  # Beam parses them (importing Beam takes about a second)
        from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions

        flags = runner.beam_args()
        workers = PipelineOptions(flags).view_as(DirectOptions).direct_num_workers
    remote = any(is_uri(path) for path in paths)
    return "beam" if runner.named or (workers or 1) > 1 or remote else "local"

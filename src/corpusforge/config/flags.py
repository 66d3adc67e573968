"""Configuration errors that name the flag a user typed, not an internal field.

Settings reach the stages from two command lines: ``corpusforge … build --min-chars 5`` and
the Beam entry points' ``python -m pipelines.twitter_pairs --min_chars 5``. A configuration
that refuses a value raises :class:`FlagError` with the setting's name; each command line
renders it with its own spelling of the flag.
"""

from __future__ import annotations


class FlagError(ValueError):
    """A setting's value is refused.

    ``str()`` names the ``corpusforge`` command's flag (``--min-chars must be >= 0, got -3``);
    :meth:`beam_message` names the Beam entry point's (``--min_chars …``).

    Args:
        setting: the setting's name in snake case, as the Beam flag spells it.
        problem: what is wrong, starting with a verb (``must be >= 0, got -3``).
    """

    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(setting, problem)
        self.setting = setting
        self.problem = problem

    def __str__(self) -> str:
        return f"--{self.setting.replace('_', '-')} {self.problem}"

    def beam_message(self) -> str:
        """The message with the Beam entry point's spelling of the flag."""
        return f"--{self.setting} {self.problem}"


class BeamFlagError(FlagError):
    """A :class:`FlagError` from a Beam entry point's flags: ``str()`` spells the flag as that
    command line does (``--min_chars must be >= 0, got -3``)."""

    def __str__(self) -> str:
        return self.beam_message()

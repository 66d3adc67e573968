"""ParaNMT-50M files -> a paraphrase pair release, in one Beam pipeline that writes the manifest.

    corpusforge paranmt build para-nmt-50m.txt.gz --out release/
    python -m pipelines.paranmt_pairs --input para-nmt-50m.txt.gz --out release/

Layout of a release ``DIR`` (written by the release library, :mod:`corpusforge.release`):

- ``pairs/<dataset>/part-*.parquet``: the pairs (``schemas/paraphrase.v2``: ``anchor`` is the
  reference, ``positive`` the paraphrase, with the file's ``score`` and the word-trigram
  overlap the filter used); ``<dataset>`` is ``paranmt`` unless ``--dataset`` says otherwise;
- ``dead_letter/part-*.parquet``: lines that could not be parsed, with reason and origin;
- ``manifest.json``: kind ``paranmt-pairs``; configuration (with the language-id model's
  path and sha256), inputs, files, counts and accounting identities.

P-SP's filters (Wieting et al., "Paraphrastic Representations at Scale", 2022): mean
whitespace-token length of the two sides in [5, 40], score in [0.4, 1.0], trigram overlap
at most 0.7; we also ask fastText that both sides are English, and keep one copy of each
pair in either order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from corpusforge.builds.local import either_engine
from corpusforge.config.bitext import ParaphraseConfig
from corpusforge.config.runner import Runner
from corpusforge.jobs import run as run_job
from corpusforge.keys import pair_key
from corpusforge.pairing.decontam import load_decontaminator
from corpusforge.release import driver
from corpusforge.release.io import expand_inputs, release_config
from corpusforge.release.manifest import describe_lid_model
from corpusforge.release.pipeline import REBUILT, ReleaseSpec, prepare_release
from corpusforge.release.publish import ReleaseStore, sidecars
from corpusforge.release.stores import open_store
from corpusforge.schemas import PARAPHRASE
from corpusforge.sources.opus.streams import file_name

if TYPE_CHECKING:
    from apache_beam.runners.runner import PipelineResult

log = logging.getLogger(__name__)


def paraphrase_sort_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """Unique within a dataset after deduplication; orders rows and places them in shards."""
    return pair_key(row["anchor"], row["positive"], symmetric=True), row["anchor"], row["positive"]


def prepare(
    config: ParaphraseConfig, runner: Runner, store: ReleaseStore
) -> tuple[ReleaseSpec, list[str]]:
    """Expand the inputs, resolve the model and open the release's draft.

    Returns:
        The release spec and the input URIs.

    Raises:
        InputError: an input is missing or not a regular file.
        FileNotFoundError: no language-id model is found.
        ReleaseError: ``config.out`` cannot take a release.
    """
    uris = expand_inputs(config.inputs, exclude=[config.out, *sidecars(config.out)])
    lid = describe_lid_model(config.lid_model)
    log.info("%d input files", len(uris))
    spec = ReleaseSpec(
        kind="paranmt-pairs",
        out=store.begin(rebuilt=REBUILT),
        pair_schema=PARAPHRASE,
        per_lang_pair=False,
        config={**release_config(config.to_json()), "lid": lid},
        plan=[{"format": "paranmt", "files": [file_name(uri)]} for uri in uris],
        runner=runner.class_name,
        store=store,
        keep_rejected=config.keep_rejected,
        holdout=config.holdout is not None,
    )
    prepare_release(spec)
    return spec, uris


def start(
    config: ParaphraseConfig,
    runner: Runner | None = None,
    store: ReleaseStore | None = None,
) -> PipelineResult:
    """Start the ParaNMT pipeline; returns the runner's result.

    Args:
        config: validated configuration.
        runner: where the Beam pipelines run (default: the in-process runner).
        store: the release's store, whose lock the caller holds (default: opened here).

    Raises:
        InputError: an input is missing or not a regular file.
        FileNotFoundError: no language-id model is found.
        ReleaseError: ``config.out`` cannot take a release.
    """
    import apache_beam as beam  # here: a build on the local engine never imports Beam

    from corpusforge.config.beam import pipeline_options
    from corpusforge.release.beam_step import WriteRelease
    from corpusforge.transforms.bitext import ParaphrasePairs, ReadParaphrases

    runner = runner or Runner()
    decontaminator = load_decontaminator(
        config.decontaminate, config.profile, config.lowercase_only
    )
    spec, uris = prepare(config, runner, store or open_store(config.out))
    p = beam.Pipeline(options=pipeline_options(runner))
    files = p | "Inputs" >> beam.Create(uris)
    read = files | "Read" >> ReadParaphrases(config.dataset)
    pairs = read["pairs"] | "Pairs" >> ParaphrasePairs(
        filters=config.filters,
        language=config.language,
        lid_model=config.lid_model,
        profile=config.profile,
        lowercase=config.lowercase_only,
        keep_rejected=config.keep_rejected,
        decontaminator=decontaminator,
        holdout=config.holdout,
    )
    counts = (read["counts"], pairs["counts"]) | "AllCounts" >> beam.Flatten()
    _ = {
        "pairs": pairs["pairs"],
        "dead": read["dead"],
        "counts": counts,
        "inputs": files,
        **({"rejected": pairs["rejected_rows"]} if config.keep_rejected else {}),
        **({"heldout": pairs["heldout"]} if config.holdout is not None else {}),
    } | "Release" >> WriteRelease(spec, paraphrase_sort_key, config.rows_per_shard)
    return run_job(p)


def build(config: ParaphraseConfig, runner: Runner | None = None) -> dict[str, Any]:
    """Run the whole build, holding the release's lock; returns the manifest it published.

    ``config.engine`` says where: the local engine (:mod:`corpusforge.builds.local`) or the
    Beam pipeline; the release is the same.

    Args:
        config: validated configuration.
        runner: where the Beam pipelines run (default: the in-process runner).

    Raises:
        AccountingError: the accounting does not balance (nothing published).
    """
    return driver.build(either_engine(start), config, runner)

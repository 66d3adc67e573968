"""OPUS bitext files -> a bitext pair release, in one Beam pipeline that also writes the manifest.

    corpusforge bitext build 'tatoeba/tatoeba.*-eng.*' --out release/
    python -m pipelines.bitext_pairs --input 'opus/RF/xml/*.xml.gz' --out release/ --dataset RF

Layout of a release ``DIR``:

- ``pairs/<dataset>/<anchor_lang>-<positive_lang>/part-*.parquet``: the training pairs
  (``schemas/bitext.v2``), one folder per dataset and language pair, the unit of the
  500,000-pair cap. The folder names the languages in column order, English first
  (``en-de``), so a reader knows the anchor's language from the path; OPUS's own names
  sort them alphabetically (``de-en``);
- ``dead_letter/part-*.parquet``: every record that could not be read, with its reason and
  origin (``schemas/dead_letter.v1``);
- ``manifest.json``: configuration (with the language-id model's path and sha256), inputs
  (bytes, sha256), the read plan, every file (rows, sha256), counts and the accounting
  identities (``schemas/manifest.v1.schema.json``, kind ``bitext-pairs``).

The driver only expands the inputs, plans the read units (which files go together, in
which format) and resolves the language-id model; everything else, hashing the inputs
included, runs in the pipeline, whose last step publishes the staged files and writes the
manifest. The job is therefore one pipeline on every runner (a Dataflow Flex Template
included). A local release is built in a draft next to ``DIR`` and swapped in whole by that
last step (:mod:`corpusforge.release.publish`), once its accounting balances, under a lock
the driver holds: a killed or failed job, or one whose accounting does not balance, leaves
the old release or the new one, never a mix, and a second build of the same release is
refused. A rerun with the same inputs and configuration writes
byte-identical Parquet on any runner. The manifest names inputs and the language-id model
by file name, size and sha256, never by path.

:mod:`corpusforge.builds.paranmt` builds ParaNMT releases the same way. What is not
bitext's own, the release step of the pipeline (:mod:`corpusforge.release.pipeline`), the
manifest, the accounting and the driver (:mod:`corpusforge.release.driver`), is the release
library's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from corpusforge.builds.local import either_engine, run_entry_point
from corpusforge.config.bitext import BitextConfig
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
from corpusforge.schemas import BITEXT
from corpusforge.sources.opus.formats import OpusInput, plan_inputs
from corpusforge.sources.opus.records import DeadLetter
from corpusforge.sources.opus.streams import file_name

if TYPE_CHECKING:
    from apache_beam.runners.runner import PipelineResult

__all__ = [
    "bitext_sort_key",
    "build",
    "describe_plan",
    "prepare",
    "run_entry_point",
    "start",
]

log = logging.getLogger(__name__)


def describe_plan(plan: Iterable[OpusInput | DeadLetter]) -> list[dict[str, Any]]:
    """The read units of a plan, for the manifest (unusable files are dead letters)."""
    return [
        {"format": str(unit.format), "files": [file_name(uri) for uri in unit.uris]}
        for unit in plan
        if isinstance(unit, OpusInput)
    ]


def bitext_sort_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """Unique within a folder after deduplication; orders rows and places them in shards."""
    return pair_key(row["anchor"], row["positive"]), row["anchor"], row["positive"]


def prepare(
    config: BitextConfig, runner: Runner, store: ReleaseStore
) -> tuple[ReleaseSpec, list[OpusInput | DeadLetter], list[str]]:
    """Expand and plan the inputs, resolve the model, and open the release's draft.

    Returns:
        The release spec, the read plan and the input URIs.

    Raises:
        InputError: an input is missing or not a regular file.
        FileNotFoundError: no language-id model is found.
        ReleaseError: ``config.out`` cannot take a release.
    """
    uris = expand_inputs(config.inputs, exclude=[config.out, *sidecars(config.out)])
    lid = describe_lid_model(config.lid_model)
    plan = plan_inputs(
        uris, format=config.format, src_lang=config.src_lang, trg_lang=config.trg_lang
    )
    log.info(
        "%d input files, %d read units", len(uris), sum(isinstance(u, OpusInput) for u in plan)
    )
    spec = ReleaseSpec(
        kind="bitext-pairs",
        out=store.begin(rebuilt=REBUILT),
        pair_schema=BITEXT,
        per_lang_pair=True,
        config={**release_config(config.to_json()), "lid": lid},
        plan=describe_plan(plan),
        runner=runner.class_name,
        store=store,
        keep_rejected=config.keep_rejected,
        holdout=config.holdout is not None,
    )
    prepare_release(spec)
    return spec, list(plan), uris


def start(
    config: BitextConfig, runner: Runner | None = None, store: ReleaseStore | None = None
) -> PipelineResult:
    """Plan the inputs and start the bitext pipeline; returns the runner's result.

    Args:
        config: validated configuration.
        runner: where the Beam pipelines run (default: the in-process runner).
        store: the release's store, whose lock the caller holds (default: opened here, for
            a caller that holds no lock, such as a template launch).

    Raises:
        InputError: an input is missing or not a regular file.
        FileNotFoundError: no language-id model is found.
        ReleaseError: ``config.out`` cannot take a release.
    """
    import apache_beam as beam  # here: a build on the local engine never imports Beam

    from corpusforge.config.beam import pipeline_options
    from corpusforge.release.beam_step import WriteRelease
    from corpusforge.transforms.bitext import BitextPairs, ReadBitext

    runner = runner or Runner()
    decontaminator = load_decontaminator(
        config.decontaminate, config.profile, config.lowercase_only
    )
    spec, plan, uris = prepare(config, runner, store or open_store(config.out))
    p = beam.Pipeline(options=pipeline_options(runner))
    read = (
        p
        | "Plan" >> beam.Create(plan)
        | "Read"
        >> ReadBitext(
            dataset=config.dataset,
            documents_root=config.documents_root,
            tsv_layout=config.tsv_layout,
            src_lang=config.src_lang,
            trg_lang=config.trg_lang,
        )
    )
    pairs = read["pairs"] | "Pairs" >> BitextPairs(
        lengths=config.filters,
        language=config.language,
        lid_model=config.lid_model,
        seed=config.seed,
        max_pairs_per_lang=config.max_pairs_per_lang,
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
        "inputs": p | "Inputs" >> beam.Create(uris),
        **({"rejected": pairs["rejected_rows"]} if config.keep_rejected else {}),
        **({"heldout": pairs["heldout"]} if config.holdout is not None else {}),
    } | "Release" >> WriteRelease(spec, bitext_sort_key, config.rows_per_shard)
    return run_job(p)


def build(config: BitextConfig, runner: Runner | None = None) -> dict[str, Any]:
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

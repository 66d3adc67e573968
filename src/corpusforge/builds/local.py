"""Bitext and ParaNMT builds on the local engine: plan, read, run :mod:`corpusforge.local.bitext`,
publish the same release the Beam pipeline publishes (through the release library, the
accounting checked first); and the choice between that engine and the pipeline
(:func:`either_engine`, ``--engine``).

    corpusforge bitext build 'tatoeba/tatoeba.*-eng.*' --out release/ --engine local --workers 2

The release (manifest included) is byte-identical to the Beam pipeline's for the same
inputs and configuration, whatever ``workers`` is: the engine is speed and memory only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from corpusforge.beamflags import choose_engine
from corpusforge.config.bitext import BitextConfig, ParaphraseConfig
from corpusforge.config.runner import Runner
from corpusforge.local.bitext import PairJob, filter_workers, floor_bytes, run_pairs
from corpusforge.local.bitext_plan import read_unit
from corpusforge.local.machine import check_floor, default_workers, memory_budget
from corpusforge.pairing.candidates import PairRules
from corpusforge.pairing.decontam import load_decontaminator
from corpusforge.release import driver
from corpusforge.release.driver import RunBuild, StartBuild, finish, raise_noted
from corpusforge.release.io import InputError, expand_inputs, join
from corpusforge.release.layout import DEAD_LETTERS
from corpusforge.release.manifest import describe_input
from corpusforge.release.pipeline import ReleaseSpec, publish_release
from corpusforge.release.publish import ReleaseStore, sidecars
from corpusforge.sources.opus.records import DeadLetter
from corpusforge.sources.opus.streams import decompressed_bytes
from corpusforge.sources.paranmt.parse import read_paranmt

if TYPE_CHECKING:  # the Beam entry points' flags; a local build never imports Beam
    from corpusforge.config.beam import BitextPairsOptions, ParanmtPairsOptions


def either_engine(start: StartBuild) -> RunBuild:
    """The build under the lock its caller holds, on the engine ``config.engine`` chooses:
    the local engine, or the pipeline ``start`` starts (then waited for,
    :func:`corpusforge.release.driver.finish`); the release is the same.

    Args:
        start: the build's ``start`` (``builds.bitext.start``, ``builds.paranmt.start``).
    """

    def run(
        config: BitextConfig | ParaphraseConfig, runner: Runner, store: ReleaseStore
    ) -> dict[str, Any] | None:
        if choose_engine(config.engine, [*config.inputs, config.out], runner) == "local":
            return build_locally(config, runner, store)
        result = start(config, runner, store)
        return finish(result, config.out, runner.class_name, store)

    return run


def run_entry_point(
    argv: list[str],
    options: type[BitextPairsOptions] | type[ParanmtPairsOptions],
    start: StartBuild,
) -> int:
    """A bitext or ParaNMT Beam entry point's body, on the engine its ``--engine`` chooses
    (:func:`corpusforge.release.driver.run_entry_point`).

    Args:
        argv: Beam-style flags: the pipeline's own, then any of Beam's (``--runner``, ...).
        options: the pipeline's flags.
        start: starts the pipeline (``builds.bitext.start`` or ``builds.paranmt.start``).
    """
    return driver.run_entry_point(argv, options, either_engine(start))


def build_locally(
    config: BitextConfig | ParaphraseConfig, runner: Runner, store: ReleaseStore
) -> dict[str, Any] | None:
    """The build of ``config`` on the local engine, under the lock the caller holds; the
    manifest it published.

    Raises:
        InputError: no input yielded a pair (nothing is published).
        MemoryBudgetError: ``--memory-limit`` is below what this build keeps (checked before
            the draft is made).
    """
    check_budget(config)
    if isinstance(config, BitextConfig):
        return build_bitext(config, runner, store, config.workers)
    return build_paranmt(config, runner, store, config.workers)


def check_budget(config: BitextConfig | ParaphraseConfig) -> None:
    """Refuse a ``--memory-limit`` below the least this build keeps
    (:func:`~corpusforge.local.bitext.floor_bytes` of its inputs' bytes and
    ``--rows-per-shard``).

    Raises:
        MemoryBudgetError: the limit is below that floor.
    """
    if config.memory_limit is None:
        return
    uris = expand_inputs(config.inputs, exclude=[config.out, *sidecars(config.out)])
    floor = floor_bytes(sum(decompressed_bytes(uri) for uri in uris), config.rows_per_shard)
    kind = "bitext" if isinstance(config, BitextConfig) else "ParaNMT"
    check_floor(config.memory_limit, floor, f"this {kind} build")


def build_bitext(
    config: BitextConfig, runner: Runner, store: ReleaseStore, workers: int | None
) -> dict[str, Any] | None:
    """The bitext build on the local engine; the manifest it published.

    Raises:
        InputError: no input yielded a pair (nothing is published).
    """
    from corpusforge.builds.bitext import prepare

    decontaminator = load_decontaminator(
        config.decontaminate, config.profile, config.lowercase_only
    )
    spec, plan, uris = prepare(config, runner, store)
    job = PairJob(
        kind="bitext",
        rules=PairRules(
            language=config.language,
            lengths=config.filters,
            profile=config.profile,
            lowercase=config.lowercase_only,
            decontaminator=decontaminator,
        ),
        lid_model=config.lid_model,
        seed=config.seed,
        cap=config.max_pairs_per_lang,
        pair_schema=spec.pair_schema,
        rows_per_shard=config.rows_per_shard,
        workers=filter_workers(memory_budget(config.memory_limit), workers or default_workers()),
        memory_budget=memory_budget(config.memory_limit),
        keep_rejected=config.keep_rejected,
        holdout=config.holdout,
    )
    options = {
        "documents_root": config.documents_root,
        "tsv_layout": config.tsv_layout,
        "src_lang": config.src_lang,
        "trg_lang": config.trg_lang,
    }

    def records() -> Iterator[Any]:
        for item in plan:
            if isinstance(item, DeadLetter):
                yield item
                continue
            yield ("read", "units"), 1
            yield from read_unit(item, dataset=config.dataset, **options)

    return _publish(spec, job, records(), uris, store)


def build_paranmt(
    config: ParaphraseConfig, runner: Runner, store: ReleaseStore, workers: int | None
) -> dict[str, Any] | None:
    """The ParaNMT build on the local engine; the manifest it published.

    Raises:
        InputError: no input yielded a pair (nothing is published).
    """
    from corpusforge.builds.paranmt import prepare as prepare_paranmt

    decontaminator = load_decontaminator(
        config.decontaminate, config.profile, config.lowercase_only
    )
    spec, uris = prepare_paranmt(config, runner, store)
    job = PairJob(
        kind="paraphrase",
        rules=PairRules(
            language=config.language,
            paraphrase=config.filters,
            profile=config.profile,
            lowercase=config.lowercase_only,
            decontaminator=decontaminator,
        ),
        lid_model=config.lid_model,
        seed=0,
        cap=None,
        pair_schema=spec.pair_schema,
        rows_per_shard=config.rows_per_shard,
        workers=filter_workers(memory_budget(config.memory_limit), workers or default_workers()),
        memory_budget=memory_budget(config.memory_limit),
        keep_rejected=config.keep_rejected,
        holdout=config.holdout,
    )

    def records() -> Iterator[Any]:
        for uri in uris:
            yield ("read", "units"), 1
            yield from read_paranmt(uri, dataset=config.dataset)

    return _publish(spec, job, records(), uris, store)


def _publish(
    spec: ReleaseSpec, job: PairJob, records: Iterator[Any], uris: list[str], store: ReleaseStore
) -> dict[str, Any] | None:
    try:
        staged = run_pairs(
            job,
            records,
            pair_dest=lambda dataset, group: join(spec.staging, spec.pair_folder(dataset, group)),
            dead_dest=join(spec.staging, DEAD_LETTERS),
            scratch=os.path.join(spec.out, ".local-spill"),
            input_bytes=sum(decompressed_bytes(uri) for uri in uris),
            rejected_dest=lambda dataset, group: join(
                spec.staging, spec.rejected_folder(dataset, group)
            ),
            heldout_dest=lambda dataset, group: join(
                spec.staging, spec.heldout_folder(dataset, group)
            ),
        )
        manifest = publish_release(
            spec, staged.files, staged.counts.items(), [describe_input(u) for u in uris]
        )
    except BaseException:
        store.abandon()
        raise
    if manifest is None:  # the release step left a note instead of publishing
        raise_noted(store)
        store.abandon()
        raise InputError("no input yielded a pair, nothing published: no record")
    return manifest

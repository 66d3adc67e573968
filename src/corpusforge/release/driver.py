"""A one-pipeline build's driver: hold the lock, start the pipeline, wait, report.

    corpusforge bitext build 'tatoeba/tatoeba.*-eng.*' --out release/
    python -m pipelines.paranmt_pairs --input para-nmt-50m.txt.gz --out release/

The builds that run as one Beam pipeline (bitext, ParaNMT) publish from inside it
(:mod:`corpusforge.release.pipeline`); this module runs such a build from the machine that
launched it: :func:`build` holds the release's lock, starts the pipeline and
:func:`finish` waits for it and turns what the release step left in the draft into the
outcome: the manifest it published, or, when it left a note instead, one error
(:class:`~corpusforge.release.io.InputError` when no input yielded a pair,
:class:`~corpusforge.release.accounting.AccountingError` when the accounting does not
balance) with the draft abandoned and the current release unchanged.
:func:`run_entry_point` is the body of the ``pipelines/`` entry points.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from corpusforge.config.runner import Runner
from corpusforge.jobs import JobFailed, wait
from corpusforge.release.accounting import AccountingError
from corpusforge.release.io import InputError, delete, exists, join, read_json
from corpusforge.release.layout import MANIFEST_NAME, NOTHING_READ, UNBALANCED
from corpusforge.release.publish import ReleaseStore
from corpusforge.release.stores import open_store

if TYPE_CHECKING:  # Beam is imported when a pipeline runs: a local build never imports it
    from apache_beam.runners.runner import PipelineResult

    from corpusforge.config.beam import BitextPairsOptions, ParanmtPairsOptions

log = logging.getLogger(__name__)


def lid_throughput(result: PipelineResult) -> dict[str, float] | None:
    """Language-id work measured inside the pipeline: pairs checked, time, pairs per second.

    ``seconds`` is the wall-clock time spent in the fastText checks themselves, summed over
    workers; ``cpu_seconds`` the thread CPU time of the same calls, which other processes
    on a busy machine do not inflate. ``None`` when the runner does not report metrics.
    """
    from apache_beam.metrics.metric import MetricsFilter

    from corpusforge.transforms.bitext import LID_NAMESPACE

    try:
        query = result.metrics().query(MetricsFilter().with_namespace(LID_NAMESPACE))
    except (NotImplementedError, AttributeError, ValueError):
        return None
    totals: Counter[str] = Counter()
    for counter in query["counters"]:
        value = counter.committed if counter.committed is not None else counter.attempted
        totals[counter.key.metric.name] += int(value or 0)
    pairs = totals["pairs_checked"]
    seconds, cpu = totals["check_micros"] / 1e6, totals["check_cpu_micros"] / 1e6
    return {
        "pairs": float(pairs),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "pairs_per_second": pairs / seconds if seconds > 0 else 0.0,
        "pairs_per_cpu_second": pairs / cpu if cpu > 0 else 0.0,
    }


def finish(
    result: PipelineResult, out: str, runner: str, store: ReleaseStore | None = None
) -> dict[str, Any] | None:
    """Wait for a build's pipeline; the manifest it wrote, or ``None`` if it did not run here.

    ``None`` means the runner only described or submitted the job and returned (a Flex
    Template launch, a dry run): the job writes the manifest itself when it ends.

    Raises:
        JobFailed: when the runner reports the job failed, in one line naming ``runner``
            (the draft is abandoned, nothing published).
        InputError: no input yielded a pair (nothing was published).
        AccountingError: the accounting does not balance (nothing was published).
    """
    store = store or open_store(out)
    try:
        wait(result, runner)
    except JobFailed:
        store.abandon()
        raise
    # an object store's release is read back from the local copy of what it published
    path = join(getattr(store, "published", out), MANIFEST_NAME)
    raise_noted(store)
    if not exists(path):
        return None
    stats = lid_throughput(result)
    if stats and stats["pairs"]:
        log.info(
            "language id: %d pairs in %.2f s of fastText time, %.2f s CPU (%.0f pairs/s)",
            stats["pairs"],
            stats["seconds"],
            stats["cpu_seconds"],
            stats["pairs_per_second"],
        )
    manifest: dict[str, Any] = read_json(path)
    return manifest


def raise_noted(store: ReleaseStore) -> None:
    """Raise what the release step noted in the draft instead of publishing, if anything,
    once the draft is abandoned (the current release stays).

    Raises:
        InputError: no input yielded a pair (``_nothing_read.json``).
        AccountingError: the accounting does not balance (``_unbalanced.json``).
    """
    note = join(store.draft, NOTHING_READ)
    if exists(note):
        what = _nothing_read(note)
        store.abandon()
        raise InputError(f"no input yielded a pair, nothing published: {what}")
    unbalanced = join(store.draft, UNBALANCED)
    if exists(unbalanced):
        error = read_json(unbalanced)["error"]
        store.abandon()
        raise AccountingError(error)


def _nothing_read(note: str) -> str:
    """What the inputs yielded, from the note :func:`publish_release` left: one line."""
    doc = read_json(note)
    delete([note])
    counts = doc["counts"]
    reasons = ", ".join(f"{k} {v}" for k, v in counts["dead_letter_reasons"].items())
    what = (
        f"{counts['dead_letter']} record(s) unreadable: {reasons}"
        if counts["dead_letter"]
        else "no record"
    )
    names = ", ".join(doc["inputs"][:5]) + (" ..." if doc["inputs"][5:] else "")
    return f"{names} ({what})"


def require_manifest(manifest: dict[str, Any] | None, out: str) -> dict[str, Any]:
    """``manifest``, or a ``RuntimeError`` when the runner returned before the job ran."""
    if manifest is None:
        raise RuntimeError(
            f"the runner returned before the job ran (a template launch?): no manifest in {out}"
        )
    return manifest


StartBuild = Callable[[Any, Runner, ReleaseStore], "PipelineResult"]
"""Starts a build's pipeline: (config, runner, the store whose lock is held) -> result."""

RunBuild = Callable[[Any, Runner, ReleaseStore], dict[str, Any] | None]
"""Runs a build under the lock its caller holds: (config, runner, store) -> the manifest
it published, or ``None`` when the runner returned before the job ran
(:func:`corpusforge.builds.local.either_engine`)."""


def build(run: RunBuild, config: Any, runner: Runner | None = None) -> dict[str, Any]:
    """Run a whole build, holding the release's lock; the manifest it published.

    Args:
        run: the build (:data:`RunBuild`).
        config: its validated configuration (with ``out``).
        runner: where the Beam pipelines run (default: the in-process runner).

    Raises:
        InputError: no input yielded a pair (nothing published).
        AccountingError: the accounting does not balance (nothing published).
        JobFailed: the runner failed the job, or a local worker died (nothing published).
    """
    runner = runner or Runner()
    store = open_store(config.out, runner)
    with store.locked(), abandoned_on_failure(store):
        manifest = run(config, runner, store)
    return require_manifest(manifest, config.out)


@contextlib.contextmanager
def abandoned_on_failure(store: ReleaseStore) -> Iterator[None]:
    """Abandon ``store``'s draft when the body fails, whatever the reason (Ctrl-C and
    ``SIGTERM`` included): nothing is published and the current release stays as it was."""
    try:
        yield
    except BaseException:
        store.abandon()
        raise


def run_entry_point(
    argv: list[str],
    options: type[BitextPairsOptions] | type[ParanmtPairsOptions],
    run: RunBuild,
) -> int:
    """A Beam entry point's body: flags -> config -> pipeline -> one JSON summary line.

    Args:
        argv: Beam-style flags: the pipeline's own, then any of Beam's (``--runner``, ...).
        options: the pipeline's flags, whose ``to_config()`` validates them; the flags it
            does not declare go to Beam.
        run: the build (:data:`RunBuild`).

    Returns:
        0, 1 when the runner reports the job failed, 2 for bad flags, inputs or ``--out``, 3
        when the accounting does not balance (nothing is published then).
    """
    try:
        flags, runner = options.split(argv)
        config = flags.to_config()
        store = open_store(config.out, runner)
        with store.locked(), abandoned_on_failure(store):
            manifest = run(config, runner, store)
    except JobFailed as exc:  # the runner's failure, not the input's
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except AccountingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if manifest is None:
        print(json.dumps({"out": config.out, "state": "submitted"}))
        return 0
    balanced = manifest["accounting"]["balanced"]
    summary = {
        "out": config.out,
        "pairs": {name: ds["rows"] for name, ds in manifest["datasets"].items()},
        "dead_letter": manifest["counts"]["dead_letter"],
        "balanced": balanced,
    }
    print(json.dumps(summary))
    return 0 if balanced else 3

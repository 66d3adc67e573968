"""Archives -> a Twitter pair release: the driver that runs the stages and writes the manifest.

    corpusforge twitter build twitter-stream-2021-01-01.zip --out release/

Layout of a release ``DIR``:

- ``tweets/<archive>-<key>/{tweets,deletes}/part-*.parquet``: each archive's extract
  (``schemas/tweet.v1``, ``schemas/delete.v1``), reused by later builds: ``<key>`` hashes the
  archive's sha256 and the extract settings, so a re-run skips archives already extracted
  with the same settings and a rebuild of the pairs never decodes the archives again;
- ``dead_letter/<archive>-<key>/part-*.parquet``: what could not be read, with reasons;
- ``pairs/{qt,rp,coqt,corp,all}/part-*.parquet``: the training pairs (``schemas/pair.v1``);
- ``benchmarks/{cq,cr,dq,dr}.parquet``: the held-out benchmarks (``schemas/benchmark.v1``);
- ``manifest.json``: configuration (files by name), inputs (name, size, sha256: no path), every
  file (rows, sha256), counts and the accounting identities
  (``schemas/manifest.v1.schema.json``).

The stages are :mod:`corpusforge.builds.twitter_extract` (archives -> extracts) and
:mod:`corpusforge.builds.twitter_pairs` (extracts -> pairs and benchmarks); this module
hashes the inputs, runs them, sums their counts and publishes through the release library
(:mod:`corpusforge.release`): the accounting is checked before anything is published, and
the new release is written into a draft next to ``DIR`` and swapped in whole
(:mod:`corpusforge.release.publish`): killed at any moment, or stopped by an unbalanced
accounting, it leaves ``DIR`` holding the old release or the new one, never a mix. A build
that fails removes its draft; the next build reuses the extracts that a build killed outright
(``SIGKILL``) finished. Paths in ``_files.json`` and the
manifest are relative to the release, so a release can be moved or copied and rebuilt in
place from any working directory.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from contextlib import ExitStack
from typing import Any

from corpusforge import progress
from corpusforge.builds.twitter_extract import (
    InputArchive,
    check_budget,
    describe_input,
    extract_batches,
    read_extract_files,
    reusable_extract,
    run_extract,
)
from corpusforge.builds.twitter_pairs import run_pairs
from corpusforge.config.runner import Runner
from corpusforge.config.twitter import DATASETS, TwitterConfig
from corpusforge.local.machine import memory_budget, process_context
from corpusforge.local.pairs import main_bytes, spare_bytes
from corpusforge.local.workers import WorkerPool, shared_at_fork, worker_pool
from corpusforge.pairing.benchmarks import BENCHMARKS
from corpusforge.pairing.conversations import CHILDREN_PER_PAIR, DropReason
from corpusforge.release import layout
from corpusforge.release.accounting import (
    TWITTER_KIND,
    Accounting,
    twitter_accounting,
)
from corpusforge.release.io import (
    COUNTS,
    FILES,
    InputError,
    delete_tree,
    ensure_dir,
    exists,
    expand_inputs,
    file_digest,
    join,
    read_json,
    relative,
    release_config,
)
from corpusforge.release.manifest import assemble, file_entries, publish, software_versions
from corpusforge.release.publish import LocalFolder, ReleaseStore, sidecars
from corpusforge.release.staging import empty_shard, place_staged
from corpusforge.release.stores import open_store
from corpusforge.schemas import (
    BENCHMARK,
    DEAD_LETTER,
    DELETE,
    PAIR,
    TWEET,
    SchemaRef,
    arrow_schema,
)
from corpusforge.sinks.shards import write_rows
from corpusforge.sources.uris import is_uri

log = logging.getLogger(__name__)

REBUILT = (
    layout.MANIFEST_NAME,
    layout.CARD,
    layout.CARD_PLOTS,
    layout.PAIRS,
    layout.BENCHMARKS,
    layout.STAGING,
)
"""What every build writes anew; the extracts (``tweets/``, ``dead_letter/``) carry over."""


def build(
    config: TwitterConfig,
    runner: Runner | None = None,
    *,
    finish_draft: Callable[[str], object] | None = None,
    digest: Callable[[str], tuple[int, str]] = file_digest,
) -> dict[str, Any]:
    """Run the whole build and publish the release at ``config.out``; returns the manifest.

    The build holds the release's lock, writes the new release into a draft and swaps it in
    once its accounting balances and its manifest (and ``finish_draft``'s files) are written.
    A build that fails, whatever the reason (Ctrl-C and ``SIGTERM`` included), removes its
    draft and lock and leaves the current release as it was; only a build killed outright
    (``SIGKILL``), which cannot clean up, leaves a draft, whose finished extracts the next
    build reuses.

    Args:
        config: validated configuration.
        runner: where the Beam pipelines run (default: the in-process runner).
        finish_draft: called with the draft folder of a local release after its manifest is
            written and before it is published (the dataset card is written there).
        digest: an input's size and sha256 (the command's hashed the inputs on a thread
            while this module was imported: :class:`~corpusforge.release.io.DigestsAhead`).

    Raises:
        InputError: an input is missing or not a regular file, or no archive could be read.
        ReleaseError: ``config.out`` cannot take a release, or another build holds it.
        AccountingError: the accounting does not balance (nothing published: the current
            release stays).
        WorkerDied: a worker process of the local engine died (nothing published).
        MemoryBudgetError: ``--memory-limit`` is below the least the build keeps (checked
            first).
    """
    runner = runner or Runner()
    check_budget(config)
    store = open_store(config.out, runner)
    uris = expand_inputs(config.inputs, exclude=[config.out, *sidecars(config.out)])
    with store.locked():
        try:
            root = store.begin(rebuilt=REBUILT)
            manifest, accounting = _build_into(
                dataclasses.replace(config, out=root),
                runner,
                uris,
                _current_manifest(store),
                digest,
            )
            local = finish_draft if not is_uri(root) else None
            progress.stage("commit")
            publish(store, root, manifest, accounting, before_commit=local)
        except BaseException:  # a failure, Ctrl-C, SIGTERM: the draft goes, the release stays
            store.abandon()
            raise
    return manifest


def _current_manifest(store: ReleaseStore) -> dict[str, Any] | None:
    """The manifest of the local release whose extracts the draft carries (the current
    release, or on ``s3://`` the local copy of the last version built here): the record
    that vouches for them. ``None`` for a first build or a draft in a bucket."""
    folder = store.target if isinstance(store, LocalFolder) else getattr(store, "published", "")
    if not folder or is_uri(folder):
        return None
    try:
        doc = read_json(join(folder, layout.MANIFEST_NAME))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _build_into(
    config: TwitterConfig,
    runner: Runner,
    uris: list[str],
    published: Mapping[str, Any] | None = None,
    digest: Callable[[str], tuple[int, str]] = file_digest,
) -> tuple[dict[str, Any], Accounting]:
    """The build, with ``config.out`` the folder it writes (the draft of a local release);
    the manifest it will publish and its accounting.

    Args:
        config: the build's settings, ``out`` the draft.
        runner: where the Beam pipelines run.
        uris: the input archives.
        published: the manifest of the release the draft's extracts were carried from; an
            extract it published is reused only if its files are as it records them
            (:func:`~corpusforge.builds.twitter_extract.reusable_extract`).
        digest: an input's size and sha256.
    """
    log.info("%d input archives", len(uris))
    progress.stage("hash inputs")
    archives = [describe_input(uri, config, digest) for uri in uris]
    folders = {a.uri: join(config.out, layout.TWEETS, a.extract) for a in archives}
    todo = [a for a in archives if not reusable_extract(config.out, a, published)]
    log.info("extracting %d archives, reusing %d", len(todo), len(archives) - len(todo))
    progress.archives_planned(len(todo))
    progress.stage("extract")
    for batch in extract_batches(todo, runner):
        run_extract(batch, config, runner)

    extract_files: list[dict[str, Any]] = []
    extract_counts = []
    for a in archives:
        extract_files += read_extract_files(config.out, a)
        extract_counts.append(read_json(join(folders[a.uri], COUNTS)))
    _check_something_read(archives, extract_counts, extract_files)
    tweet_files = [i["path"] for i in extract_files if _schema_of(i["path"]) == TWEET]
    delete_files = [i["path"] for i in extract_files if _schema_of(i["path"]) == DELETE]

    staging = join(config.out, layout.STAGING)
    delete_tree(staging)
    progress.stage("pairs")
    with ExitStack() as background:
        scores = _ReferenceScores(config, background)
        run_pairs(tweet_files, delete_files, config, runner, staging, scores.start)
        reference = scores.result()  # read from staging: before the benchmarks move
    pair_counts = read_json(join(staging, COUNTS)) if exists(join(staging, COUNTS)) else {}
    progress.stage("publish")
    pair_files = _publish(config, staging)
    delete_tree(staging)

    manifest, accounting = _manifest(
        config, runner, archives, extract_files, extract_counts, pair_counts, pair_files
    )
    progress.stage("reference scores")
    manifest["reference_scores"] = reference if reference is not None else _reference_scores(config)
    for bench, b in manifest["benchmarks"].items():
        if b["shortfall"]:
            log.warning(
                "benchmark %s: %d of %d queries written (%d roots eligible, %d without enough "
                "negatives); nothing is padded",
                bench,
                b["rows"],
                b["requested"],
                b["eligible_queries"],
                b["queries_without_negatives"],
            )
    return manifest, accounting


class NothingRead(InputError):
    """No line of any input archive could be read."""


def _check_something_read(
    archives: list[InputArchive],
    extract_counts: list[dict[str, int]],
    extract_files: list[dict[str, Any]],
) -> None:
    """Warn about each input no line could be read from; fail when that is every input.

    Raises:
        NothingRead: no line of any input could be read (nothing is published).
    """
    problems = [
        _what_is_wrong(a, extract_files)
        for a, counts in zip(archives, extract_counts, strict=True)
        if not counts.get("lines_read")
    ]
    if archives and len(problems) == len(archives):
        shown = "; ".join(problems[:5]) + (
            f"; and {len(problems) - 5} more" if problems[5:] else ""
        )
        raise NothingRead(f"no input could be read, nothing published: {shown}")
    for problem in problems:
        log.warning("input %s", problem)


def _what_is_wrong(archive: InputArchive, extract_files: list[dict[str, Any]]) -> str:
    """``NAME: what is wrong (reason)``, from the archive's own dead letters."""
    import pyarrow.parquet as pq

    folder = f"/{layout.DEAD_LETTERS}/{archive.extract}/"
    for info in extract_files:
        if folder in info["path"] and info["rows"]:
            rows = pq.read_table(info["path"], columns=["origin_member", "reason", "detail"])
            for row in rows.to_pylist():
                if row["origin_member"] is None:
                    return f"{archive.name}: {row['detail']} ({row['reason']})"
    if archive.bytes == 0:
        return f"{archive.name}: an empty file"
    return f"{archive.name}: no line could be read from it"


def _reference_scores(config: TwitterConfig) -> dict[str, Any]:
    """The TF-IDF baseline's scores on the release's benchmarks: a reference for any model."""
    if config.benchmarks.queries == 0:
        return {}
    if is_uri(config.out):
        return {"model": "tfidf", "skipped": "computed only for local releases"}
    return _tfidf_scores(join(config.out, layout.BENCHMARKS))


def _tfidf_scores(folder: str) -> dict[str, Any]:
    """:func:`_reference_scores` of the benchmark files in ``folder``."""
    from corpusforge.eval.lexical import TfidfEncoder
    from corpusforge.eval.ranking import evaluate_ranking

    report = evaluate_ranking(folder, TfidfEncoder())
    for bench in report["benchmarks"].values():
        bench.pop("path", None)  # the manifest holds no absolute paths
    return {"model": "tfidf", **report}


REFERENCE_WORKER = "the reference-score worker"
"""The process that scores the benchmarks beside the pair choice, as an error names it."""


class _ReferenceScores:
    """:func:`_reference_scores`, on a forked process while this one chooses the pairs.

    The local pair engine writes the benchmarks before it chooses the pairs
    (:func:`~corpusforge.builds.twitter_pairs.run_pairs`); scoring them (TF-IDF fits, about
    0.2 s of CPU on a 200k-tweet day) then needs nothing of what follows, and runs on the
    other core while the pair choice and its shards take this one. Where no worker is forked
    (the Beam engine, a release in a bucket, no benchmarks, a start method other than
    ``fork``, a benchmark with no file until it is published empty, a memory budget whose
    margin does not hold the worker), :func:`_reference_scores` runs after the pairs are
    published, as it did. Same scores either way: the same files.

    The worker is a copy of this process; at its worst (this process rewriting every page
    it shares) it holds this process's memory, :func:`~corpusforge.local.pairs.main_bytes`
    (measured on a 200k-tweet day: 96 MB private of 220 MB resident), so it starts only where
    the budget's margin beyond the pair stage holds that
    (:func:`~corpusforge.local.pairs.spare_bytes`).

    Args:
        config: the build's settings.
        background: holds the worker's pool, which leaves with it (stopping a worker still
            at work when the build fails).
    """

    def __init__(self, config: TwitterConfig, background: ExitStack) -> None:
        self._config = config
        self._background = background
        self._pool: WorkerPool | None = None
        self._future: Future[dict[str, Any]] | None = None

    def start(self, folder: str) -> None:
        """Score the benchmark files in ``folder`` on a worker process, where one is forked."""
        config = self._config
        queries = config.benchmarks.queries
        if (
            queries == 0
            or is_uri(config.out)
            or spare_bytes(memory_budget(config.memory_limit), queries) < main_bytes(queries)
            or process_context().get_start_method() != "fork"
            or not all(os.path.isfile(join(folder, f"{b}.parquet")) for b in BENCHMARKS)
        ):
            return
        with shared_at_fork():
            self._pool = self._background.enter_context(worker_pool(REFERENCE_WORKER, 1))
            self._future = self._pool.submit(_tfidf_scores, folder)  # forks the worker

    def result(self) -> dict[str, Any] | None:
        """The scores the worker gave (``None`` where none was started).

        Raises:
            WorkerDied: the worker died before it gave them.
        """
        if self._pool is None or self._future is None:
            return None
        return self._pool.result(self._future)


def _schema_of(path: str) -> SchemaRef:
    folder = path.rsplit("/", 2)[-2]
    if folder == "tweets":
        return TWEET
    if folder == "deletes":
        return DELETE
    if "/dead_letter/" in path:
        return DEAD_LETTER
    if "/benchmarks/" in path:
        return BENCHMARK
    return PAIR


def _manifest(
    config: TwitterConfig,
    runner: Runner,
    archives: list[InputArchive],
    extract_files: list[dict[str, Any]],
    extract_counts: list[dict[str, int]],
    pair_counts: dict[str, int],
    pair_files: list[dict[str, Any]],
) -> tuple[dict[str, Any], Accounting]:
    files = file_entries(extract_files + pair_files, config.out, _schema_of)
    counts, datasets, benchmarks = assemble_counts(extract_counts, pair_counts)
    for dataset, ds in datasets.items():
        prefix = layout.pair_folder(dataset) + "/"
        ds["files"] = [f["path"] for f in files if f["path"].startswith(prefix)]
    for bench, b in benchmarks.items():
        b["requested"] = config.benchmarks.queries
        b["file"] = layout.benchmark_file(bench)
        b["shortfall"] = max(0, config.benchmarks.queries - b["rows"])
    active = benchmarks if config.benchmarks.queries > 0 else {}
    accounting = twitter_accounting(counts, datasets, files, active)
    manifest = assemble(
        kind=TWITTER_KIND,
        software=software_versions(),
        schemas=(TWEET, DELETE, DEAD_LETTER, PAIR, BENCHMARK),
        config=release_config(config.to_json()),
        runner=runner.class_name,
        inputs=[a.to_json() for a in archives],
        files=files,
        datasets=datasets,
        benchmarks=active,
        counts=counts,
        accounting=accounting,
    )
    return manifest, accounting


# ---------------------------------------------------------------------------------------
# Publishing the staged pairs, and the counts


def _publish(config: TwitterConfig, staging: str) -> list[dict[str, Any]]:
    """Move staged pairs and benchmarks into place; an empty output gets an empty file.

    Every dataset (and ``all``) has at least one shard and every benchmark a file, so a
    reader always finds the schema, even where no row qualified.
    """
    staged = read_json(join(staging, FILES)) if exists(join(staging, FILES)) else []
    published = place_staged(staged, staging, config.out, (layout.PAIRS, layout.BENCHMARKS))
    present = {relative(i["path"], config.out).rsplit("/", 1)[0] for i in published}
    present |= {relative(i["path"], config.out) for i in published}
    for dataset in (*DATASETS, "all"):
        if layout.pair_folder(dataset) not in present:
            published.append(empty_shard(config.out, layout.pair_folder(dataset), PAIR))
    if config.benchmarks.queries > 0:
        for bench in BENCHMARKS:
            if layout.benchmark_file(bench) not in present:
                ensure_dir(join(config.out, layout.BENCHMARKS))
                path = join(config.out, layout.benchmark_file(bench))
                published.append(write_rows(path, [], arrow_schema(BENCHMARK)))
    return published


def _nested(flat: Mapping[str, int], prefix: str) -> dict[str, int]:
    return {k[len(prefix) :]: v for k, v in sorted(flat.items()) if k.startswith(prefix)}


def assemble_counts(
    extract_counts: Iterable[Mapping[str, int]], pair_counts: Mapping[str, int]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Sum the stages' flat counters into the manifest's counts, datasets and benchmarks."""
    total: Counter[str] = Counter()
    for archive_counts in extract_counts:
        total.update(archive_counts)
    total.update(pair_counts)
    dead_letter = (
        total["dead_letter_lines"]
        + total["dead_letter_members"]
        + total["dead_letter_archives"]
        + total["embedded_skipped"]
    )
    dropped: Counter[str] = Counter(_nested(total, "tweets_dropped."))
    datasets: dict[str, dict[str, Any]] = {}
    for dataset in DATASETS:
        ds_dropped = _nested(total, f"pairs.{dataset}.dropped.")
        rows = total[f"pairs.{dataset}.rows"]
        if f"pairs.{dataset}.deduped" in total and total[f"pairs.{dataset}.deduped"] > rows:
            sampled_out = (total[f"pairs.{dataset}.deduped"] - rows) * CHILDREN_PER_PAIR[dataset]
            ds_dropped[str(DropReason.PAIR_SAMPLED_OUT)] = sampled_out
        dropped.update({f"{dataset}.{k}": v for k, v in ds_dropped.items()})
        datasets[dataset] = {
            "rows": rows,
            "candidates": total[f"pairs.{dataset}.candidates"],
            "dropped": dict(sorted(ds_dropped.items())),
        }
    datasets["all"] = {"rows": sum(datasets[d]["rows"] for d in DATASETS)}
    counts: dict[str, Any] = {
        key: total[key]
        for key in (
            "archives",
            "members_listed",
            "members_read",
            "lines_read",
            "tweets",
            "retweets",
            "delete_notices",
            "other_messages",
            "records",
            "embedded_skipped",
            "api_errors",
            "dead_letter_archives",
            "dead_letter_members",
            "dead_letter_lines",
            "records_in",
            "records_lang_not_selected",
            "records_outside_conversations",
            "records_in_conversations",
            "tweets_distinct",
            "tweets_eligible",
        )
    }
    counts["dead_letter"] = dead_letter
    counts["dead_letter_reasons"] = _nested(total, "dead_letter.")
    counts["members_skipped"] = _nested(total, "members_skipped.")
    counts["other"] = _nested(total, "other.")
    counts["decontaminated"] = _nested(total, "decontaminated.")
    counts["dropped"] = dict(sorted(dropped.items()))
    benchmarks: dict[str, dict[str, Any]] = {
        bench: {
            key: total[f"benchmarks.{bench}.{key}"]
            for key in ("eligible_queries", "selected_queries", "queries_without_negatives", "rows")
        }
        for bench in BENCHMARKS
    }
    return counts, datasets, benchmarks

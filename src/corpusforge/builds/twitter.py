"""Archives -> a Twitter pair release: the driver that runs the stages and writes the manifest.

    corpusforge twitter build twitter-stream-2021-01-01.zip --out release/

Layout of a release ``DIR``:

- ``tweets/<archive>-<key>/{tweets,deletes}/part-*.parquet``: each archive's extract
  (``schemas/tweet.v1``, ``schemas/delete.v1``), reused by later builds: ``<key>`` hashes the
  archive's sha256 and the extract settings, so a re-run skips archives already extracted
  with the same settings and a rebuild of the pairs never decodes the archives again;
- ``dead_letter/<archive>-<key>/part-*.parquet``: what could not be read, with reasons;
- ``pairs/{qt,rp,coqt,corp}/part-*.parquet``: the training pairs (``schemas/pair.v1``);
- ``manifest.json``: configuration (files by name), inputs (name, size, sha256: no path), every
  file (rows, sha256), counts and the accounting identities
  (``schemas/manifest.v1.schema.json``).

A build writes the new release into a draft next to ``DIR`` and swaps it in whole
(:mod:`corpusforge.release.publish`): killed at any moment, it leaves ``DIR`` holding the
old release or the new one, never a mix, and the next build reuses the extracts it
finished. Paths in ``_files.json`` and the manifest are relative to the release, so a
release can be moved or copied and rebuilt in place from any working directory.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions

import corpusforge
from corpusforge import progress
from corpusforge.config.twitter import DATASETS, TwitterConfig
from corpusforge.jobs import job
from corpusforge.local.extract import extract_archive
from corpusforge.local.pairs import PairSettings, pair_tweets
from corpusforge.local.spill import EXTRACT_SPILL_ROWS, PAIR_SPILL_ROWS
from corpusforge.pairing.benchmarks import BENCHMARKS
from corpusforge.pairing.conversations import CHILDREN_PER_PAIR, DropReason
from corpusforge.release.io import (
    COUNTS,
    FILES,
    InputError,
    WriteJsonPerKeyFn,
    delete_tree,
    ensure_dir,
    expand_inputs,
    file_digest,
    file_list,
    join,
    pipeline_options,
    read_json,
    read_parquet,
    relative,
    release_config,
    software,
    write_json,
)
from corpusforge.release.publish import open_store, sidecars
from corpusforge.schemas import (
    BENCHMARK,
    DEAD_LETTER,
    DELETE,
    MANIFEST,
    PAIR,
    TWEET,
    SchemaRef,
    arrow_schema,
    validate_json,
)
from corpusforge.sinks.parquet import (
    ShardedWriter,
    WriteParquetShards,
    shard_name,
    write_rows,
)
from corpusforge.sources.twitter.archive import archive_name
from corpusforge.text.clean import clean_text
from corpusforge.text.decontam import Decontaminator
from corpusforge.transforms.twitter import ExtractedTweets, TwitterPairs

log = logging.getLogger(__name__)


EXTRACT_VERSION = 2
"""Bump when extraction output changes for the same input: old extracts are then rebuilt."""

_SUCCESS = "_SUCCESS"
REBUILT = ("manifest.json", "README.md", "card", "pairs", "benchmarks", "_staging")
"""What every build writes anew; the extracts (``tweets/``, ``dead_letter/``) carry over."""


@dataclass(frozen=True)
class InputArchive:
    """One input archive as the manifest records it."""

    uri: str
    name: str
    bytes: int
    sha256: str
    extract: str

    def to_json(self) -> dict[str, Any]:
        """As the manifest records it: by name, size and hash, never by path."""
        return {
            "name": self.name,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "extract": f"tweets/{self.extract}",
        }


def describe_input(uri: str, config: TwitterConfig) -> InputArchive:
    """Size, sha256 and extract folder name of one archive (reads it once, streaming)."""
    size, sha = file_digest(uri)
    settings = {
        "archive_sha256": sha,
        "extract_version": EXTRACT_VERSION,
        "schemas": [str(TWEET), str(DELETE), str(DEAD_LETTER)],
        **config.extract_settings(),
    }
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]
    name = archive_name(uri)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "archive"
    return InputArchive(uri, name, size, sha, f"{safe}-{key}")


# ---------------------------------------------------------------------------------------
# Stage 1: extract


def run_extract(todo: list[InputArchive], config: TwitterConfig, beam_args: list[str]) -> None:
    """Stage 1: extract ``todo`` into their folders under ``tweets/``: one archive at a time
    in this process (the local engine), or one Beam pipeline for them all.

    Each archive's folder gets ``tweets/``, ``deletes/`` shards, ``_files.json`` and
    ``_counts.json``; ``_SUCCESS`` is written last, only once the pipeline has finished, so
    a folder without it is a killed run's leftover and is rebuilt.
    """
    tweet_dirs = {a.uri: join(config.out, "tweets", a.extract) for a in todo}
    dead_dirs = {
        join(config.out, "tweets", a.extract): join(config.out, "dead_letter", a.extract)
        for a in todo
    }
    for a in todo:  # leftovers of a killed run are never mixed with a fresh extract
        delete_tree(tweet_dirs[a.uri])
        delete_tree(dead_dirs[tweet_dirs[a.uri]])
    if extract_engine(config, beam_args) == "local":
        for a in todo:
            folder = tweet_dirs[a.uri]
            extract_archive(
                a.uri,
                folder,
                dead_dirs[folder],
                config.limits,
                config.rows_per_shard,
                tweet_key=_tweet_key,
                dead_key=_dead_key,
                spill_rows=EXTRACT_SPILL_ROWS,
                release_root=config.out,
            )
            write_json(join(folder, _SUCCESS), a.to_json())
        return
    with job(pipeline_options(beam_args)) as p:
        ex = (
            p
            | "Archives" >> beam.Create(sorted(tweet_dirs))
            | "Extract" >> ExtractedTweets(tweet_dirs, config.limits)
        )
        tweet_files = (
            ex["tweets"]
            | "TweetDest" >> beam.Map(lambda kv: (join(kv[0], "tweets"), kv[1]))
            | "WriteTweets" >> WriteParquetShards(TWEET, _tweet_key, config.rows_per_shard)
        )
        delete_files = (
            ex["deletes"]
            | "DeleteDest" >> beam.Map(lambda kv: (join(kv[0], "deletes"), kv[1]))
            | "WriteDeletes" >> WriteParquetShards(DELETE, _tweet_key, config.rows_per_shard)
        )
        dead_files = (
            ex["dead"]
            | "DeadDest" >> beam.Map(lambda kv, d: (d[kv[0]], kv[1]), dead_dirs)
            | "WriteDead" >> WriteParquetShards(DEAD_LETTER, _dead_key, config.rows_per_shard)
        )
        (
            (tweet_files, delete_files, dead_files)
            | "AllFiles" >> beam.Flatten()
            | "FilesByExtract" >> beam.Map(_extract_of, list(dead_dirs.items()))
            | "GroupFiles" >> beam.GroupByKey()
            | "WriteFileLists"
            >> beam.ParDo(WriteJsonPerKeyFn(FILES, functools.partial(file_list, root=config.out)))
        )
        (
            ex["counts"]
            | "CountsByExtract" >> beam.Map(lambda kv: (kv[0][0], (kv[0][1], kv[1])))
            | "GroupCounts" >> beam.GroupByKey()
            | "WriteCounts" >> beam.ParDo(WriteJsonPerKeyFn(COUNTS, lambda kvs: dict(sorted(kvs))))
        )
    for a in todo:
        folder = tweet_dirs[a.uri]
        if not FileSystems.exists(join(folder, FILES)):
            write_json(join(folder, FILES), [])
        write_json(join(folder, _SUCCESS), a.to_json())


IN_PROCESS_RUNNERS = {
    "FnApiRunner",
    "DirectRunner",
    "BundleBasedDirectRunner",
    "SwitchingDirectRunner",
}


def _extract_batches(todo: list[InputArchive], beam_args: list[str]) -> list[list[InputArchive]]:
    """One extract pipeline per archive on the in-process runner, one for all elsewhere.

    The in-process runner holds a grouping's data in memory, so extracting one daily archive
    at a time bounds memory by a day, not by the whole input; a distributed runner spreads
    the grouping over workers and is best given everything at once.
    """
    if not todo:
        return []
    runner = PipelineOptions(beam_args).get_all_options().get("runner") or "FnApiRunner"
    if str(runner).rsplit(".", 1)[-1] in IN_PROCESS_RUNNERS:
        return [[archive] for archive in todo]
    return [todo]


def _tweet_key(row: Mapping[str, Any]) -> int:
    return int(row["id"])


def _dead_key(row: Mapping[str, Any]) -> tuple[str, str, int, str, str]:
    return (
        row["origin_archive"] or "",
        row["origin_member"] or "",
        row["origin_line"] if row["origin_line"] is not None else -1,
        row["reason"],
        row["detail"],
    )


def _extract_of(
    info: dict[str, Any], dead_dirs: list[tuple[str, str]]
) -> tuple[str, dict[str, Any]]:
    path = info["path"]
    for tweet_dir, dead_dir in dead_dirs:
        if path.startswith(tweet_dir.rstrip("/") + "/") or path.startswith(
            dead_dir.rstrip("/") + "/"
        ):
            return tweet_dir, info
    raise ValueError(f"file {path} is outside every extract folder")


def _extract_is_complete(folder: str) -> bool:
    return all(FileSystems.exists(join(folder, n)) for n in (_SUCCESS, FILES, COUNTS))


def _extract_files(root: str, archive: InputArchive) -> list[dict[str, Any]]:
    """An extract's ``_files.json`` with paths under ``root``.

    The list holds paths relative to the release; one written before releases could move
    holds the paths the build was given, whose part from ``tweets/<extract>/`` or
    ``dead_letter/<extract>/`` on is the relative path.
    """
    infos = read_json(join(root, "tweets", archive.extract, FILES))
    anchors = (f"tweets/{archive.extract}/", f"dead_letter/{archive.extract}/")
    located = []
    for info in infos:
        path = info["path"]
        if not path.startswith(anchors):
            at = max(path.rfind("/" + a) for a in anchors)
            if at < 0:
                raise ValueError(f"{archive.extract}/{FILES}: {path} is outside the extract")
            path = path[at + 1 :]
        located.append({**info, "path": join(root, path)})
    return located


# ---------------------------------------------------------------------------------------
# Stage 2: pairs


def _engine(choice: str, paths: Iterable[str], beam_args: list[str]) -> str:
    """``local`` or ``beam``: ``auto`` is local unless a runner or several workers are asked,
    or a path is remote (the local engines read and spill on this machine's disk)."""
    if choice != "auto":
        return choice
    named_runner = any(a == "--runner" or a.startswith("--runner=") for a in beam_args)
    workers = PipelineOptions(beam_args).view_as(DirectOptions).direct_num_workers
    remote = any("://" in path for path in paths)
    return "beam" if named_runner or (workers or 1) > 1 or remote else "local"


def extract_engine(config: TwitterConfig, beam_args: list[str]) -> str:
    """The engine of the extract stage (``--extract-engine``)."""
    return _engine(config.extract_engine, (config.out, *config.inputs), beam_args)


def pair_engine(config: TwitterConfig, beam_args: list[str]) -> str:
    """The engine of the pair stage (``--pair-engine``)."""
    return _engine(config.pair_engine, (config.out,), beam_args)


def run_pairs(
    tweet_files: list[str],
    delete_files: list[str],
    config: TwitterConfig,
    beam_args: list[str],
    staging: str,
) -> None:
    """Stage 2: normalised tweets -> pairs and benchmarks in ``staging``.

    Writes the shards, ``_files.json`` and ``_counts.json`` under ``staging``; :func:`build`
    publishes them. The local engine and the Beam pipeline write the same files.
    """
    ensure_dir(staging)  # marks the stage as started, for whoever watches the release folder
    if pair_engine(config, beam_args) == "local":
        _run_pairs_locally(tweet_files, delete_files, config, staging)
    else:
        _run_pairs_on_beam(tweet_files, delete_files, config, beam_args, staging)


def _pair_settings(config: TwitterConfig) -> PairSettings:
    return PairSettings(
        profile=config.profile,
        min_chars=config.min_chars,
        langs=config.langs,
        seed=config.seed,
        benchmarks=config.benchmarks,
        pairs_per_dataset=config.pairs_per_dataset,
        decontaminator=_decontaminator(config),
        lid_model=(config.lid_model or "") if config.lid == "fasttext" else None,
    )


def _run_pairs_locally(
    tweet_files: list[str], delete_files: list[str], config: TwitterConfig, staging: str
) -> None:
    settings = _pair_settings(config)
    partitions = config.pair_partitions
    with pair_tweets(
        tweet_files,
        delete_files,
        settings,
        partitions=partitions,
        workdir=staging,
        spill_rows=PAIR_SPILL_ROWS,
    ) as stage:
        writer = ShardedWriter(
            PAIR, _pair_key, config.rows_per_shard, spill=stage.spill, buffer_rows=PAIR_SPILL_ROWS
        )
        for dest in ("all", *DATASETS):
            ensure_dir(join(staging, "pairs", dest))
        for row in stage.pairs:
            writer.add(join(staging, "pairs", row["dataset"]), row)
            writer.add(join(staging, "pairs", "all"), row)
        files = writer.close()
    for bench, rows in sorted(stage.benchmarks.items()):
        ensure_dir(join(staging, "benchmarks"))
        files.append(_write_benchmark((bench, rows), staging))
    write_json(join(staging, FILES), file_list(files))
    write_json(join(staging, COUNTS), dict(sorted(stage.counts.items())))


def _run_pairs_on_beam(
    tweet_files: list[str],
    delete_files: list[str],
    config: TwitterConfig,
    beam_args: list[str],
    staging: str,
) -> None:
    settings = _pair_settings(config)
    with job(pipeline_options(beam_args)) as p:
        tweets = read_parquet(p, "Tweets", tweet_files)
        links = read_parquet(p, "Links", tweet_files, ["lang", "reply_to_id", "quote_of_id"])
        deletes = read_parquet(p, "Deletes", delete_files, ["id"])
        inputs = {"tweets": tweets, "links": links, "deletes": deletes}
        result = inputs | "Pairs" >> TwitterPairs(
            settings.profile,
            settings.min_chars,
            settings.langs,
            settings.seed,
            benchmarks=settings.benchmarks,
            pairs_per_dataset=settings.pairs_per_dataset,
            decontaminator=settings.decontaminator,
            lid_model=settings.lid_model,
        )
        pair_files = (
            result["pairs"]
            | "PairDest"
            >> beam.FlatMap(
                lambda r: [
                    (join(staging, "pairs", r["dataset"]), r),
                    (join(staging, "pairs", "all"), r),
                ]
            )
            | "WritePairs" >> WriteParquetShards(PAIR, _pair_key, config.rows_per_shard)
        )
        bench_files = (
            result["benchmarks"]
            | "GroupBenchmark" >> beam.GroupByKey()
            | "WriteBenchmark" >> beam.Map(_write_benchmark, staging)
        )
        (
            (pair_files, bench_files)
            | "StagedFiles" >> beam.Flatten()
            | "OneFileList" >> beam.Map(lambda info: (staging, info))
            | "GroupPairFiles" >> beam.GroupByKey()
            | "WritePairFileList" >> beam.ParDo(WriteJsonPerKeyFn(FILES, file_list))
        )
        (
            result["counts"]
            | "OneCounts" >> beam.Map(lambda kv: (staging, kv))
            | "GroupPairCounts" >> beam.GroupByKey()
            | "WritePairCounts"
            >> beam.ParDo(WriteJsonPerKeyFn(COUNTS, lambda kvs: dict(sorted(kvs))))
        )


def _decontaminator(config: TwitterConfig) -> Decontaminator | None:
    if not config.decontaminate:
        return None
    profile = config.profile
    names = [archive_name(path) for path in config.decontaminate]
    if len(set(names)) < len(names):
        names = list(config.decontaminate)
    return Decontaminator.from_files(
        list(zip(names, config.decontaminate, strict=True)),
        normalise=functools.partial(clean_text, profile=profile),
    )


def _write_benchmark(element: tuple[str, Iterable[dict[str, Any]]], staging: str) -> dict[str, Any]:
    bench, rows = element
    ordered = sorted(rows, key=lambda r: r["query_id"])
    return write_rows(
        join(staging, "benchmarks", f"{bench}.parquet"), ordered, arrow_schema(BENCHMARK)
    )


def _pair_key(row: Mapping[str, Any]) -> tuple[int, int, str]:
    """Unique within ``all`` too: a tweet replying to and quoting one root is in qt and rp."""
    return int(row["anchor_id"]), int(row["positive_id"]), row["dataset"]


# ---------------------------------------------------------------------------------------
# Publishing and the manifest


def _publish(config: TwitterConfig, staging: str) -> list[dict[str, Any]]:
    """Move staged pairs and benchmarks into place; an empty output gets an empty file.

    Every dataset (and ``all``) has at least one shard and every benchmark a file, so a
    reader always finds the schema, even where no row qualified.
    """
    staged = read_json(join(staging, FILES)) if FileSystems.exists(join(staging, FILES)) else []
    for folder in ("pairs", "benchmarks"):
        delete_tree(join(config.out, folder))
    published = []
    for info in staged:
        target = join(config.out, relative(info["path"], staging))
        ensure_dir(target.rsplit("/", 1)[0])
        FileSystems.rename([info["path"]], [target])
        published.append({**info, "path": target})
    present = {relative(i["path"], config.out).rsplit("/", 1)[0] for i in published}
    present |= {relative(i["path"], config.out) for i in published}
    for dataset in (*DATASETS, "all"):
        if f"pairs/{dataset}" not in present:
            path = join(config.out, "pairs", dataset, shard_name(0, 1))
            ensure_dir(join(config.out, "pairs", dataset))
            published.append(write_rows(path, [], arrow_schema(PAIR)))
    if config.benchmarks.queries > 0:
        for bench in BENCHMARKS:
            if f"benchmarks/{bench}.parquet" not in present:
                ensure_dir(join(config.out, "benchmarks"))
                path = join(config.out, "benchmarks", f"{bench}.parquet")
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


def accounting_identities(
    counts: Mapping[str, Any],
    datasets: Mapping[str, Mapping[str, Any]],
    file_rows: Mapping[str, int],
    benchmarks: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The equalities that make a release's accounting close, each with both sides.

    Args:
        counts: the manifest's ``counts``.
        datasets: the manifest's ``datasets``.
        file_rows: rows found in the files, by ``pairs/<dataset>`` and ``benchmarks/<name>``.
        benchmarks: the manifest's ``benchmarks``.
    """

    def identity(name: str, lhs: int, rhs: int) -> dict[str, Any]:
        return {"name": name, "lhs": lhs, "rhs": rhs, "holds": lhs == rhs}

    tweet_drops = sum(v for k, v in counts["dropped"].items() if "." not in k)
    checks = [
        identity(
            "lines_read == tweets + delete_notices + other_messages + dead_letter_lines",
            counts["lines_read"],
            counts["tweets"]
            + counts["delete_notices"]
            + counts["other_messages"]
            + counts["dead_letter_lines"],
        ),
        identity(
            "members_listed == members_read", counts["members_listed"], counts["members_read"]
        ),
        identity(
            "dead_letter == rows in dead_letter/",
            counts["dead_letter"],
            file_rows.get("dead_letter", 0),
        ),
        identity(
            "tweets_distinct == tweets_eligible + tweet-level drops",
            counts["tweets_distinct"],
            counts["tweets_eligible"] + tweet_drops,
        ),
    ]
    for dataset in DATASETS:
        ds = datasets[dataset]
        k = CHILDREN_PER_PAIR[dataset]
        checks.append(
            identity(
                f"{dataset}: candidates == {k} * rows + dropped",
                ds["candidates"],
                k * ds["rows"] + sum(ds["dropped"].values()),
            )
        )
    for dataset, ds in datasets.items():
        checks.append(
            identity(
                f"{dataset}: rows == rows in pairs/{dataset}/",
                ds["rows"],
                file_rows.get(f"pairs/{dataset}", 0),
            )
        )
    for bench, b in (benchmarks or {}).items():
        checks.append(
            identity(
                f"{bench}: rows == rows in benchmarks/{bench}.parquet",
                b["rows"],
                file_rows.get(f"benchmarks/{bench}", 0),
            )
        )
    return checks


def build(
    config: TwitterConfig,
    beam_args: list[str] | None = None,
    *,
    finish_draft: Callable[[str], object] | None = None,
) -> dict[str, Any]:
    """Run the whole build and publish the release at ``config.out``; returns the manifest.

    The build holds the release's lock, writes the new release into a draft and swaps it in
    once its manifest (and ``finish_draft``'s files) are written.

    Args:
        config: validated configuration.
        beam_args: Beam pipeline flags (``--runner``, …); the in-process runner by default.
        finish_draft: called with the draft folder of a local release after its manifest is
            written and before it is published (the dataset card is written there).

    Raises:
        InputError: an input is missing or not a regular file, or no archive could be read.
        ReleaseError: ``config.out`` cannot take a release, or another build holds it.
    """
    beam_args = list(beam_args or [])
    store = open_store(config.out, beam_args)
    uris = expand_inputs(config.inputs, exclude=[config.out, *sidecars(config.out)])
    with store.locked():
        root = store.begin(rebuilt=REBUILT)
        try:
            manifest = _build_into(dataclasses.replace(config, out=root), beam_args, uris)
        except NothingRead:
            store.abandon()
            raise
        if finish_draft is not None and "://" not in root:
            finish_draft(root)
        store.commit()
    return manifest


def _build_into(config: TwitterConfig, beam_args: list[str], uris: list[str]) -> dict[str, Any]:
    """The build, with ``config.out`` the folder it writes (the draft of a local release)."""
    log.info("%d input archives", len(uris))
    progress.stage("hash inputs")
    archives = [describe_input(uri, config) for uri in uris]
    folders = {a.uri: join(config.out, "tweets", a.extract) for a in archives}
    todo = [a for a in archives if not _extract_is_complete(folders[a.uri])]
    log.info("extracting %d archives, reusing %d", len(todo), len(archives) - len(todo))
    progress.archives_planned(len(todo))
    progress.stage("extract")
    for batch in _extract_batches(todo, beam_args):
        run_extract(batch, config, beam_args)

    extract_files: list[dict[str, Any]] = []
    extract_counts = []
    for a in archives:
        extract_files += _extract_files(config.out, a)
        extract_counts.append(read_json(join(folders[a.uri], COUNTS)))
    _check_something_read(archives, extract_counts, extract_files)
    tweet_files = [i["path"] for i in extract_files if _schema_of(i["path"]) == TWEET]
    delete_files = [i["path"] for i in extract_files if _schema_of(i["path"]) == DELETE]

    staging = join(config.out, "_staging")
    delete_tree(staging)
    progress.stage("pairs")
    run_pairs(tweet_files, delete_files, config, beam_args, staging)
    pair_counts = (
        read_json(join(staging, COUNTS)) if FileSystems.exists(join(staging, COUNTS)) else {}
    )
    progress.stage("publish")
    pair_files = _publish(config, staging)
    delete_tree(staging)

    manifest = _manifest(
        config, beam_args, archives, extract_files, extract_counts, pair_counts, pair_files
    )
    progress.stage("reference scores")
    manifest["reference_scores"] = _reference_scores(config)
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
    validate_json(MANIFEST, manifest)
    write_json(join(config.out, "manifest.json"), manifest)
    return manifest


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

    folder = f"/dead_letter/{archive.extract}/"
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
    if "://" in config.out:
        return {"model": "tfidf", "skipped": "computed only for local releases"}
    from corpusforge.eval.lexical import TfidfEncoder
    from corpusforge.eval.ranking import evaluate_ranking

    report = evaluate_ranking(join(config.out, "benchmarks"), TfidfEncoder())
    for bench in report["benchmarks"].values():
        bench.pop("path", None)  # the manifest holds no absolute paths
    return {"model": "tfidf", **report}


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
    beam_args: list[str],
    archives: list[InputArchive],
    extract_files: list[dict[str, Any]],
    extract_counts: list[dict[str, int]],
    pair_counts: dict[str, int],
    pair_files: list[dict[str, Any]],
) -> dict[str, Any]:
    files = [
        {
            "path": relative(i["path"], config.out),
            "rows": i["rows"],
            "bytes": i["bytes"],
            "sha256": i["sha256"],
            "schema": str(_schema_of(i["path"])),
        }
        for i in sorted(extract_files + pair_files, key=lambda i: i["path"])
    ]
    counts, datasets, benchmarks = assemble_counts(extract_counts, pair_counts)
    file_rows: Counter[str] = Counter()
    for f in files:
        file_rows[f["path"].rsplit("/", 1)[0]] += f["rows"]
        file_rows[f["path"].removesuffix(".parquet")] += f["rows"]
        if f["path"].startswith("dead_letter/"):
            file_rows["dead_letter"] += f["rows"]
    for dataset, ds in datasets.items():
        ds["files"] = [f["path"] for f in files if f["path"].startswith(f"pairs/{dataset}/")]
    for bench, b in benchmarks.items():
        b["requested"] = config.benchmarks.queries
        b["file"] = f"benchmarks/{bench}.parquet"
        b["shortfall"] = max(0, config.benchmarks.queries - b["rows"])
    active = benchmarks if config.benchmarks.queries > 0 else {}
    identities = accounting_identities(counts, datasets, file_rows, active)
    options = PipelineOptions(beam_args).get_all_options(drop_default=True)
    return {
        "manifest_version": MANIFEST.version,
        "kind": "twitter-pairs",
        "corpusforge_version": corpusforge.__version__,
        "software": software(),
        "schemas": {ref.name: str(ref) for ref in (TWEET, DELETE, DEAD_LETTER, PAIR, BENCHMARK)},
        "config": release_config(config.to_json()),
        "runner": str(options.get("runner") or "FnApiRunner"),
        "inputs": [a.to_json() for a in archives],
        "files": files,
        "datasets": datasets,
        "benchmarks": active,
        "counts": counts,
        "accounting": {"balanced": all(i["holds"] for i in identities), "identities": identities},
    }

